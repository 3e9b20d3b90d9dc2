package ssh

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/opensshkey"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// signerPublic is how readHostKey read a private key before opensshkey:
// build the key (Go validates RSA keys with exponentiations) and take
// the signer's public half. The tests hold opensshkey.PublicKey to it.
func signerPublic(b []byte) (ssh.PublicKey, error) {
	raw, err := ssh.ParseRawPrivateKey(b)
	if err != nil {
		return nil, err
	}
	s, err := ssh.NewSignerFromKey(raw)
	if err != nil {
		return nil, err
	}
	return s.PublicKey(), nil
}

func pemOf(t testing.TB, typ string, der []byte, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func opensshOf(t testing.TB, k crypto.PrivateKey) []byte {
	t.Helper()
	blk, err := ssh.MarshalPrivateKey(k, "root@template")
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(blk)
}

// TestHostKeyPublicFormats: every format sshd loads gives the type and
// fingerprint the signer gave; OpenSSH keys through opensshkey, the PEM
// and PKCS#8 ones through ssh.ParseRawPrivateKey.
func TestHostKeyPublicFormats(t *testing.T) {
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	ec, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, ecErr := x509.MarshalECPrivateKey(ec)
	p8, p8Err := x509.MarshalPKCS8PrivateKey(rk)
	for name, b := range map[string][]byte{
		"openssh ed25519": opensshOf(t, ed),
		"openssh ecdsa":   opensshOf(t, ec),
		"openssh rsa":     opensshOf(t, rk),
		"pem rsa":         pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)}),
		"pem ec":          pemOf(t, "EC PRIVATE KEY", ecDER, ecErr),
		"pkcs8 rsa":       pemOf(t, "PRIVATE KEY", p8, p8Err),
	} {
		want, err := signerPublic(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := opensshkey.PublicKey(b)
		if err != nil || got.Type() != want.Type() || ssh.FingerprintSHA256(got) != ssh.FingerprintSHA256(want) {
			t.Errorf("%s: %v %v, want %s %s", name, got, err, want.Type(), ssh.FingerprintSHA256(want))
		}
	}
}

// TestHostKeyEncrypted: a passphrase-protected host key keeps the verdict
// it had: the same error as ssh.ParseRawPrivateKey's, judged invalid.
func TestHostKeyEncrypted(t *testing.T) {
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	blk, err := ssh.MarshalPrivateKeyWithPassphrase(ed, "c", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	dir := tree(t, map[string]string{"/etc/ssh/ssh_host_ed25519_key": string(pem.EncodeToMemory(blk))})
	k := readHostKey(openRoot(t, dir), "/etc/ssh/ssh_host_ed25519_key", "default", nil)
	_, old := signerPublic(pem.EncodeToMemory(blk))
	var pm *ssh.PassphraseMissingError
	if !errors.As(k.ParseErr, &pm) || old == nil || k.ParseErr.Error() != old.Error() {
		t.Fatalf("ParseErr = %v, ssh.ParseRawPrivateKey said %v", k.ParseErr, old)
	}
	k.UID, k.Mode = 0, 0o600
	out := JudgeHostKeys(Facts{HostKeys: []HostKey{k}, Display: func(s string) string { return s }})
	validate(t, out)
	f := want(t, out, CodeHostKeyInvalid, runner.Fail, "does not parse as an unencrypted private key")
	if f.Detail["error"] != "ssh: this private key is passphrase protected" {
		t.Errorf("error detail %q", f.Detail["error"])
	}
}

// TestHostKeyArmourSshdRefuses: OpenSSH loads an OpenSSH-format key only
// when the file starts with its BEGIN line and uses LF line ends
// (ssh-keygen -y refuses the others; opensshkey's TestKeygenArmour holds
// that). The signer path accepted them through pem.Decode and passed a
// key sshd drops.
func TestHostKeyArmourSshdRefuses(t *testing.T) {
	priv, pub := keyPair(t)
	for name, body := range map[string]string{
		"crlf":         string(bytes.ReplaceAll([]byte(priv), []byte("\n"), []byte("\r\n"))),
		"leading text": "# host key\n" + priv,
	} {
		dir := tree(t, map[string]string{"/etc/ssh/ssh_host_ed25519_key": body, "/etc/ssh/ssh_host_ed25519_key.pub": pub})
		if err := os.Chmod(filepath.Join(dir, "/etc/ssh/ssh_host_ed25519_key"), 0o600); err != nil {
			t.Fatal(err)
		}
		k := readHostKey(openRoot(t, dir), "/etc/ssh/ssh_host_ed25519_key", "default", nil)
		k.UID, k.PubUID = 0, 0
		out := JudgeHostKeys(Facts{HostKeys: []HostKey{k}, Display: func(s string) string { return s }})
		validate(t, out)
		want(t, out, CodeHostKeyInvalid, runner.Fail, "ssh_host_ed25519_key")
		if len(find(out, CodeHostKeyOK)) != 0 {
			t.Errorf("%s: judged usable:\n%s", name, dumpFindings(out))
		}
	}
}

// BenchmarkHostKey reads host keys the old way (signer: Go builds and,
// for RSA, validates the key) and the new (opensshkey), and a 3072-bit
// RSA key (ssh-keygen's default) through the whole readHostKey with its
// .pub.
func BenchmarkHostKey(b *testing.B) {
	rk, err := rsa.GenerateKey(rand.Reader, 3072)
	if err != nil {
		b.Fatal(err)
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	for _, k := range []struct {
		name string
		key  crypto.PrivateKey
	}{{"rsa3072", rk}, {"ecdsa256", ec}, {"ed25519", ed}} {
		key := opensshOf(b, k.key)
		b.Run(k.name+"/signer", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := signerPublic(key); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(k.name+"/opensshkey", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := opensshkey.PublicKey(key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	sp, _ := ssh.NewPublicKey(rk.Public())
	dir := b.TempDir()
	p := filepath.Join(dir, "ssh_host_rsa_key")
	if err := os.WriteFile(p, opensshOf(b, rk), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p+".pub", ssh.MarshalAuthorizedKey(sp), 0o644); err != nil {
		b.Fatal(err)
	}
	r, err := fs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	b.Run("rsa3072/readHostKey", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if k := readHostKey(r, "/ssh_host_rsa_key", "default", nil); k.ParseErr != nil || k.PubFingerprint != k.Fingerprint {
				b.Fatalf("%+v", k)
			}
		}
	})
}
