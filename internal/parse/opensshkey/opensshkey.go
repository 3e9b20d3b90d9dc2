// Package opensshkey reads OpenSSH-format private keys ("-----BEGIN
// OPENSSH PRIVATE KEY-----", the "openssh-key-v1" container of OpenSSH's
// PROTOCOL.key) structurally: armour, header, the embedded public key and,
// for an unencrypted key, the private section's framing (check-ints, key
// type, the public part repeated, comment, padding).
//
// It exists so that a host key check need not build a signer: Go's
// crypto/rsa validates an RSA private key with modular exponentiations (a
// FIPS pairwise test) on every parse, which cost most of guestcheck's run
// time. What a check needs from a host key is whether sshd will load it,
// its type and the fingerprint of the public key sshd presents; all three
// are in the container. RSA numbers are checked for consistency with
// multiplications and remainders only (n = p*q, e*d = 1 mod p-1 and q-1),
// never an exponentiation; see checkRSA for what that does and does not
// catch. An ECDSA scalar and an ed25519 seed are checked against their
// public key (one scalar multiplication each).
//
// Parsing is pure: bytes in, a Key or an error out.
package opensshkey

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"

	"golang.org/x/crypto/ssh"
)

// The armour exactly as OpenSSH's sshkey_parse_private2 matches it: the
// file must start with the BEGIN line, and the END line must follow a
// newline and end with one.
const (
	markBegin = "-----BEGIN OPENSSH PRIVATE KEY-----\n"
	markEnd   = "-----END OPENSSH PRIVATE KEY-----\n"
	authMagic = "openssh-key-v1\x00"
	pemType   = "OPENSSH PRIVATE KEY"
	// blockSize is the "none" cipher's: the private section's length is
	// a multiple of it.
	blockSize = 8
	// maxMPInt is OpenSSH's SSHBUF_MAX_BIGNUM (16384 bits) plus a sign byte.
	maxMPInt = 16384/8 + 1
)

// Error messages name the armour lines without quoting them: a report
// must never look as if it carried key material.

// ErrNotOpenSSH says the bytes are not an OpenSSH-format private key (PEM
// "RSA PRIVATE KEY", "EC PRIVATE KEY", PKCS#8, or no key at all): callers
// read those with ssh.ParseRawPrivateKey.
var ErrNotOpenSSH = errors.New("not an OpenSSH-format private key")

// Key is what an OpenSSH private key says about itself.
type Key struct {
	// Public is the header's public key, the one sshd presents. For an
	// unencrypted key Parse has checked that the private section holds
	// the same public key.
	Public ssh.PublicKey
	// Cipher and KDF are the protection; both "none" for an unencrypted key.
	Cipher, KDF string
}

// Parse reads an OpenSSH-format private key. It returns ErrNotOpenSSH
// for other formats, and for an encrypted key the Key with its public
// half and a *ssh.PassphraseMissingError (PublicKey set), as
// ssh.ParseRawPrivateKey does, so a caller judges both alike. Any other
// error says what in the file is malformed; it never carries key bytes.
func Parse(b []byte) (Key, error) {
	if !bytes.HasPrefix(b, []byte(markBegin)) {
		if blk, _ := pem.Decode(b); blk != nil && blk.Type == pemType {
			// pem.Decode is lenient where OpenSSH is not (text before
			// the BEGIN line, CRLF line ends): sshd refuses such a key.
			return Key{}, errors.New("openssh key: the file does not start with its BEGIN line, LF-terminated (text before it, or CRLF line ends): sshd does not load it")
		}
		return Key{}, ErrNotOpenSSH
	}
	raw, err := unarmour(b[len(markBegin):])
	if err != nil {
		return Key{}, err
	}
	return parseContainer(raw)
}

// PublicKey is the public key sshd presents for private key file b, in any
// format sshd reads, or why sshd would not load b. OpenSSH-format keys
// (every key ssh-keygen has written since OpenSSH 7.8) are read by Parse,
// without building a signer: Go's RSA key validation made up most of a
// guestcheck run. Older PEM and PKCS#8 keys carry no public key to read,
// so they still go through ssh.ParseRawPrivateKey.
func PublicKey(b []byte) (ssh.PublicKey, error) {
	k, err := Parse(b)
	if !errors.Is(err, ErrNotOpenSSH) {
		return k.Public, err
	}
	raw, err := ssh.ParseRawPrivateKey(b)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(raw)
	if err != nil {
		return nil, err
	}
	return signer.PublicKey(), nil
}

// unarmour returns the base64-decoded body up to the END line.
func unarmour(b []byte) ([]byte, error) {
	enc := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case ' ', '\t', '\v', '\f', '\r':
			// OpenSSH's base64 decoder (b64_pton) skips white space.
			continue
		case '\n':
		default:
			enc = append(enc, c)
			continue
		}
		if bytes.HasPrefix(b[i+1:], []byte(markEnd)) {
			raw, err := base64.StdEncoding.DecodeString(string(enc))
			if err != nil {
				return nil, fmt.Errorf("openssh key: body is not base64: %v", err)
			}
			return raw, nil
		}
	}
	return nil, errors.New("openssh key: no END line after a newline and ending in one (truncated?)")
}

func parseContainer(raw []byte) (Key, error) {
	if !bytes.HasPrefix(raw, []byte(authMagic)) {
		return Key{}, errors.New("openssh key: no openssh-key-v1 magic")
	}
	r := reader{b: raw[len(authMagic):], what: "header"}
	var k Key
	cipher, kdf := r.cstr("ciphername"), r.cstr("kdfname")
	r.str("kdfoptions")
	n := r.u32("number of keys")
	pubBlob := r.str("public key")
	priv := r.str("private section")
	if r.err != nil {
		return Key{}, r.err
	}
	k.Cipher, k.KDF = string(cipher), string(kdf)
	if n != 1 {
		return Key{}, fmt.Errorf("openssh key: holds %d keys, sshd reads only files with one", n)
	}
	pub, err := ssh.ParsePublicKey(pubBlob)
	if err != nil {
		// %q: x/crypto's message may quote the blob's bytes.
		return Key{}, fmt.Errorf("openssh key: embedded public key: %q", err.Error())
	}
	k.Public = pub
	if k.Cipher != "none" || k.KDF != "none" {
		// What ssh.ParseRawPrivateKey returns without a passphrase. An
		// AEAD cipher's tag follows the private section, so trailing
		// bytes are judged only for "none".
		return k, &ssh.PassphraseMissingError{PublicKey: pub}
	}
	if r.end(); r.err != nil {
		return Key{}, r.err
	}
	if err := checkPrivate(priv, pubBlob, pub); err != nil {
		return Key{}, err
	}
	return k, nil
}

// checkPrivate checks an unencrypted private section against the
// header's public key (blob, and parsed).
func checkPrivate(priv, pubBlob []byte, pub ssh.PublicKey) error {
	if len(priv) < blockSize || len(priv)%blockSize != 0 {
		return fmt.Errorf("openssh key: private section is %d bytes, not a non-zero multiple of %d", len(priv), blockSize)
	}
	r := reader{b: priv, what: "private section"}
	c1, c2 := r.u32("check-int"), r.u32("check-int")
	if r.err == nil && c1 != c2 {
		return errors.New("openssh key: private section check-ints differ (corrupt key)")
	}
	typ := string(r.str("key type"))
	if r.err == nil && typ != pub.Type() {
		return fmt.Errorf("openssh key: private key type %q differs from the public key's %s", typ, pub.Type())
	}
	if r.err == nil {
		var err error
		switch typ {
		case ssh.KeyAlgoED25519:
			err = checkEd25519(&r, pubBlob)
		case ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521:
			err = checkECDSA(&r, pubBlob, pub)
		case ssh.KeyAlgoRSA:
			err = checkRSA(&r, pub)
		default:
			// As ssh.ParseRawPrivateKey: DSA and security-key types are
			// not host keys this check accepts.
			err = fmt.Errorf("openssh key: unhandled key type %s", typ)
		}
		if err != nil {
			return err
		}
	}
	r.cstr("comment")
	if r.err != nil {
		return r.err
	}
	for i, p := range r.b {
		if p != byte(i+1) {
			return fmt.Errorf("openssh key: private section padding byte %d is %#02x, want %#02x", i+1, p, byte(i+1))
		}
	}
	return nil
}

// samePublic consumes the private section's copy of the public key's
// fields, which for ed25519 and ECDSA are byte for byte the header's blob
// after its type string.
func samePublic(r *reader, pubBlob []byte) error {
	fields := pubBlob[4+binary.BigEndian.Uint32(pubBlob):] // ssh.ParsePublicKey read this framing
	if !bytes.HasPrefix(r.b, fields) {
		return errors.New("openssh key: the private section's public key differs from the header's")
	}
	r.b, r.off = r.b[len(fields):], r.off+len(fields)
	return nil
}

// checkEd25519: the public key again, then the 64-byte private key whose
// second half is the public key once more (RFC 8032 seed || public) and
// whose seed must give that public key. OpenSSH checks only the lengths;
// sshd signs with both halves, so damage to either makes its signatures
// fail.
func checkEd25519(r *reader, pubBlob []byte) error {
	if err := samePublic(r, pubBlob); err != nil {
		return err
	}
	sk := r.str("ed25519 private key")
	if r.err != nil {
		return r.err
	}
	if len(sk) != ed25519.PrivateKeySize {
		return fmt.Errorf("openssh key: ed25519 private key is %d bytes, want %d", len(sk), ed25519.PrivateKeySize)
	}
	if !bytes.HasSuffix(pubBlob, sk[ed25519.SeedSize:]) {
		return errors.New("openssh key: the ed25519 private key does not end with its public key")
	}
	// A damaged seed still loads in OpenSSH, but sshd's signatures would
	// not verify. Deriving the public key is one scalar multiplication.
	derived := ed25519.NewKeyFromSeed(sk[:ed25519.SeedSize])
	if !bytes.HasSuffix(pubBlob, derived[ed25519.SeedSize:]) {
		return errors.New("openssh key: the ed25519 seed does not give the public key (corrupt key)")
	}
	return nil
}

// checkECDSA: curve name and public point again, then the private
// scalar, which gets OpenSSH's range check (sshkey_ec_validate_private:
// more than half the order's bits, less than order-1) and must give the
// public point. OpenSSH's loader does not check the latter, but sshd's
// signatures with a damaged scalar fail to verify; the code this replaced
// (x/crypto) checked it too. One constant-time scalar multiplication
// (crypto/ecdh) costs tens of microseconds, not RSA's milliseconds.
func checkECDSA(r *reader, pubBlob []byte, pub ssh.PublicKey) error {
	point := pubBlob[len(pubBlob)-ecPointLen(pub):]
	if err := samePublic(r, pubBlob); err != nil {
		return err
	}
	d := r.mpint("ecdsa private key")
	if r.err != nil {
		return r.err
	}
	curve := pub.(ssh.CryptoPublicKey).CryptoPublicKey().(*ecdsa.PublicKey).Curve
	order := curve.Params().N
	if d.BitLen() <= order.BitLen()/2 || d.Cmp(new(big.Int).Sub(order, big.NewInt(1))) >= 0 {
		return errors.New("openssh key: ecdsa private scalar out of range")
	}
	var ec ecdh.Curve
	switch curve.Params().BitSize {
	case 256:
		ec = ecdh.P256()
	case 384:
		ec = ecdh.P384()
	case 521:
		ec = ecdh.P521()
	}
	sk, err := ec.NewPrivateKey(d.FillBytes(make([]byte, (curve.Params().BitSize+7)/8)))
	if err != nil || !bytes.Equal(sk.PublicKey().Bytes(), point) {
		return errors.New("openssh key: the ecdsa private scalar does not give the public key (corrupt key)")
	}
	return nil
}

// ecPointLen is the length of the uncompressed point ending an ECDSA
// public key blob (ssh.ParsePublicKey accepts no other encoding).
func ecPointLen(pub ssh.PublicKey) int {
	size := (pub.(ssh.CryptoPublicKey).CryptoPublicKey().(*ecdsa.PublicKey).Curve.Params().BitSize + 7) / 8
	return 1 + 2*size
}

// checkRSA: n, e, d, iqmp, p, q. n and e must equal the header's; then
// n = p*q and e*d = 1 mod (p-1) and mod (q-1), the consistency Go's
// rsa.PrivateKey.Validate checked for the code this replaced, by
// multiplication and remainder alone. A damaged d breaks sshd's
// signatures (OpenSSH derives the CRT exponents from it). A damaged p or
// q does not: OpenSSL falls back to d when its CRT result does not
// verify, and TestSshdSigns sees Debian's sshd sign correctly with one.
// Parse still refuses it, deliberately: the file is damaged, the code
// this replaced refused it too, and accepting it would mean recovering
// the factorization from the intact prime, for damage no tool writes.
// Not checked: that p and q are prime, and that iqmp is q^-1 mod p (Go
// recomputed it and ignored the file's; OpenSSL's fallback covers a bad
// one). ssh-keygen -y checks none of these numbers, so this refuses keys
// it loads, never the reverse. The arithmetic is not constant-time; it
// runs once per read and never signs.
func checkRSA(r *reader, pub ssh.PublicKey) error {
	n, e, d, iqmp, p, q := r.mpint("rsa n"), r.mpint("rsa e"), r.mpint("rsa d"), r.mpint("rsa iqmp"), r.mpint("rsa p"), r.mpint("rsa q")
	if r.err != nil {
		return r.err
	}
	want := pub.(ssh.CryptoPublicKey).CryptoPublicKey().(*rsa.PublicKey)
	if n.Cmp(want.N) != 0 || !e.IsInt64() || e.Int64() != int64(want.E) {
		return errors.New("openssh key: the private section's public key differs from the header's")
	}
	// OpenSSH's SSH_RSA_MINIMUM_MODULUS_SIZE; Go refuses smaller keys too.
	if n.BitLen() < 1024 {
		return fmt.Errorf("openssh key: rsa modulus of %d bits, sshd refuses keys under 1024", n.BitLen())
	}
	one := big.NewInt(1)
	if p.Cmp(one) <= 0 || q.Cmp(one) <= 0 || d.Sign() <= 0 || iqmp.Sign() <= 0 {
		return errors.New("openssh key: rsa private numbers out of range")
	}
	if new(big.Int).Mul(p, q).Cmp(n) != 0 {
		return errors.New("openssh key: rsa primes do not multiply to the modulus (corrupt key)")
	}
	de := new(big.Int).Mul(d, e)
	for _, prime := range []*big.Int{p, q} {
		pm1 := new(big.Int).Sub(prime, one)
		if new(big.Int).Mod(de, pm1).Cmp(one) != 0 {
			return errors.New("openssh key: rsa private exponent does not match the public one (corrupt key)")
		}
	}
	return nil
}

// reader reads SSH wire types; the first error sticks and names the
// field and the offset within the part being read.
type reader struct {
	b    []byte
	off  int
	what string
	err  error
}

func (r *reader) fail(field string) {
	if r.err == nil {
		r.err = fmt.Errorf("openssh key: %s truncated or malformed at byte %d (%s)", r.what, r.off, field)
	}
}

func (r *reader) u32(field string) uint32 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 4 {
		r.fail(field)
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b, r.off = r.b[4:], r.off+4
	return v
}

func (r *reader) str(field string) []byte {
	at := r.off
	n := r.u32(field)
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(r.b)) {
		r.off = at
		r.fail(field)
		return nil
	}
	s := r.b[:n:n]
	r.b, r.off = r.b[n:], r.off+int(n)
	return s
}

// cstr reads a string OpenSSH reads as a C string (sshbuf_get_cstring):
// an embedded NUL makes the key invalid.
func (r *reader) cstr(field string) []byte {
	at := r.off
	s := r.str(field)
	if r.err == nil && bytes.IndexByte(s, 0) >= 0 {
		r.off = at
		r.fail(field + ": contains a NUL byte")
	}
	return s
}

// mpint reads a non-negative mpint as OpenSSH's sshbuf_get_bignum2 does:
// negative values and more than 16384 bits are refused, leading zero
// bytes tolerated.
func (r *reader) mpint(field string) *big.Int {
	at := r.off
	s := r.str(field)
	if r.err != nil {
		return new(big.Int)
	}
	if len(s) > maxMPInt || (len(s) > 0 && s[0]&0x80 != 0) {
		r.off = at
		r.fail(field + ": negative or too large")
		return new(big.Int)
	}
	return new(big.Int).SetBytes(s)
}

// end fails when bytes are left: OpenSSH refuses trailing data.
func (r *reader) end() {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("openssh key: %d bytes of trailing data after the %s", len(r.b), r.what)
	}
}
