package agree

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// node is one entry of a guest root: a file (data), a directory or a
// symlink (data is the target). A non-zero age sets the file's mtime
// that far before the test started.
type node struct {
	path string
	kind byte // 'f', 'd', 'l'
	data string
	mode os.FileMode
	age  time.Duration
}

func file(p, data string) node { return node{path: p, kind: 'f', data: data, mode: 0o644} }
func fileMode(p, data string, m os.FileMode) node {
	return node{path: p, kind: 'f', data: data, mode: m}
}
func dir(p string) node                   { return node{path: p, kind: 'd', mode: 0o755} }
func link(p, target string) node          { return node{path: p, kind: 'l', data: target} }
func aged(n node, age time.Duration) node { n.age = age; return n }

// start is the reference time of file ages, fixed once per run.
var start = time.Now()

// buildRoot creates nodes under root, parents first; a later node for the
// same path replaces an earlier one.
func buildRoot(t testing.TB, root string, nodes []node) {
	t.Helper()
	last := map[string]int{}
	for i, n := range nodes {
		last[n.path] = i
	}
	for i, n := range nodes {
		if last[n.path] != i {
			continue
		}
		hp := filepath.Join(root, n.path)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch n.kind {
		case 'f':
			if err = os.WriteFile(hp, []byte(n.data), 0o600); err == nil {
				err = os.Chmod(hp, n.mode)
			}
			if err == nil && n.age != 0 {
				err = os.Chtimes(hp, start.Add(-n.age), start.Add(-n.age))
			}
		case 'd':
			err = os.MkdirAll(hp, n.mode)
		case 'l':
			err = os.Symlink(n.data, hp)
		default:
			err = fmt.Errorf("bad node kind %q", n.kind)
		}
		if err != nil {
			t.Fatalf("build %s: %v", n.path, err)
		}
	}
}

// The identities the fixtures use.
const (
	machineID      = "4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b"
	otherMachineID = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
	instanceID     = "i-0123456789abcdef"
	oldInstanceID  = "i-0fedcba987654321"
)

// hostKey is one ed25519 host key in OpenSSH form, derived from a fixed
// seed so that its fingerprint is the same on every run.
type hostKey struct{ private, public, fingerprint string }

var testKey = sync.OnceValue(func() hostKey {
	seed := sha256.Sum256([]byte("guestcheck agreement test host key"))
	priv := ed25519.NewKeyFromSeed(seed[:])
	blk, err := ssh.MarshalPrivateKey(priv, "root@template")
	if err != nil {
		panic(err)
	}
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		panic(err)
	}
	return hostKey{private: string(pem.EncodeToMemory(blk)), public: string(ssh.MarshalAuthorizedKey(pub)),
		fingerprint: ssh.FingerprintSHA256(pub)}
})

// templateRecord is sealprep's record (internal/fact/identity/sealrecord's format,
// written out here so the test reads it as guestcheck does: as a file)
// of a template with the test's host key and the given machine ID.
func templateRecord(id string) string {
	h := sha256.Sum256([]byte("sealprep-machine-id:" + strings.ToLower(id)))
	return fmt.Sprintf(`{
  "schema": 1,
  "sealed_at": "2026-11-30T12:00:00Z",
  "sealprep_version": "v0.9.0",
  "ssh_host_keys": [
    {"file": "/etc/ssh/ssh_host_ed25519_key", "type": "ssh-ed25519", "fingerprint": %q}
  ],
  "ssh_host_keys_removed": true,
  "machine_id_sha256": %q,
  "machine_id_cleared": true
}
`, testKey().fingerprint, hex.EncodeToString(h[:]))
}
