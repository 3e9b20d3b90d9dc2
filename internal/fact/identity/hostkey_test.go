package identity

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	iofs "io/fs"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestReadHostKey: both readers give the same fingerprints; the private
// key wins, the .pub stands in when the key does not parse.
func TestReadHostKey(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "root@template")
	if err != nil {
		t.Fatal(err)
	}
	spk, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	fp := ssh.FingerprintSHA256(spk)
	authorized := string(ssh.MarshalAuthorizedKey(spk))
	const key = "/etc/ssh/ssh_host_ed25519_key"
	dir := testenv.WriteTree(t, map[string]string{
		key: string(pem.EncodeToMemory(blk)), key + ".pub": authorized,
		"/etc/ssh/ssh_host_broken_key": "not a key\n", "/etc/ssh/ssh_host_broken_key.pub": authorized,
		"/etc/ssh/ssh_host_lone_key": string(pem.EncodeToMemory(blk)),
	})
	for name, r := range readers(t, dir) {
		k := ReadHostKey(r, key)
		if k.Err != nil || !k.Described || k.Fingerprint != fp || k.Type != ssh.KeyAlgoED25519 || k.PubFingerprint != fp || !k.PubDescribed {
			t.Errorf("%s: %+v", name, k)
		}
		if typ, got, ok := ReadHostKey(r, "/etc/ssh/ssh_host_broken_key").Identity(); !ok || got != fp || typ != ssh.KeyAlgoED25519 {
			t.Errorf("%s: a broken key with a good .pub: %q %q %v", name, typ, got, ok)
		}
		lone := ReadHostKey(r, "/etc/ssh/ssh_host_lone_key")
		if lone.Fingerprint != fp || !errors.Is(lone.PubErr, iofs.ErrNotExist) || lone.PubDescribed {
			t.Errorf("%s: a key without .pub: %+v", name, lone)
		}
		if missing := ReadHostKey(r, "/etc/ssh/ssh_host_rsa_key"); !errors.Is(missing.Err, iofs.ErrNotExist) || missing.Described {
			t.Errorf("%s: a missing key: %+v", name, missing)
		}
		if _, _, ok := ReadHostKey(r, "/etc/ssh/ssh_host_rsa_key").Identity(); ok {
			t.Errorf("%s: a missing key has an identity", name)
		}
	}
}

// TestReadTemplate: absent, valid and malformed records read the same way
// through both readers.
func TestReadTemplate(t *testing.T) {
	rec := sealrecord.Record{SealedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), SealprepVersion: "test",
		MachineIDHash: sealrecord.HashMachineID(validID), MachineIDCleared: true}
	for _, tc := range []struct {
		name    string
		content *string
		valid   bool
	}{
		{"absent", nil, false},
		{"valid", ptr(string(rec.Marshal())), true},
		{"malformed", ptr("{\"schema\": 99}\n"), false},
	} {
		files := map[string]string{"/etc/hostname": "x\n"}
		if tc.content != nil {
			files[sealrecord.Path] = *tc.content
		}
		for name, r := range readers(t, testenv.WriteTree(t, files)) {
			got := ReadTemplate(r)
			switch {
			case got.Found != (tc.content != nil), got.ReadErr != nil:
				t.Errorf("%s/%s: %+v", tc.name, name, got)
			case tc.valid && (got.Record == nil || got.Record.MachineIDHash != rec.MachineIDHash || got.Err() != nil):
				t.Errorf("%s/%s: %+v", tc.name, name, got)
			case !tc.valid && tc.content != nil && (got.Record != nil || got.Err() == nil || !strings.Contains(got.Err().Error(), sealrecord.Path)):
				t.Errorf("%s/%s: %+v", tc.name, name, got)
			case tc.content == nil && (got.Record != nil || got.Err() != nil):
				t.Errorf("%s/%s: %+v", tc.name, name, got)
			}
		}
	}
}

func ptr(s string) *string { return &s }
