package opensshkey

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
)

// parts is an unencrypted container taken apart, so that a test can
// change one field and put it back together.
type parts struct {
	cipher, kdf, kdfOpts string
	nkeys                uint32
	pub                  []byte
	check1, check2       uint32
	typ                  string
	fields               [][]byte // the private key's fields, each a string or mpint body
	comment              string
	pad                  []byte // nil: the correct padding
	padFlip              int    // flips padding byte padFlip (from 1)
	privCut              int    // drops this many bytes from the private section's end
	trailing             []byte // after the private section
}

func putString(b []byte, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func mp(n *big.Int) []byte {
	b := n.Bytes()
	if len(b) > 0 && b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return b
}

func (p parts) raw() []byte {
	var priv []byte
	priv = binary.BigEndian.AppendUint32(priv, p.check1)
	priv = binary.BigEndian.AppendUint32(priv, p.check2)
	priv = putString(priv, []byte(p.typ))
	for _, f := range p.fields {
		priv = putString(priv, f)
	}
	priv = putString(priv, []byte(p.comment))
	body := len(priv)
	if p.pad == nil {
		for i := 1; len(priv)%blockSize != 0; i++ {
			priv = append(priv, byte(i))
		}
	} else {
		priv = append(priv, p.pad...)
	}
	if p.padFlip > 0 {
		priv[body+p.padFlip-1] ^= 0xff
	}
	priv = priv[:len(priv)-p.privCut]
	b := []byte(authMagic)
	b = putString(b, []byte(p.cipher))
	b = putString(b, []byte(p.kdf))
	b = putString(b, []byte(p.kdfOpts))
	b = binary.BigEndian.AppendUint32(b, p.nkeys)
	b = putString(b, p.pub)
	b = putString(b, priv)
	return append(b, p.trailing...)
}

// armour wraps raw as ssh-keygen does: 70 columns, LF.
func armour(raw []byte) []byte {
	enc := base64.StdEncoding.EncodeToString(raw)
	var b strings.Builder
	b.WriteString(markBegin)
	for len(enc) > 70 {
		b.WriteString(enc[:70] + "\n")
		enc = enc[70:]
	}
	b.WriteString(enc + "\n" + markEnd)
	return []byte(b.String())
}

func (p parts) file() []byte { return armour(p.raw()) }

// keys are generated once: RSA generation is slow.
var (
	keysOnce sync.Once
	keys     map[string]crypto.Signer
)

func testKeys(t testing.TB) map[string]crypto.Signer {
	keysOnce.Do(func() {
		keys = map[string]crypto.Signer{}
		_, ed, _ := ed25519.GenerateKey(rand.Reader)
		keys["ed25519"] = ed
		for name, c := range map[string]elliptic.Curve{"p256": elliptic.P256(), "p384": elliptic.P384(), "p521": elliptic.P521()} {
			k, err := ecdsa.GenerateKey(c, rand.Reader)
			if err != nil {
				panic(err)
			}
			keys[name] = k
		}
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keys["rsa"] = k
	})
	return keys
}

// partsOf takes a Go key apart the way OpenSSH's
// sshkey_private_serialize lays it out.
func partsOf(t testing.TB, k crypto.Signer) parts {
	t.Helper()
	pub, err := ssh.NewPublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	p := parts{cipher: "none", kdf: "none", nkeys: 1, pub: pub.Marshal(), check1: 0x01020304, check2: 0x01020304, typ: pub.Type(), comment: "root@template"}
	switch k := k.(type) {
	case ed25519.PrivateKey:
		p.fields = [][]byte{k.Public().(ed25519.PublicKey), k}
	case *ecdsa.PrivateKey:
		pt, err := k.PublicKey.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		name := map[int]string{256: "nistp256", 384: "nistp384", 521: "nistp521"}[k.Curve.Params().BitSize]
		d, err := k.Bytes() // the scalar, fixed-length big-endian
		if err != nil {
			t.Fatal(err)
		}
		p.fields = [][]byte{[]byte(name), pt, mp(new(big.Int).SetBytes(d))}
	case *rsa.PrivateKey:
		p.fields = [][]byte{mp(k.N), mp(big.NewInt(int64(k.E))), mp(k.D), mp(k.Precomputed.Qinv), mp(k.Primes[0]), mp(k.Primes[1])}
	}
	return p
}

func TestParseValid(t *testing.T) {
	for name, k := range testKeys(t) {
		want, _ := ssh.NewPublicKey(k.Public())
		// Keys as x/crypto writes them, and as the test's own encoder does.
		blk, err := ssh.MarshalPrivateKey(k, "c")
		if err != nil {
			t.Fatal(err)
		}
		for how, b := range map[string][]byte{"x/crypto": pem.EncodeToMemory(blk), "parts": partsOf(t, k).file()} {
			got, err := Parse(b)
			if err != nil {
				t.Errorf("%s (%s): %v", name, how, err)
				continue
			}
			if !bytes.Equal(got.Public.Marshal(), want.Marshal()) || got.Cipher != "none" || got.KDF != "none" {
				t.Errorf("%s (%s): got %s %s/%s", name, how, ssh.FingerprintSHA256(got.Public), got.Cipher, got.KDF)
			}
		}
	}
}

func TestParseEncrypted(t *testing.T) {
	k := testKeys(t)["ed25519"]
	blk, err := ssh.MarshalPrivateKeyWithPassphrase(k, "c", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	b := pem.EncodeToMemory(blk)
	got, err := Parse(b)
	var pm *ssh.PassphraseMissingError
	if !errors.As(err, &pm) || pm.PublicKey == nil || got.Cipher == "none" {
		t.Fatalf("Parse = %+v, %v; want a PassphraseMissingError", got, err)
	}
	// The verdict the check had from ssh.ParseRawPrivateKey.
	_, old := ssh.ParseRawPrivateKey(b)
	if old == nil || old.Error() != err.Error() {
		t.Errorf("error %q, ssh.ParseRawPrivateKey's %v", err, old)
	}
	want, _ := ssh.NewPublicKey(k.Public())
	if !bytes.Equal(pm.PublicKey.Marshal(), want.Marshal()) || !bytes.Equal(got.Public.Marshal(), want.Marshal()) {
		t.Error("encrypted key's public half differs")
	}
}

func TestParseNotOpenSSH(t *testing.T) {
	der := x509.MarshalPKCS1PrivateKey(testKeys(t)["rsa"].(*rsa.PrivateKey))
	for name, b := range map[string][]byte{
		"empty":   nil,
		"text":    []byte("not a key\n"),
		"pkcs1":   pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}),
		"pub":     []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHG1XIjDsdEDptAMfK4JtCseWBzhFeg1Yz4tNWbbkkUD c\n"),
		"garbled": []byte("-----BEGIN OPENSSH PRIVATE KEY"),
	} {
		if _, err := Parse(b); !errors.Is(err, ErrNotOpenSSH) {
			t.Errorf("%s: %v, want ErrNotOpenSSH", name, err)
		}
	}
}

func TestParseMalformed(t *testing.T) {
	ks := testKeys(t)
	other, _ := ssh.NewPublicKey(ks["p256"].Public())
	edBlob := partsOf(t, ks["ed25519"]).pub
	type mut func(p *parts)
	cases := []struct {
		name string
		key  string
		mut  mut
		sub  string
	}{
		{"check-ints", "ed25519", func(p *parts) { p.check2 ^= 1 }, "check-ints differ"},
		{"two keys", "ed25519", func(p *parts) { p.nkeys = 2 }, "holds 2 keys"},
		{"type mismatch", "ed25519", func(p *parts) { p.typ = "ssh-rsa" }, "differs from the public key's"},
		{"bad padding", "ed25519", func(p *parts) { p.comment = "c"; p.padFlip = 3 }, "padding byte 3"},
		{"unaligned", "ed25519", func(p *parts) { p.pad = []byte{}; p.comment = "c" }, "not a non-zero multiple of 8"},
		{"nul in comment", "ed25519", func(p *parts) { p.comment = "a\x00b" }, "NUL"},
		{"trailing", "ed25519", func(p *parts) { p.trailing = []byte{0} }, "trailing data"},
		{"bad public blob", "ed25519", func(p *parts) { p.pub = p.pub[:len(p.pub)-1] }, "embedded public key"},
		{"other public key", "p256", func(p *parts) {
			q := partsOf(t, ks["p384"])
			p.pub, p.typ = q.pub, q.typ
		}, "differs from the header's"},
		{"ed25519 pk differs", "ed25519", func(p *parts) { p.fields[0] = bytes.Repeat([]byte{7}, 32) }, "differs from the header's"},
		{"ed25519 sk tail", "ed25519", func(p *parts) {
			sk := append([]byte(nil), p.fields[1]...)
			sk[63] ^= 1
			p.fields[1] = sk
		}, "does not end with its public key"},
		{"ed25519 seed corrupt", "ed25519", func(p *parts) {
			sk := append([]byte(nil), p.fields[1]...)
			sk[0] ^= 1
			p.fields[1] = sk
		}, "seed does not give the public key"},
		{"ed25519 sk short", "ed25519", func(p *parts) { p.fields[1] = p.fields[1][:63] }, "63 bytes"},
		{"ecdsa zero scalar", "p256", func(p *parts) { p.fields[2] = nil }, "out of range"},
		{"ecdsa negative", "p256", func(p *parts) { p.fields[2] = []byte{0x80, 1} }, "negative"},
		{"ecdsa scalar = order", "p256", func(p *parts) { p.fields[2] = mp(elliptic.P256().Params().N) }, "out of range"},
		{"ecdsa scalar corrupt", "p384", func(p *parts) { p.fields[2] = mp(new(big.Int).Add(new(big.Int).SetBytes(p.fields[2]), big.NewInt(1))) }, "does not give the public key"},
		{"rsa n differs", "rsa", func(p *parts) { p.fields[0] = mp(new(big.Int).Add(new(big.Int).SetBytes(p.fields[0]), big.NewInt(2))) }, "differs from the header's"},
		{"rsa e differs", "rsa", func(p *parts) { p.fields[1] = []byte{3} }, "differs from the header's"},
		{"rsa d corrupt", "rsa", func(p *parts) { p.fields[2] = mp(new(big.Int).Add(new(big.Int).SetBytes(p.fields[2]), big.NewInt(2))) }, "private exponent"},
		{"rsa p corrupt", "rsa", func(p *parts) { p.fields[4] = mp(new(big.Int).Add(new(big.Int).SetBytes(p.fields[4]), big.NewInt(2))) }, "do not multiply"},
		{"rsa p zero", "rsa", func(p *parts) { p.fields[4] = nil }, "out of range"},
		{"private section cut", "rsa", func(p *parts) { p.privCut = 8 * 40 }, "truncated or malformed"},
		{"unhandled type", "ed25519", func(p *parts) {
			p.typ = "ssh-dss"
			p.pub = dssBlob()
		}, "unhandled key type ssh-dss"},
		{"encrypted wrong way round", "ed25519", func(p *parts) { p.cipher = "none"; p.kdf = "bcrypt" }, "passphrase"},
		{"sk header", "ed25519", func(p *parts) { p.pub = append(putString(nil, []byte("nonsense")), edBlob...) }, "embedded public key"},
		{"other type", "ed25519", func(p *parts) { p.pub = other.Marshal() }, "differs from the public key's"},
	}
	for _, c := range cases {
		p := partsOf(t, ks[c.key])
		c.mut(&p)
		_, err := Parse(p.file())
		if err == nil || !strings.Contains(err.Error(), c.sub) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.sub)
		}
	}
}

// dssBlob is a syntactically valid ssh-dss public key blob (parameters
// from FIPS 186 sizes, not a real key: nothing verifies with it).
func dssBlob() []byte {
	var b []byte
	b = putString(b, []byte("ssh-dss"))
	p := new(big.Int).Lsh(big.NewInt(1), 1023)
	p.Add(p, big.NewInt(1))
	q := new(big.Int).Lsh(big.NewInt(1), 159)
	q.Add(q, big.NewInt(1))
	for _, n := range []*big.Int{p, q, big.NewInt(2), big.NewInt(4)} {
		b = putString(b, mp(n))
	}
	return b
}

func TestParseArmour(t *testing.T) {
	good := partsOf(t, testKeys(t)["ed25519"]).file()
	if _, err := Parse(good); err != nil {
		t.Fatal(err)
	}
	// ssh-keygen -y refuses the first three (TestKeygen holds truncations
	// to it); text after the END line is ignored by both.
	for name, b := range map[string][]byte{
		"leading newline":  append([]byte("\n"), good...),
		"crlf":             bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n")),
		"no final newline": good[:len(good)-1],
		"no end line":      good[:len(markBegin)+20],
	} {
		_, err := Parse(b)
		if err == nil || errors.Is(err, ErrNotOpenSSH) {
			t.Errorf("%s: %v, want a malformed-key error", name, err)
		} else if strings.Contains(err.Error(), "PRIVATE KEY") {
			t.Errorf("%s: error %q quotes the armour: reports would look as if they carried key material", name, err)
		}
	}
	if _, err := Parse(append(append([]byte(nil), good...), "trailing text\n"...)); err != nil {
		t.Errorf("text after the END line: %v", err)
	}
	// CR and blanks within the body are skipped as OpenSSH skips them.
	mixed := bytes.Replace(good, []byte("\n"), []byte("\r\n"), 2)
	mixed = append([]byte(markBegin), mixed[len(markBegin)+1:]...)
	spaced := bytes.Replace(good, []byte("\n"), []byte("\n \t"), 2)
	for name, b := range map[string][]byte{"CR in the body": mixed, "blanks in the body": spaced} {
		if _, err := Parse(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzParse: no panic; an accepted key's public half parses back to
// itself; whatever Parse accepts x/crypto's full parser (which builds
// the key) accepts too, with the same public key.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"ed25519", "p256", "rsa"} {
		p := partsOf(f, testKeys(f)[name])
		f.Add(p.file())
		p.check2++
		f.Add(p.file())
	}
	blk, _ := ssh.MarshalPrivateKeyWithPassphrase(testKeys(f)["ed25519"], "c", []byte("pw"))
	f.Add(pem.EncodeToMemory(blk))
	f.Add([]byte(markBegin + "b3BlbnNzaC1rZXktdjEA\n" + markEnd))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := Parse(b)
		if err != nil {
			if k.Public == nil && errors.As(err, new(*ssh.PassphraseMissingError)) {
				t.Fatal("passphrase error without the public key")
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		again, err := ssh.ParsePublicKey(k.Public.Marshal())
		if err != nil || !bytes.Equal(again.Marshal(), k.Public.Marshal()) {
			t.Fatalf("public key does not round-trip: %v", err)
		}
		raw, err := ssh.ParseRawPrivateKey(b)
		if err != nil {
			t.Fatalf("Parse accepts a %s key x/crypto refuses: %v", k.Public.Type(), err)
		}
		s, err := ssh.NewSignerFromKey(raw)
		if err != nil || !bytes.Equal(s.PublicKey().Marshal(), k.Public.Marshal()) {
			t.Fatalf("x/crypto's public key differs (%v)", err)
		}
	})
}
