package docgen

import (
	"io"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/cli"
	"github.com/guestcheck/guestcheck/internal/shared/config"
)

// conffileHead opens the shipped file.
const conffileHead = `# ` + config.DefaultPath + ` - guestcheck's configuration.
#
# Every setting is optional; the values shown commented out are the
# defaults or examples. Decoding is strict: an unknown key is an error that
# names this file, the line and the key, and guestcheck exits 3 without
# checking. After editing, validate it (no check runs): guestcheck check-config
# The package manager keeps your edits on upgrade (a dpkg conffile, an rpm
# %config(noreplace)) and runs guestcheck check-config on them then.
# Every key is described in guestcheck.yaml(5).
`

// WriteConffile writes the shipped /etc/guestcheck/guestcheck.yaml from
// keys (config.Describe): all comments, so that it changes nothing, with
// each top-level key or section's help and, commented out, its default or
// example, so that removing the leading "#" of a block gives a valid file.
func WriteConffile(w io.Writer, keys []config.Key) error {
	var b strings.Builder
	b.WriteString(conffileHead)
	for i, k := range keys {
		if strings.Contains(k.Path, ".") || strings.Contains(k.Path, "[]") {
			continue
		}
		b.WriteString("\n")
		for _, l := range cli.Wrap(k.Help, 74) {
			b.WriteString("# " + l + "\n")
		}
		if k.Leaf() {
			b.WriteString("#" + k.Path + ": " + value(k) + "\n")
			continue
		}
		b.WriteString("#" + k.Path + ":\n")
		if k.Example != "" {
			for _, l := range strings.Split(k.Example, "\n") {
				b.WriteString("#  " + l + "\n")
			}
			continue
		}
		for _, c := range keys[i+1:] {
			rest, ok := strings.CutPrefix(c.Path, k.Path+".")
			if !ok {
				continue
			}
			depth := strings.Count(rest, ".")
			name := rest[strings.LastIndexByte(rest, '.')+1:]
			line := "#" + strings.Repeat("  ", depth+1) + name + ":"
			if c.Leaf() {
				line += " " + value(c)
			}
			b.WriteString(line + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// value is what the file writes for a leaf: its example, or its default.
func value(k config.Key) string {
	if k.Example != "" {
		return k.Example
	}
	return k.Default
}
