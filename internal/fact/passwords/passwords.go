// Package passwords says which accounts of a root a password login can
// reach: those whose /etc/shadow password field is a usable hash, and
// those whose field is empty (no password at all). Neither hash nor field
// is kept: only account names leave this package.
package passwords

import (
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/passwd"
)

// ShadowPath is the shadow database, readable by root only.
const ShadowPath = "/etc/shadow"

// maxShadow bounds the read: a shadow file of a VM is kilobytes.
const maxShadow = 4 << 20

// Logins is what /etc/shadow says about password logins.
type Logins struct {
	// File is ShadowPath as the operator sees it.
	File string
	// Usable are the accounts with a password hash that is not locked
	// ("!" or "*" before it, or no hash: "*", "!", "!!", "!*"); Empty the
	// accounts whose field is empty, which need no password at all.
	Usable, Empty []string
	// Err is why the file could not be read; Problems are its lines that
	// were skipped, each naming file and line (never the line's content).
	Err      error
	Problems []string
}

// Known reports whether every account's state is known: the file was
// read and every line parsed.
func (l Logins) Known() bool { return l.Err == nil && len(l.Problems) == 0 }

// Open lists the accounts a password login can reach: Empty, then Usable.
func (l Logins) Open() []string { return append(append([]string(nil), l.Empty...), l.Usable...) }

// Read reads r's /etc/shadow.
func Read(r fs.Reader) Logins {
	l := Logins{File: r.Display(ShadowPath)}
	b, err := r.ReadFileLimit(ShadowPath, maxShadow)
	if err != nil {
		l.Err = err
		return l
	}
	return Of(l.File, b)
}

// Of judges the content b of the shadow file shown as file (pure).
func Of(file string, b []byte) Logins {
	l := Logins{File: file}
	entries, probs := passwd.ParseShadow(file, b)
	for _, p := range probs {
		l.Problems = append(l.Problems, p.Error())
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Name] {
			continue // getspnam(3) returns the first entry of a name
		}
		seen[e.Name] = true
		switch {
		case e.Hash == "":
			l.Empty = append(l.Empty, e.Name)
		case e.HasPassword():
			l.Usable = append(l.Usable, e.Name)
		}
	}
	return l
}
