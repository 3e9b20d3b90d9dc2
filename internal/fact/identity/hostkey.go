package identity

import (
	"golang.org/x/crypto/ssh"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/opensshkey"
)

// HostKey is one SSH host key file and its public half, as read from a
// guest: what sshd would present, by fingerprint. Key bodies are never
// kept.
type HostKey struct {
	Path string
	// Entry describes the private key (following symlinks) when
	// Described; Err is why it could not be described or read
	// (fs.ErrNotExist when missing).
	Entry     fs.Entry
	Described bool
	Err       error
	// Type and Fingerprint are of the public key derived from the
	// private one (SHA256:..., as ssh-keygen -lf prints it); ParseErr is
	// why it did not parse.
	Type, Fingerprint string
	ParseErr          error
	// Pub* are the same for Path.pub; PubErr covers reading and parsing.
	PubEntry                fs.Entry
	PubDescribed            bool
	PubErr                  error
	PubType, PubFingerprint string
}

// ReadHostKey reads the host key at p and its .pub.
func ReadHostKey(r fs.Reader, p string) HostKey {
	k := HostKey{Path: p}
	if k.Entry, k.Err = r.Stat(p); k.Err == nil {
		k.Described = true
		var b []byte
		if b, k.Err = r.ReadFile(p); k.Err == nil {
			if pk, err := opensshkey.PublicKey(b); err != nil {
				k.ParseErr = err
			} else {
				k.Type, k.Fingerprint = pk.Type(), ssh.FingerprintSHA256(pk)
			}
		}
	}
	pub := p + ".pub"
	if k.PubEntry, k.PubErr = r.Stat(pub); k.PubErr != nil {
		return k
	}
	k.PubDescribed = true
	k.PubType, k.PubFingerprint, k.PubErr = ReadPublicKey(r, pub)
	return k
}

// maxPublicKey bounds a public key file: an RSA key of 16384 bits takes
// under 3 KiB in authorized_keys form.
const maxPublicKey = 64 << 10

// ReadPublicKey reads the public key file p (a host key's .pub, in
// authorized_keys form) and returns the key's type and fingerprint
// (SHA256:..., as ssh-keygen -lf prints it). It reads no private key, so
// it is what a reader over the guest agent uses first.
func ReadPublicKey(r fs.Reader, p string) (typ, fingerprint string, err error) {
	b, err := r.ReadFileLimit(p, maxPublicKey)
	if err != nil {
		return "", "", err
	}
	pk, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		return "", "", err
	}
	return pk.Type(), ssh.FingerprintSHA256(pk), nil
}

// Identity is the key's type and fingerprint as a clone would show it:
// from the private key when it parses (that is what sshd presents), else
// from its .pub; ok is false when neither does.
func (k HostKey) Identity() (typ, fingerprint string, ok bool) {
	if k.Fingerprint != "" {
		return k.Type, k.Fingerprint, true
	}
	if k.PubFingerprint != "" {
		return k.PubType, k.PubFingerprint, true
	}
	return "", "", false
}
