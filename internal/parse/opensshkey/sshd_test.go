package opensshkey

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

var errStop = errors.New("host key verified; stop here")

// sshdSigns starts Debian's sshd on loopback with host key file b and
// reports whether it starts and whether its host key signature in the key
// exchange verifies (x/crypto's client calls HostKeyCallback only after
// verifying it).
func sshdSigns(t *testing.T, sshd, dir string, b []byte) (started, verified bool) {
	t.Helper()
	hk := filepath.Join(dir, "hostkey")
	if err := os.WriteFile(hk, b, 0o600); err != nil {
		t.Fatal(err)
	}
	sd := testenv.StartSshd(t, sshd, dir, hk)
	defer sd.Stop()
	addr := sd.Addr.String()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var conn net.Conn
	for conn == nil {
		select {
		case <-sd.Exited:
			t.Logf("sshd exited: %s", bytes.TrimSpace(sd.Stderr.Bytes()))
			return false, false
		case <-ctx.Done():
			t.Fatalf("sshd on %s did not accept within 10s", addr)
		case <-time.After(20 * time.Millisecond):
		}
		conn, _ = net.DialTimeout("tcp", addr, time.Second)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	_, _, _, err := ssh.NewClientConn(conn, addr, &ssh.ClientConfig{
		User: "nobody",
		HostKeyCallback: func(string, net.Addr, ssh.PublicKey) error {
			verified = true
			return errStop
		},
	})
	if !verified {
		t.Logf("handshake: %v", err)
	}
	return true, verified
}

// TestSshdSigns is why Parse is stricter than ssh-keygen -y where it is:
// sshd loads a key whose ed25519 seed, ECDSA scalar or RSA d is damaged,
// but its host key signatures then fail to verify and every client
// refuses the server. Parse refuses exactly those, and accepts the
// undamaged key sshd signs with. A damaged RSA prime is refused too
// (n != p*q); what sshd does with one is logged, not asserted.
func TestSshdSigns(t *testing.T) {
	testenv.RequireRoot(t, "sshd needs root to start")
	sshd := testenv.Tool(t, "sshd", "openssh-server")
	testenv.SshdPrivsepDir(t)
	dir := t.TempDir()
	ks := testKeys(t)
	bump := func(f []byte, by int64) []byte {
		return mp(new(big.Int).Add(new(big.Int).SetBytes(f), big.NewInt(by)))
	}
	for _, c := range []struct {
		name, key string
		mut       func(p *parts)
		assert    bool
	}{
		{"ed25519 good", "ed25519", func(*parts) {}, true},
		{"ed25519 seed damaged", "ed25519", func(p *parts) {
			sk := append([]byte(nil), p.fields[1]...)
			sk[5] ^= 0x10
			p.fields[1] = sk
		}, true},
		{"ecdsa good", "p256", func(*parts) {}, true},
		{"ecdsa scalar damaged", "p256", func(p *parts) { p.fields[2] = bump(p.fields[2], 1) }, true},
		{"rsa good", "rsa", func(*parts) {}, true},
		{"rsa d damaged", "rsa", func(p *parts) { p.fields[2] = bump(p.fields[2], 2) }, true},
		{"rsa p damaged", "rsa", func(p *parts) { p.fields[4] = bump(p.fields[4], 2) }, false},
	} {
		p := partsOf(t, ks[c.key])
		c.mut(&p)
		b := p.file()
		started, verified := sshdSigns(t, sshd, dir, b)
		_, err := Parse(b)
		t.Logf("%s: sshd started %v, signature verifies %v; Parse: %v", c.name, started, verified, err)
		if c.assert && (err == nil) != (started && verified) {
			t.Errorf("%s: Parse error %v, but sshd started %v and its signature verifies: %v", c.name, err, started, verified)
		}
	}
}
