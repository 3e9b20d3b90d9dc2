package cli

import (
	"fmt"
	"io"
	"strings"
)

// helpWidth is the width --help wraps to: a serial console's 80 columns
// less one, so that no line wraps there.
const helpWidth = 79

// optionColumn is where option help starts in --help.
const optionColumn = 21

// Label is how an option is shown: "-v, --verbose" or "--format FMT".
func (o Option) Label() string {
	s := "--" + o.Long
	if o.Arg != "" {
		s += " " + o.Arg
	}
	if o.Short != 0 {
		s = "-" + string(o.Short) + ", " + s
	}
	return s
}

// WriteHelp writes --help: usage lines, description, subcommands,
// options, the sections and the examples.
func (c *Command) WriteHelp(w io.Writer) error {
	var b strings.Builder
	lead := "Usage: "
	for _, s := range c.Synopsis {
		fmt.Fprintf(&b, "%s%s %s\n", lead, c.Path(), s)
		lead = "       "
	}
	for _, sub := range c.Commands {
		for _, s := range sub.Synopsis {
			fmt.Fprintf(&b, "%s%s %s\n", lead, sub.Path(), s)
			lead = "       "
		}
	}
	if c.Description != "" {
		b.WriteString("\n")
		writeProse(&b, c.Description, "")
	}
	if len(c.Commands) > 0 {
		b.WriteString("\nCommands:\n")
		for _, s := range c.Commands {
			writeItem(&b, s.Name, s.Summary)
		}
	}
	if len(c.Options) > 0 {
		b.WriteString("\nOptions:\n")
		for _, o := range c.Options {
			writeItem(&b, o.Label(), o.Help)
		}
	}
	for _, s := range c.Sections {
		fmt.Fprintf(&b, "\n%s:\n", s.Title)
		writeProse(&b, s.Body, "")
	}
	if len(c.Examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, e := range c.Examples {
			writeCommand(&b, e.Command)
			if e.Comment != "" {
				writeProse(&b, e.Comment, "      ")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCommand writes an example command line, continued with " \\" over
// as many lines as it takes to stay within the help width.
func writeCommand(b *strings.Builder, cmd string) {
	lines := Wrap(cmd, helpWidth-6)
	for i, l := range lines {
		lead := "  "
		if i > 0 {
			lead = "      "
		}
		if i < len(lines)-1 {
			l += " \\"
		}
		b.WriteString(lead + l + "\n")
	}
}

// writeItem writes one "  label   help" entry, the help wrapped at the
// option column (on the next line when the label is too long).
func writeItem(b *strings.Builder, label, help string) {
	lead := "  " + label
	pad := strings.Repeat(" ", optionColumn)
	lines := Wrap(help, helpWidth-optionColumn)
	if len(lead) >= optionColumn-1 {
		b.WriteString(lead + "\n")
	} else if len(lines) > 0 {
		b.WriteString(lead + strings.Repeat(" ", optionColumn-len(lead)) + lines[0] + "\n")
		lines = lines[1:]
	} else {
		b.WriteString(lead + "\n")
	}
	for _, l := range lines {
		b.WriteString(pad + l + "\n")
	}
}

// writeProse writes paragraphs (separated by blank lines) wrapped to the
// help width; lines that start with two spaces are kept as written
// (commands, tables).
func writeProse(b *strings.Builder, text, indent string) {
	for i, para := range Paragraphs(text) {
		if i > 0 {
			b.WriteString("\n")
		}
		if para.Literal {
			for _, l := range para.Lines {
				b.WriteString(indent + l + "\n")
			}
			continue
		}
		for _, l := range Wrap(strings.Join(para.Lines, " "), helpWidth-len(indent)) {
			b.WriteString(indent + l + "\n")
		}
	}
}

// Paragraph is a run of lines: prose to reflow, or a literal block.
type Paragraph struct {
	Lines   []string
	Literal bool
}

// Paragraphs splits text at blank lines, and apart where literal lines
// (indented by two spaces) start or stop.
func Paragraphs(text string) []Paragraph {
	var out []Paragraph
	var cur *Paragraph
	for _, l := range strings.Split(strings.Trim(text, "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			cur = nil
			continue
		}
		lit := strings.HasPrefix(l, "  ")
		if cur == nil || cur.Literal != lit {
			out = append(out, Paragraph{Literal: lit})
			cur = &out[len(out)-1]
		}
		if !lit {
			l = strings.TrimSpace(l)
		}
		cur.Lines = append(cur.Lines, l)
	}
	return out
}

// Wrap breaks s into lines of at most width columns at spaces (a longer
// word stands alone), as --help wraps its prose, for the other text that
// is wrapped the same way (guestcheck --list, the shipped
// guestcheck.yaml's comments).
func Wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
