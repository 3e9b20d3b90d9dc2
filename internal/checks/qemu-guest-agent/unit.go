package qemuguestagent

import (
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/envfile"
	"github.com/guestcheck/guestcheck/internal/parse/ini"
)

// Unit is what guestcheck needs from a service unit and its drop-ins.
type Unit struct {
	// ExecStart is the last effective ExecStart= (an empty assignment resets).
	ExecStart string
	// EnvironmentFiles are the EnvironmentFile= paths in order; Optional
	// marks those with a "-" prefix (missing is not an error).
	EnvironmentFiles []EnvFileRef
	// Environment holds Environment= assignments.
	Environment map[string]string
	// BindsTo, Requires, Requisite and After are the [Unit] dependencies,
	// unit names as written (escapes kept); BindTo= is systemd's old
	// spelling of BindsTo=. An empty assignment resets a list.
	BindsTo, Requires, Requisite, After []string
	// WantedBy lists the [Install] WantedBy= units, which pull the unit
	// in once it is enabled.
	WantedBy []string
}

// EnvFileRef is one EnvironmentFile= entry.
type EnvFileRef struct {
	Path     string
	Optional bool
}

// Apply layers one unit file or drop-in, parsed with ini.Systemd, over u
// in the order systemd reads them: later assignments append, an empty one
// resets the list.
func (u *Unit) Apply(f ini.File) {
	if u.Environment == nil {
		u.Environment = map[string]string{}
	}
	for _, e := range f.Entries {
		k, v := e.Key, e.Value
		switch e.Section {
		case "Unit":
			switch k {
			case "BindsTo", "BindTo":
				u.BindsTo = depList(u.BindsTo, v)
			case "Requires":
				u.Requires = depList(u.Requires, v)
			case "Requisite":
				u.Requisite = depList(u.Requisite, v)
			case "After":
				u.After = depList(u.After, v)
			}
		case "Install":
			if k == "WantedBy" {
				u.WantedBy = depList(u.WantedBy, v)
			}
		case "Service":
			u.service(k, v)
		}
	}
}

func (u *Unit) service(k, v string) {
	switch k {
	case "ExecStart":
		u.ExecStart = v
	case "EnvironmentFile":
		if v == "" {
			u.EnvironmentFiles = nil
			return
		}
		opt := strings.HasPrefix(v, "-")
		u.EnvironmentFiles = append(u.EnvironmentFiles, EnvFileRef{Path: strings.TrimPrefix(v, "-"), Optional: opt})
	case "Environment":
		if v == "" {
			u.Environment = map[string]string{}
			return
		}
		words, err := splitQuoted(v)
		if err != nil {
			return
		}
		for _, w := range words {
			if name, val, ok := strings.Cut(w.s, "="); ok && envfile.ValidName(name) {
				u.Environment[name] = val
			}
		}
	}
}

// depList applies one dependency assignment: systemd splits it on
// whitespace without unquoting or unescaping, and an empty value resets.
func depList(l []string, v string) []string {
	if v == "" {
		return nil
	}
	return append(l, strings.Fields(v)...)
}

// WaitsFor returns the units u cannot run without, in the order found:
// everything it is bound to (BindsTo= stops it whenever the other unit is
// inactive, ordered or not), and what it requires (Requires=, Requisite=)
// and is ordered after, since then a failed or absent dependency keeps it
// from starting. A Requires= without After= starts both at once, so it
// does not count.
func (u *Unit) WaitsFor() []string {
	var out []string
	add := func(n string) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range u.BindsTo {
		add(n)
	}
	for _, n := range append(append([]string(nil), u.Requires...), u.Requisite...) {
		if slices.Contains(u.After, n) {
			add(n)
		}
	}
	return out
}

// DevicePath returns the device node a .device unit stands for, as
// `systemd-escape --unescape --path` turns the name without its suffix
// into a path: "-" separates components, \xNN is a byte, and the result
// must be a normalised absolute path. ok is false for any other unit and
// for a name systemd would refuse.
func DevicePath(unit string) (p string, ok bool) {
	name, ok := strings.CutSuffix(unit, ".device")
	if !ok || name == "" || strings.IndexByte(name, 0) >= 0 {
		return "", false
	}
	if name == "-" {
		return "/", true
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '-':
			b.WriteByte('/')
		case c == '\\':
			if i+3 >= len(name) || name[i+1] != 'x' {
				return "", false
			}
			hi, lo := unhex(name[i+2]), unhex(name[i+3])
			if hi < 0 || lo < 0 || (hi == 0 && lo == 0) {
				return "", false // a NUL would end the path in C
			}
			b.WriteByte(byte(hi<<4 | lo))
			i += 3
		default:
			b.WriteByte(c)
		}
	}
	w := b.String()
	if strings.HasPrefix(w, "/") || strings.HasSuffix(w, "/") {
		return "", false
	}
	p = "/" + w
	if len(p) >= 4096 {
		return "", false
	}
	for _, c := range strings.Split(w, "/") {
		if c == "" || c == "." || c == ".." || len(c) > 255 {
			return "", false
		}
	}
	return p, true
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
