package guestagent

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// KeyFile is a parsed GLib key file (qemu-ga.conf), reduced to what GKeyFile
// keeps: the last value of each key in each group. Duplicate groups merge.
type KeyFile struct {
	groups map[string]map[string]string
}

// ParseKeyFile parses b the way g_key_file_load_from_file does for
// qemu-ga: blank lines and '#' comments are skipped, "[group]" opens a
// group, "key=value" sets a key (the key is trimmed, the value loses its
// leading whitespace only). Anything else, or a key before the first
// group, is an error — and qemu-ga exits at start-up on such a file.
func ParseKeyFile(b []byte) (*KeyFile, error) {
	kf := &KeyFile{groups: map[string]map[string]string{}}
	group := ""
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if !utf8.ValidString(line) {
			return nil, fmt.Errorf("line %d is not UTF-8", i+1)
		}
		t := strings.TrimLeft(line, " \t\v\f\r")
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
			continue
		case strings.HasPrefix(t, "["):
			end := strings.LastIndexByte(t, ']')
			if end < 1 {
				return nil, fmt.Errorf("line %d: %q is not a key-value pair, group, or comment", i+1, line)
			}
			group = t[1:end]
			if group == "" || strings.ContainsAny(group, "[]") {
				return nil, fmt.Errorf("line %d: invalid group name %q", i+1, group)
			}
			if kf.groups[group] == nil {
				kf.groups[group] = map[string]string{}
			}
		default:
			k, v, ok := strings.Cut(t, "=")
			if !ok {
				return nil, fmt.Errorf("line %d: %q is not a key-value pair, group, or comment", i+1, line)
			}
			k = strings.TrimRight(k, " \t")
			if k == "" {
				return nil, fmt.Errorf("line %d: empty key name", i+1)
			}
			if group == "" {
				return nil, fmt.Errorf("line %d: key file does not start with a group", i+1)
			}
			kf.groups[group][k] = strings.TrimLeft(v, " \t")
		}
	}
	return kf, nil
}

// Has reports whether group has key.
func (k *KeyFile) Has(group, key string) bool {
	_, ok := k.groups[group][key]
	return ok
}

// String returns the unescaped value of key, as g_key_file_get_string
// does (\s \n \t \r \\). An invalid escape is an error, which makes
// qemu-ga exit.
func (k *KeyFile) String(group, key string) (string, error) {
	raw := k.groups[group][key]
	var sb strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			sb.WriteByte(c)
			continue
		}
		i++
		if i == len(raw) {
			return "", fmt.Errorf("key %s: escape character at end of line", key)
		}
		switch raw[i] {
		case 's':
			sb.WriteByte(' ')
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case '\\':
			sb.WriteByte('\\')
		default:
			return "", fmt.Errorf("key %s: invalid escape sequence \\%c", key, raw[i])
		}
	}
	return sb.String(), nil
}
