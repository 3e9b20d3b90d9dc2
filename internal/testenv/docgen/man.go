package docgen

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/cli"
)

// ManInfo is what a man page's header and footer need besides the
// command: the version and date it documents (both may be left out, as
// for pages committed to the repository, which would otherwise change at
// every release) and the related pages.
type ManInfo struct {
	Version string
	Date    time.Time
	Manual  string   // "System Administration"
	SeeAlso []string // "guestcheck.yaml(5)"
}

// WriteMan writes c as a man(7) page: NAME, SYNOPSIS, DESCRIPTION,
// COMMANDS, OPTIONS, the sections, EXAMPLES and SEE ALSO. Subcommands get
// their options under their own heading.
func WriteMan(w io.Writer, c *cli.Command, info ManInfo) error {
	var b strings.Builder
	date, source := "", c.Name
	if !info.Date.IsZero() {
		date = info.Date.UTC().Format("2006-01-02")
	}
	if info.Version != "" {
		source += " " + info.Version
	}
	fmt.Fprintf(&b, ".TH %s %d %q %q %q\n", strings.ToUpper(roff(c.Name)), c.ManSection, date, source, info.Manual)
	// No hyphenation and a ragged right edge: options and paths must
	// read, and copy, exactly as typed.
	b.WriteString(".nh\n.ad l\n")
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roff(c.Name), roff(c.Summary))
	b.WriteString(".SH SYNOPSIS\n")
	writeSynopsis(&b, c)
	for _, s := range c.Commands {
		writeSynopsis(&b, s)
	}
	if c.Description != "" {
		b.WriteString(".SH DESCRIPTION\n")
		manProse(&b, c.Description)
	}
	if len(c.Commands) > 0 {
		b.WriteString(".SH COMMANDS\n")
		for _, s := range c.Commands {
			fmt.Fprintf(&b, ".TP\n.B %s\n", roff(s.Path()))
			text := sentence(s.Summary)
			if s.Description != "" {
				text += "\n\n" + s.Description
			}
			manProse(&b, text)
		}
	}
	if len(c.Options) > 0 {
		b.WriteString(".SH OPTIONS\n")
		manOptions(&b, c.Options)
	}
	for _, s := range c.Commands {
		if len(s.Options) > 0 {
			fmt.Fprintf(&b, ".SS Options of %s\n", roff(s.Path()))
			manOptions(&b, s.Options)
		}
	}
	for _, s := range c.Sections {
		fmt.Fprintf(&b, ".SH %s\n", roff(strings.ToUpper(s.Title)))
		manProse(&b, s.Body)
	}
	if len(c.Examples) > 0 {
		b.WriteString(".SH EXAMPLES\n")
		for _, e := range c.Examples {
			fmt.Fprintf(&b, ".TP\n.B %s\n", roff(e.Command))
			manProse(&b, e.Comment)
		}
	}
	if len(info.SeeAlso) > 0 {
		b.WriteString(".SH SEE ALSO\n")
		var refs []string
		for _, s := range info.SeeAlso {
			name, sec, _ := strings.Cut(strings.TrimSuffix(s, ")"), "(")
			refs = append(refs, fmt.Sprintf(".BR %s (%s)", roff(name), sec))
		}
		b.WriteString(strings.Join(refs, " ,\n") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeSynopsis(b *strings.Builder, c *cli.Command) {
	for _, s := range c.Synopsis {
		fmt.Fprintf(b, ".B %s\n%s\n.br\n", roff(c.Path()), roff(s))
	}
}

func manOptions(b *strings.Builder, opts []cli.Option) {
	for _, o := range opts {
		label := "\\fB\\-\\-" + roff(o.Long) + "\\fR"
		if o.Arg != "" {
			label += " \\fI" + roff(o.Arg) + "\\fR"
		}
		if o.Short != 0 {
			label = "\\fB\\-" + roff(string(o.Short)) + "\\fR, " + label
		}
		fmt.Fprintf(b, ".TP\n%s\n", label)
		manProse(b, o.Help)
	}
}

// sentence capitalises a summary line and ends it with a period, to
// stand before further prose.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// manProse writes paragraphs for man to fill, and literal blocks as
// no-fill, indented.
func manProse(b *strings.Builder, text string) {
	for i, p := range cli.Paragraphs(text) {
		if i > 0 {
			b.WriteString(".IP\n")
		}
		if p.Literal {
			b.WriteString(".RS\n.nf\n")
			for _, l := range p.Lines {
				b.WriteString(roff(strings.TrimPrefix(l, "  ")) + "\n")
			}
			b.WriteString(".fi\n.RE\n")
			continue
		}
		b.WriteString(roff(strings.Join(p.Lines, " ")) + "\n")
	}
}

// roff escapes text for man(7): backslashes, hyphens (which roff would
// otherwise set as typographic hyphens, breaking copied options), and a
// leading dot or quote, which would start a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
