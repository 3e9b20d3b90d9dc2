// Package authkeys parses OpenSSH authorized_keys files (sshd(8),
// "AUTHORIZED_KEYS FILE FORMAT"): each line is optional options, a key
// type, the base64 key and an optional comment. Keys are identified by
// type and blob, never by the whole line, and shown only as their
// SHA256 fingerprint (as `ssh-keygen -lf` prints it). Parsing is pure.
package authkeys

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Key is one public key.
type Key struct {
	Type    string
	Blob    []byte
	Options string
	Comment string
	Line    int
}

// Fingerprint is "SHA256:" and the unpadded base64 of the blob's SHA-256.
func (k Key) Fingerprint() string {
	sum := sha256.Sum256(k.Blob)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// Same reports whether two keys are the same key, whatever their options
// and comments.
func (k Key) Same(o Key) bool { return k.Type == o.Type && string(k.Blob) == string(o.Blob) }

// Describe names the key without its body: type, fingerprint, comment.
func (k Key) Describe() string {
	s := k.Type + " " + k.Fingerprint()
	if k.Comment != "" {
		s += " (" + k.Comment + ")"
	}
	return s
}

// isType reports whether s looks like a key type: OpenSSH's names are
// ssh-*, ecdsa-sha2-*, sk-* and the *-cert-v01@openssh.com forms.
func isType(s string) bool {
	return strings.HasPrefix(s, "ssh-") || strings.HasPrefix(s, "ecdsa-sha2-") || strings.HasPrefix(s, "sk-")
}

// ErrNotKey is returned by ParseLine for a line that holds no key.
var ErrNotKey = errors.New("not a public key line")

// ParseLine parses one line (no newline).
func ParseLine(s string) (Key, error) {
	s = strings.TrimSpace(strings.TrimSuffix(s, "\r"))
	if s == "" || strings.HasPrefix(s, "#") {
		return Key{}, ErrNotKey
	}
	var k Key
	first, rest := cutField(s)
	if !isType(first) {
		// Options come first; they end at the first unquoted whitespace.
		opts, after, ok := cutOptions(s)
		if !ok {
			return Key{}, errors.New("unterminated quote in options")
		}
		k.Options = opts
		first, rest = cutField(after)
	}
	if !isType(first) {
		return Key{}, ErrNotKey
	}
	k.Type = first
	blob, comment := cutField(rest)
	b, err := base64.StdEncoding.DecodeString(blob)
	if err != nil || len(b) == 0 {
		return Key{}, errors.New("key body is not base64")
	}
	k.Blob, k.Comment = b, strings.TrimSpace(comment)
	return k, nil
}

func cutField(s string) (string, string) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], " \t")
}

func cutOptions(s string) (string, string, bool) {
	inq := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && inq && i+1 < len(s):
			i++
		case c == '"':
			inq = !inq
		case (c == ' ' || c == '\t') && !inq:
			return s[:i], s[i:], true
		}
	}
	return s, "", !inq
}

// Parse parses a whole file. Its problems are the lines that are neither
// a key nor a comment; they carry no file name, since Parse has only bytes.
func Parse(b []byte) ([]Key, []problem.Problem) {
	var out []Key
	var probs []problem.Problem
	for i, l := range strings.Split(string(b), "\n") {
		k, err := ParseLine(l)
		switch {
		case err == nil:
			k.Line = i + 1
			out = append(out, k)
		case errors.Is(err, ErrNotKey) && (strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#")):
		default:
			probs = append(probs, problem.Problem{Line: i + 1, Msg: err.Error()})
		}
	}
	return out, probs
}
