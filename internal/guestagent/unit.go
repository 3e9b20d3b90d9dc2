package guestagent

import (
	"strings"
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
}

// EnvFileRef is one EnvironmentFile= entry.
type EnvFileRef struct {
	Path     string
	Optional bool
}

// ParseUnitInto applies one unit file or drop-in to u, in the order systemd
// reads them: later assignments append, an empty one resets the list.
func ParseUnitInto(u *Unit, b []byte) {
	if u.Environment == nil {
		u.Environment = map[string]string{}
	}
	section := ""
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = line[1 : len(line)-1]
			continue
		}
		if section != "Service" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "ExecStart":
			u.ExecStart = v
		case "EnvironmentFile":
			if v == "" {
				u.EnvironmentFiles = nil
				continue
			}
			opt := strings.HasPrefix(v, "-")
			u.EnvironmentFiles = append(u.EnvironmentFiles, EnvFileRef{Path: strings.TrimPrefix(v, "-"), Optional: opt})
		case "Environment":
			if v == "" {
				u.Environment = map[string]string{}
				continue
			}
			words, err := splitQuoted(v)
			if err != nil {
				continue
			}
			for _, w := range words {
				if name, val, ok := strings.Cut(w.s, "="); ok && validVarName(name) {
					u.Environment[name] = val
				}
			}
		}
	}
}
