// Package hostnamefile is the machine's own record of its name: the
// static hostname in /etc/hostname (SUSE's /etc/HOSTNAME where there is
// none) and, on the running system, the kernel
// hostname. guestcheck (the hostname and dns checks, the report header)
// and sealprep (which empties /etc/hostname) read them through here, so
// that both binaries agree on what the file names.
package hostnamefile

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
)

// Path holds the static hostname, which systemd restores at boot (the
// catalogue's hostname item).
var Path = catalogue.Lookup(catalogue.Hostname).Files()[0]

// Fallbacks hold the static hostname on a system without Path: SUSE's
// /etc/HOSTNAME, which its boot scripts read before systemd (and which
// it now links to /etc/hostname). The catalogue's other hostname places.
var Fallbacks = catalogue.Lookup(catalogue.Hostname).Files()[1:]

// KernelPath is the running kernel's (transient) hostname.
const KernelPath = "/proc/sys/kernel/hostname"

// State is what /etc/hostname says about the static hostname. Its
// values read as the end of "/etc/hostname is ...".
type State string

// The states of /etc/hostname.
const (
	Set      State = "ok"      // it names one host
	Missing  State = "missing" // there is no such file
	Empty    State = "empty"   // it names nobody: no static hostname
	Unusable State = "error"   // it cannot be read, or names several hosts
)

// Static is /etc/hostname as read.
type Static struct {
	State State
	// Name is the static hostname when State is Set.
	Name string
	// First is the first name the file holds, even when it holds several:
	// a label (the report header) shows it, a judge uses Name.
	First string
	// ReadErr is why the file could not be read (Unusable); ParseErr why
	// its content is not one name (Unusable).
	ReadErr, ParseErr error
	// Path is the file the state is of: Path, or a fallback that exists
	// where Path does not; File reads it.
	Path string
}

// File is the file s is the state of: /etc/hostname unless s was read
// from a fallback.
func (s Static) File() string {
	if s.Path == "" {
		return Path
	}
	return s.Path
}

// Parse returns the static hostname stored in /etc/hostname: the first
// line that is neither blank nor a comment, trimmed. An empty result with
// a nil error means the file names nobody, which systemd treats as "no
// static hostname". A second name, on the same line or a later one, is an
// error because tools disagree on which one wins.
func Parse(b []byte) (string, error) {
	name, err := parse(b)
	if err != nil {
		return "", err
	}
	return name, nil
}

// parse is Parse that also returns the first name when there are several.
func parse(b []byte) (first string, err error) {
	line1 := 0
	for i, raw := range bytes.Split(b, []byte("\n")) {
		line := strings.TrimSpace(string(raw))
		if line == "" || line[0] == '#' {
			continue
		}
		if line1 != 0 {
			return first, fmt.Errorf("several names: line %d and line %d", line1, i+1)
		}
		f := strings.Fields(line)
		first, line1 = f[0], i+1
		if len(f) > 1 {
			return first, fmt.Errorf("line %d holds several names: %q", i+1, line)
		}
	}
	return first, nil
}

// Decide is the Static a read of /etc/hostname gives: its content b, or
// the read error err.
func Decide(b []byte, err error) Static {
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return Static{State: Missing}
	case err != nil:
		return Static{State: Unusable, ReadErr: err}
	}
	name, err := parse(b)
	switch {
	case err != nil:
		return Static{State: Unusable, ParseErr: err, First: name}
	case name == "":
		return Static{State: Empty}
	}
	return Static{State: Set, Name: name, First: name}
}

// ReadStatic reads the static hostname through r: /etc/hostname, or,
// when there is none, the first fallback there is (SUSE's /etc/HOSTNAME).
func ReadStatic(r fs.Reader) Static {
	st := Decide(r.ReadFile(Path))
	st.Path = Path
	if st.State != Missing {
		return st
	}
	if fbs := ReadFallbacks(r); len(fbs) > 0 {
		return fbs[0]
	}
	return st
}

// ReadFallbacks reads each fallback that is a file of its own (a link
// is the file it names: SUSE links /etc/HOSTNAME to /etc/hostname). A
// template must hold no name in any of them, whichever the system reads.
func ReadFallbacks(r fs.Reader) []Static {
	var out []Static
	for _, p := range Fallbacks {
		if e, err := r.Lstat(p); err != nil || e.Kind != fs.KindRegular {
			continue
		}
		st := Decide(r.ReadFile(p))
		st.Path = p
		out = append(out, st)
	}
	return out
}

// ReadKernel reads the kernel hostname through r, which must be the
// running system's root. An empty name is returned as "".
func ReadKernel(r fs.Reader) (string, error) {
	b, err := r.ReadFile(KernelPath)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
