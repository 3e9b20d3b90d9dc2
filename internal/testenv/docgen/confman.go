package docgen

import (
	"fmt"
	"io"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/cli"
	"github.com/guestcheck/guestcheck/internal/shared/config"
)

// manDescription is the DESCRIPTION of guestcheck.yaml(5).
const manDescription = `guestcheck reads its configuration from ` + config.DefaultPath + ` (or the file --config names). The file is one YAML mapping; every key is optional, and an absent file or one holding only comments means the defaults below.

Decoding is strict, so that a typo never silently drops an expectation: an unknown key, a value of the wrong kind, a duration without a unit, an unknown check ID or a waiver of a code its check does not have is an error naming the file, the line and the key path, such as

  guestcheck.yaml:3: checks.dns.timout: unknown key; did you mean timeout? (known here: enabled, timeout)

guestcheck then exits 3 without checking anything, and guestcheck probe answers NOT READY with the same message. guestcheck check-config [FILE] judges a file without running any check: it prints FILE: OK and exits 0, or every problem one per line and exits 3.

Durations are written with a unit: 500ms, 5s, 2m, 1h30m. YAML indents with spaces only; a tab is an error.`

// ConfigExample is the EXAMPLE of guestcheck.yaml(5), a valid file.
const ConfigExample = `  timeout: 90s
  checks:
    dns: {enabled: false}
    cloud-init: {timeout: 10s}
  hostname:
    expected: web-1.example.org
  cloud_init:
    required: true
  probe:
    checks: [cloud-init, hostname, fstab]
  waivers:
    - check: time-sync
      code: time-sync-clock-unsynced
      reason: "no NTP on the test network"
      expires: 2027-03-01`

// WriteConfigMan writes guestcheck.yaml(5) from keys (config.Describe): every
// key once, with its type in words, its default and its help. The page
// has no date or version, so that the committed copy changes only when a
// key does.
func WriteConfigMan(w io.Writer, keys []config.Key) error {
	var b strings.Builder
	b.WriteString(".TH GUESTCHECK.YAML 5 \"\" \"guestcheck\" \"File Formats\"\n.nh\n.ad l\n")
	b.WriteString(".SH NAME\nguestcheck.yaml \\- configuration of guestcheck\n")
	fmt.Fprintf(&b, ".SH SYNOPSIS\n%s\n", roff(config.DefaultPath))
	b.WriteString(".SH DESCRIPTION\n")
	writeProse(&b, manDescription)
	b.WriteString(".SH KEYS\n")
	writeProse(&b, "A key path such as checks.ID.timeout names a key inside its sections; ID stands for a check ID (guestcheck --list), and waivers[] for each entry of the list.")
	for _, k := range keys {
		if strings.HasSuffix(k.Path, "[]") {
			continue // the entry itself: its keys say it all
		}
		fmt.Fprintf(&b, ".TP\n.B %s\n", manPath(k.Path))
		switch {
		case k.Type == "":
			b.WriteString("Section.\n.br\n")
		case k.Default != "":
			fmt.Fprintf(&b, "Type: %s. Default: %s.\n.br\n", roff(k.Type), roff(k.Default))
		default:
			fmt.Fprintf(&b, "Type: %s.\n.br\n", roff(k.Type))
		}
		manProse(&b, k.Help)
	}
	b.WriteString(".SH EXAMPLE\n")
	manProse(&b, ConfigExample)
	fmt.Fprintf(&b, ".SH FILES\n.TP\n.B %s\nThe configuration; the packages install it all comments, and keep an edited copy on upgrade (and run guestcheck check-config on it then).\n", roff(config.DefaultPath))
	b.WriteString(".SH SEE ALSO\n.BR guestcheck (8)\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeProse writes paragraphs of a section, each its own .PP.
func writeProse(b *strings.Builder, text string) {
	for _, p := range cli.Paragraphs(text) {
		b.WriteString(".PP\n")
		if p.Literal {
			manProse(b, strings.Join(p.Lines, "\n"))
			continue
		}
		manProse(b, strings.Join(p.Lines, " "))
	}
}

// manPath sets a key path in bold with its placeholder ID in italics.
func manPath(p string) string {
	segs := strings.Split(p, ".")
	for i, s := range segs {
		segs[i] = roff(s)
		if s == "ID" {
			segs[i] = `\fIID\fB`
		}
	}
	return strings.Join(segs, ".")
}
