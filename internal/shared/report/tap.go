package report

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/shared/clean"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// WriteTAP renders r as TAP version 13: one test point per check, in
// report order, each followed by a YAML diagnostic block with the check's
// findings. A passing check is "ok", a skipped one "ok ... # SKIP reason",
// and warn, fail and error are "not ok" (warn too: it needs attention, and
// the exit code is not 0 either), told apart by the block's severity.
// Version 13 rather than 14 because Perl's TAP::Parser, which prove runs,
// rejects version 14 documents; the YAML is the subset both YAML parsers
// and TAP::Parser's YAMLish reader read alike (double-quoted strings,
// no flow collections, no block scalars).
func WriteTAP(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "TAP version 13")
	fmt.Fprintf(bw, "# %s %s, host %s, root %s, started %s\n", tapLine(r.Tool), tapLine(r.Version),
		tapLine(r.Host.Hostname), tapLine(r.Root), r.StartedAt.UTC().Format("2006-01-02T15:04:05Z"))
	if len(r.Checks) == 0 {
		fmt.Fprintln(bw, "1..0 # SKIP no checks ran")
		return bw.Flush()
	}
	fmt.Fprintf(bw, "1..%d\n", len(r.Checks))
	for i, c := range r.Checks {
		st := valid(c.Status)
		ok := "ok"
		if st != runner.Pass && st != runner.Skip {
			ok = "not ok"
		}
		fmt.Fprintf(bw, "%s %d - %s", ok, i+1, tapText(c.ID))
		if st == runner.Skip {
			fmt.Fprintf(bw, " # SKIP %s\n", tapText(c.Summary))
		} else {
			fmt.Fprintf(bw, ": %s\n", tapText(c.Summary))
		}
		// kv writes one "key: value" line of the YAML block.
		kv := func(level int, key, value string) {
			fmt.Fprintf(bw, "%s%s: %s\n", strings.Repeat("  ", level), yamlKey(key), yamlQuote(value))
		}
		fmt.Fprintln(bw, "  ---")
		kv(1, "message", c.Summary)
		kv(1, "severity", string(st))
		kv(1, "title", c.Title)
		fmt.Fprintf(bw, "  duration_ms: %d\n", c.DurationMS)
		if len(c.Findings) > 0 {
			fmt.Fprintln(bw, "  findings:")
		}
		for _, f := range c.Findings {
			fmt.Fprintf(bw, "    - status: %s\n", yamlQuote(string(f.Status)))
			kv(3, "code", f.Code)
			kv(3, "message", f.Message)
			if len(f.Detail) > 0 {
				fmt.Fprintln(bw, "      detail:")
				for _, k := range slices.Sorted(maps.Keys(f.Detail)) {
					kv(4, k, f.Detail[k])
				}
			}
			if f.Remediation != "" {
				kv(3, "remediation", f.Remediation)
			}
			if f.Waived != nil {
				fmt.Fprintln(bw, "      waived:")
				kv(4, "reason", f.Waived.Reason)
				if f.Waived.Expires != "" {
					kv(4, "expires", f.Waived.Expires)
				}
			}
		}
		fmt.Fprintln(bw, "  ...")
	}
	return bw.Flush()
}

var plainKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`) })

// maxKeyRunes bounds a YAML key: YAML limits an implicit key to 1024
// characters, and a quoted one of 200 runes stays under that even when
// every rune needs a four-byte escape.
const maxKeyRunes = 200

// yamlKey leaves a key plain when every YAML parser reads it as that
// string, and quotes it otherwise (spaces, colons, or words such as
// "true" and "null" that YAML would turn into other types). A key longer
// than maxKeyRunes (no check writes one) is cut there and ends in "…".
func yamlKey(k string) string {
	if utf8.RuneCountInString(k) > maxKeyRunes {
		k = string([]rune(k)[:maxKeyRunes-1]) + "…"
	}
	if plainKey().MatchString(k) {
		switch strings.ToLower(k) {
		case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
		default:
			return k
		}
	}
	return yamlQuote(k)
}

// yamlQuote writes s as a YAML double-quoted scalar using only the escapes
// TAP::Parser's YAMLish reader also knows (\" \\ \n \t \r \xHH), so both
// read back the same string. Characters YAML does not allow in a document
// unescaped beyond ASCII (C1 controls, invalid UTF-8, non-characters),
// and bidi characters and line separators, become U+FFFD.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == utf8.RuneError && size == 1, r >= 0x80 && r < 0xa0, r == 0xfeff, r == 0xfffe, r == 0xffff:
			b.WriteRune('\uFFFD')
		case clean.IsBidi(r) || r == 0x2028 || r == 0x2029:
			// A terminal or a CI page showing the YAML would
			// reorder or break the lines around them.
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tapText makes s fit a test point's description or a directive's reason:
// one line, valid UTF-8, with every '#' escaped as TAP 13 asks, so that no
// '#' starts a directive. Backslashes stay as they are: TAP 13 defines no
// other escape, and TAP::Parser shows descriptions verbatim.
func tapText(s string) string {
	return strings.ReplaceAll(tapLine(s), "#", `\#`)
}

// tapLine is s on one line, in valid UTF-8, for a TAP comment: control
// characters a space, bidi characters U+FFFD (clean.Text's).
func tapLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return clean.Rune(r)
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
