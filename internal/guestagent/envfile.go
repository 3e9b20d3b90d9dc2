package guestagent

import (
	"fmt"
	"strings"
)

// EnvFile is a parsed shell-style environment file (/etc/sysconfig/qemu-ga,
// /etc/default/qemu-guest-agent) as systemd's EnvironmentFile= and a
// sourcing shell script both read it.
type EnvFile struct {
	// Vars holds the last assignment of each variable.
	Vars map[string]string
	// Lines records the line of each variable's last assignment.
	Lines map[string]int
}

// ParseEnvFile parses KEY=value lines with optional "export ", single or
// double quotes, backslash escapes, line continuation and comments.
// Expansions such as ${VAR} are kept verbatim. Lines that are not
// assignments are returned as errors and skipped, as systemd does.
func ParseEnvFile(b []byte) (*EnvFile, []error) {
	ef := &EnvFile{Vars: map[string]string{}, Lines: map[string]int{}}
	var errs []error
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := lines[i]
		// Join continuation lines (a trailing unescaped backslash).
		for strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + lines[i]
		}
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		t = strings.TrimPrefix(t, "export ")
		k, v, ok := strings.Cut(t, "=")
		k = strings.TrimSpace(k)
		if !ok || !validVarName(k) {
			errs = append(errs, fmt.Errorf("line %d: not an assignment: %q", start, line))
			continue
		}
		val, err := unquoteShell(strings.TrimLeft(v, " \t"))
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %s: %w", start, k, err))
			continue
		}
		ef.Vars[k] = val
		ef.Lines[k] = start
	}
	return ef, errs
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}

// unquoteShell decodes one value: quoted parts lose their quotes, an
// unquoted '#' after whitespace starts a comment, unquoted trailing
// whitespace is dropped.
func unquoteShell(s string) (string, error) {
	var sb strings.Builder
	pendingSpace := ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return "", fmt.Errorf("unterminated single quote")
			}
			sb.WriteString(pendingSpace)
			pendingSpace = ""
			sb.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			sb.WriteString(pendingSpace)
			pendingSpace = ""
			j := i + 1
			closed := false
			for ; j < len(s); j++ {
				if s[j] == '\\' && j+1 < len(s) && strings.IndexByte("\"\\$`", s[j+1]) >= 0 {
					sb.WriteByte(s[j+1])
					j++
					continue
				}
				if s[j] == '"' {
					closed = true
					break
				}
				sb.WriteByte(s[j])
			}
			if !closed {
				return "", fmt.Errorf("unterminated double quote")
			}
			i = j
		case c == '\\' && i+1 < len(s):
			sb.WriteString(pendingSpace)
			pendingSpace = ""
			sb.WriteByte(s[i+1])
			i++
		case c == ' ' || c == '\t':
			pendingSpace += string(c)
		case c == '#' && (pendingSpace != "" || sb.Len() == 0):
			return sb.String(), nil
		default:
			sb.WriteString(pendingSpace)
			pendingSpace = ""
			sb.WriteByte(c)
		}
	}
	return sb.String(), nil
}
