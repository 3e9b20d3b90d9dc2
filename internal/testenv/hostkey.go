package testenv

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"testing"

	"golang.org/x/crypto/ssh"
)

// HostKeyPair makes a fresh ed25519 key pair: the private key in OpenSSH
// form with comment, the public one in authorized_keys form, and its
// SHA256 fingerprint.
func HostKeyPair(t testing.TB, comment string) (priv, pub, fp string) {
	t.Helper()
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(sk, comment)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(blk)), string(ssh.MarshalAuthorizedKey(sp)), ssh.FingerprintSHA256(sp)
}
