package opensshkey

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// keygenY runs `ssh-keygen -y -f` on b: OpenSSH's own loader (the one
// sshd uses for host keys) with an empty passphrase. It returns the
// public key line's "type base64" and whether the key loaded.
func keygenY(t *testing.T, keygen, dir string, b []byte) (string, bool) {
	t.Helper()
	p := filepath.Join(dir, "key")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(keygen, "-y", "-P", "", "-f", p)
	cmd.Stdin = nil
	out, err := cmd.Output()
	if err != nil {
		return "", false
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		t.Fatalf("ssh-keygen -y printed %q", out)
	}
	return f[0] + " " + f[1], true
}

func authorized(pk ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk)))
}

// corruption is one damaged variant of a key file and where the damage is.
type corruption struct {
	name string
	b    []byte
	// privAt is the offset of the damage within the decoded private
	// section, -1 when it is elsewhere.
	privAt int
}

// corruptions damages an armoured key: truncated at many offsets, the
// check-int flipped, and one byte flipped at offsets through the decoded
// container (re-armoured, so the damage is in the key, not the base64).
func corruptions(t *testing.T, file []byte) []corruption {
	t.Helper()
	var out []corruption
	step := len(file)/60 + 1
	for n := 0; n < len(file); n += step {
		out = append(out, corruption{fmt.Sprintf("truncated at %d", n), file[:n], -1})
	}
	out = append(out, corruption{"last byte dropped", file[:len(file)-1], -1})
	raw, err := unarmour(file[len(markBegin):])
	if err != nil {
		t.Fatal(err)
	}
	// The private section's offset: the header's fields, read again.
	r := reader{b: raw[len(authMagic):]}
	r.str("")
	r.str("")
	r.str("")
	r.u32("")
	r.str("")
	r.u32("")
	if r.err != nil {
		t.Fatal(r.err)
	}
	privStart := len(raw) - len(r.b)
	flip := func(name string, at int, x byte) {
		m := append([]byte(nil), raw...)
		m[at] ^= x
		pa := -1
		if at >= privStart {
			pa = at - privStart
		}
		out = append(out, corruption{name, armour(m), pa})
	}
	flip("check-int 1", privStart, 0x01)
	flip("check-int 2", privStart+7, 0x80)
	step = (len(raw)-privStart)/80 + 1
	for at := privStart + 8; at < len(raw); at += step {
		flip(fmt.Sprintf("private byte %d", at-privStart), at, 0x04)
	}
	for at := 0; at < privStart; at += privStart/30 + 1 {
		flip(fmt.Sprintf("header byte %d", at), at, 0x04)
	}
	return out
}

// stricter reports whether private-section offset at lies where Parse
// is deliberately stricter than OpenSSH's loader: RSA's d, iqmp, p and q
// (consistency only arithmetic shows, see checkRSA), the ECDSA scalar
// (checked against its point, see checkECDSA) and the second half of an
// ed25519 private key (the public key that signing hashes, see
// checkEd25519).
func stricter(t *testing.T, file []byte, at int) bool {
	t.Helper()
	raw, err := unarmour(file[len(markBegin):])
	if err != nil {
		t.Fatal(err)
	}
	r := reader{b: raw[len(authMagic):]}
	for i := 0; i < 3; i++ {
		r.str("")
	}
	r.u32("")
	r.str("")
	priv := r.str("")
	pr := reader{b: priv}
	pr.u32("")
	pr.u32("")
	switch string(pr.str("")) {
	case ssh.KeyAlgoRSA:
		pr.str("")
		pr.str("")
		start := pr.off
		for i := 0; i < 4; i++ {
			pr.str("")
		}
		return at >= start && at < pr.off
	case ssh.KeyAlgoED25519:
		pr.str("")
		start := pr.off + 4
		return at >= start && at < start+ed25519.PrivateKeySize
	case ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521:
		pr.str("")
		pr.str("")
		start := pr.off
		pr.str("")
		return at >= start && at < pr.off
	}
	return false
}

// TestKeygen holds Parse to OpenSSH on keys ssh-keygen generates: the
// same type, fingerprint and public key as `ssh-keygen -l` and `-y`, and
// every corrupted variant ssh-keygen refuses is refused. Variants Parse
// refuses and ssh-keygen loads are allowed only where Parse is stricter
// on purpose (see stricter); any other is an error.
func TestKeygen(t *testing.T) {
	keygen := testenv.Tool(t, "ssh-keygen", "openssh-client")
	dir := t.TempDir()
	for _, spec := range [][]string{
		{"-t", "ed25519"},
		{"-t", "ecdsa", "-b", "256"},
		{"-t", "ecdsa", "-b", "384"},
		{"-t", "ecdsa", "-b", "521"},
		{"-t", "rsa", "-b", "3072"},
	} {
		name := strings.Join(spec, " ")
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, "gen")
			os.Remove(p)
			os.Remove(p + ".pub")
			args := append([]string{"-q", "-N", "", "-C", "root@template", "-f", p}, spec...)
			if out, err := exec.Command(keygen, args...).CombinedOutput(); err != nil {
				t.Fatalf("ssh-keygen %v: %v: %s", args, err, out)
			}
			file, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			k, err := Parse(file)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			l, err := exec.Command(keygen, "-l", "-E", "sha256", "-f", p).Output()
			if err != nil {
				t.Fatal(err)
			}
			// "3072 SHA256:... root@template (RSA)"
			lf := strings.Fields(string(l))
			if len(lf) < 2 || lf[1] != ssh.FingerprintSHA256(k.Public) {
				t.Errorf("fingerprint %s, ssh-keygen -l says %q", ssh.FingerprintSHA256(k.Public), l)
			}
			y, ok := keygenY(t, keygen, dir, file)
			if !ok || y != authorized(k.Public) {
				t.Errorf("public key %q, ssh-keygen -y says %q", authorized(k.Public), y)
			}
			if !strings.HasPrefix(y, k.Public.Type()+" ") {
				t.Errorf("type %s, ssh-keygen -y says %q", k.Public.Type(), y)
			}
			var both, neither, onlyUs int
			for _, c := range corruptions(t, file) {
				ky, kok := keygenY(t, keygen, dir, c.b)
				ck, err := Parse(c.b)
				switch {
				case kok && err == nil:
					both++
					if ky != authorized(ck.Public) {
						t.Errorf("%s: Parse reads %q, ssh-keygen -y %q", c.name, authorized(ck.Public), ky)
					}
				case !kok && err != nil:
					neither++
				case !kok:
					t.Errorf("%s: ssh-keygen -y refuses it, Parse accepts %s", c.name, ssh.FingerprintSHA256(ck.Public))
				default:
					onlyUs++
					if c.privAt < 0 || !stricter(t, file, c.privAt) {
						t.Errorf("%s: Parse refuses (%v) a key ssh-keygen -y loads, where it means to agree", c.name, err)
					}
				}
			}
			t.Logf("variants: %d loaded by both, %d refused by both, %d refused by Parse only (where it is stricter on purpose)", both, neither, onlyUs)
			if neither == 0 {
				t.Error("no corrupted variant was refused: the corruptions do not corrupt")
			}
		})
	}
}

// TestKeygenArmour: the armour variants TestParseArmour refuses are the
// ones ssh-keygen refuses.
func TestKeygenArmour(t *testing.T) {
	keygen := testenv.Tool(t, "ssh-keygen", "openssh-client")
	dir := t.TempDir()
	good := partsOf(t, testKeys(t)["ed25519"]).file()
	for name, b := range map[string][]byte{
		"good":             good,
		"leading newline":  append([]byte("\n"), good...),
		"crlf":             bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n")),
		"no final newline": good[:len(good)-1],
		"space in body":    bytes.Replace(good, []byte("\n"), []byte("\n "), 2),
		"trailing text":    append(append([]byte(nil), good...), "trailing text\n"...),
	} {
		_, kok := keygenY(t, keygen, dir, b)
		_, err := Parse(b)
		if kok != (err == nil) {
			t.Errorf("%s: ssh-keygen -y loads it: %v; Parse: %v", name, kok, err)
		}
	}
}

// TestKeygenEncrypted: passphrase-protected keys in each cipher
// ssh-keygen offers for them (the AEAD ones append a tag after the
// private section) give a PassphraseMissingError carrying the public key
// `ssh-keygen -y -P` prints, as ssh.ParseRawPrivateKey does.
func TestKeygenEncrypted(t *testing.T) {
	keygen := testenv.Tool(t, "ssh-keygen", "openssh-client")
	dir := t.TempDir()
	for _, cipher := range []string{"aes256-ctr", "aes128-cbc", "chacha20-poly1305@openssh.com", "aes256-gcm@openssh.com"} {
		p := filepath.Join(dir, "enc")
		os.Remove(p)
		os.Remove(p + ".pub")
		if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "pw", "-Z", cipher, "-f", p).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", cipher, err, out)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		y, err := exec.Command(keygen, "-y", "-P", "pw", "-f", p).Output()
		if err != nil {
			t.Fatalf("%s: ssh-keygen -y: %v", cipher, err)
		}
		k, err := Parse(b)
		var pm *ssh.PassphraseMissingError
		if !errors.As(err, &pm) || k.Cipher != cipher {
			t.Errorf("%s: Parse = %+v, %v; want a PassphraseMissingError", cipher, k, err)
			continue
		}
		if got := authorized(pm.PublicKey); !strings.HasPrefix(string(y), got+" ") {
			t.Errorf("%s: public key %q, ssh-keygen -y -P says %q", cipher, got, y)
		}
		if _, old := ssh.ParseRawPrivateKey(b); old == nil || old.Error() != err.Error() {
			t.Errorf("%s: error %q, ssh.ParseRawPrivateKey's %v", cipher, err, old)
		}
	}
}
