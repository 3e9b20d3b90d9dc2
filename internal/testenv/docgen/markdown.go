package docgen

import (
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/cli"
)

// MarkdownOptions is the command's options as a Markdown table, for a
// README that must say what --help says.
func MarkdownOptions(c *cli.Command) string {
	var b strings.Builder
	b.WriteString("| option | meaning |\n|---|---|\n")
	for _, o := range c.Options {
		fmt.Fprintf(&b, "| `%s` | %s |\n", o.Label(), mdCell(o.Help))
	}
	return b.String()
}

// MarkdownCommands is the command's subcommands as a Markdown table, each
// with its usage line.
func MarkdownCommands(c *cli.Command) string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, s := range c.Commands {
		usage := s.Path()
		if len(s.Synopsis) > 0 {
			usage += " " + s.Synopsis[0]
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", usage, mdCell(s.Summary))
	}
	return b.String()
}

// mdCell makes text safe inside a Markdown table cell.
func mdCell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}
