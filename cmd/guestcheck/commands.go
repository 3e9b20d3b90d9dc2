package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/guestcheck/guestcheck/docs"
	"github.com/guestcheck/guestcheck/internal/shared/buildinfo"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/suggest"
)

// runSubcommand runs the subcommand name when it is one; ok is false for
// anything else (options, or a stray word parseFlags reports).
func runSubcommand(cmd *cli.Command, name string, args []string, stdout, stderr io.Writer, all []runner.Check) (code int, ok bool) {
	switch name {
	case "probe":
		return runProbe(cmd.Sub("probe"), args, stdout, stderr, all), true
	case "help":
		return runHelp(cmd, args, stdout, stderr), true
	case "explain":
		return runExplain(cmd.Sub("explain"), args, stdout, stderr, all), true
	case "completion":
		return runCompletion(cmd, args, stdout, stderr), true
	case "check-config":
		return runCheckConfig(cmd.Sub("check-config"), args, stdout, stderr, all), true
	case "fleet":
		return runFleet(cmd.Sub("fleet"), args, stdout, stderr, all), true
	case "freeze-drill":
		return runDrill(cmd.Sub("freeze-drill"), args, stdout, stderr), true
	}
	return 0, false
}

// usage prints a usage mistake as one line and returns exit code 3.
func usage(stderr io.Writer, cmd *cli.Command, err error) int {
	fmt.Fprintf(stderr, "%s: %v\n", cmd.Path(), err)
	return report.ExitUsage
}

// onlyArg parses a subcommand that takes exactly one argument (or, with
// optional, none) and --help; it returns the argument, or a code to exit
// with when done.
func onlyArg(cmd *cli.Command, args []string, stdout, stderr io.Writer, optional bool) (string, int) {
	v, err := cmd.Parse(args)
	if err != nil {
		return "", usage(stderr, cmd, err)
	}
	if v.Bool("help") {
		cmd.WriteHelp(stdout)
		return "", report.ExitOK
	}
	switch {
	case len(v.Args) == 0 && optional:
		return "", -1
	case len(v.Args) != 1:
		return "", usage(stderr, cmd, cli.Usagef("takes one %s (see %s --help)", cmd.Args, cmd.Path()))
	}
	return v.Args[0], -1
}

// helpOption is --help, which every command has.
var helpOption = cli.Option{Long: "help", Short: 'h', Help: "Show this help."}

// runHelp is `guestcheck help [COMMAND]`.
func runHelp(cmd *cli.Command, args []string, stdout, stderr io.Writer) int {
	name, code := onlyArg(cmd.Sub("help"), args, stdout, stderr, true)
	if code >= 0 {
		return code
	}
	if name == "" {
		cmd.WriteHelp(stdout)
		return report.ExitOK
	}
	sub := cmd.Sub(name)
	if sub == nil {
		return usage(stderr, cmd.Sub("help"), cli.Usagef("%s", noSuchCommand(cmd, name, "")))
	}
	sub.WriteHelp(stdout)
	return report.ExitOK
}

// noSuchCommand is the one message for a word that is no command of
// cmd, from `guestcheck WORD` and `guestcheck help WORD` alike: the
// closest command (misspelt or abbreviated), then all of them. prefix
// goes before the suggestion ("guestcheck " where the user typed it).
func noSuchCommand(cmd *cli.Command, name, prefix string) string {
	names := cmd.SubNames()
	msg := fmt.Sprintf("%q: no such command", name)
	if s := cmp.Or(suggest.Suggest(name, names), suggest.Abbrev(name, names)); s != "" {
		msg += "; did you mean " + prefix + s + "?"
	}
	return fmt.Sprintf("%s (commands: %s; %s --help lists the options)", msg, strings.Join(names, ", "), cmd.Path())
}

// runCompletion is `guestcheck completion SHELL`.
func runCompletion(cmd *cli.Command, args []string, stdout, stderr io.Writer) int {
	shell, code := onlyArg(cmd.Sub("completion"), args, stdout, stderr, false)
	if code >= 0 {
		return code
	}
	if err := cmd.WriteCompletion(stdout, shell); err != nil {
		return usage(stderr, cmd.Sub("completion"), err)
	}
	return report.ExitOK
}

// runExplain is `guestcheck explain CODE`: the code's entry, from the
// code's own description (the one the finding's fix is built from), or
// for a check ID the list of its codes.
func runExplain(cmd *cli.Command, args []string, stdout, stderr io.Writer, all []runner.Check) int {
	code, exit := onlyArg(cmd, args, stdout, stderr, false)
	if exit >= 0 {
		return exit
	}
	if c, check, ok := findCode(all, code); ok {
		writeExplain(stdout, c, check)
		return report.ExitOK
	}
	for _, c := range all {
		if c.ID == code {
			var b strings.Builder
			helpProse(&b, c.ID+": "+c.Title+"\n\n"+c.Description)
			fmt.Fprintf(stdout, "%s\nCodes (guestcheck explain CODE for each):\n", b.String())
			for _, k := range c.Codes {
				fmt.Fprintf(stdout, "  %-34s %s\n", k.ID, k.Status)
			}
			var ref strings.Builder
			helpProse(&ref, "Reference: "+referencePage(c.ID))
			fmt.Fprintf(stdout, "\n%s", ref.String())
			return report.ExitOK
		}
	}
	known := append(checkIDs(all), codeNames(all)...)
	sort.Strings(known)
	msg := fmt.Sprintf("%q: no such finding code or check", code)
	if s := cmp.Or(suggest.Suggest(code, known), suggest.Abbrev(code, known)); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return usage(stderr, cmd, cli.Usagef("%s (guestcheck --list names the checks, guestcheck explain CHECK their codes)", msg))
}

// findCode finds a code among the checks' and the runner's own; check
// is "" for the runner's.
func findCode(all []runner.Check, id string) (runner.Code, string, bool) {
	for _, c := range all {
		if k, ok := c.CodeByID(id); ok {
			return k, c.ID, true
		}
	}
	for _, k := range runner.Codes {
		if k.ID == id {
			return k, "", true
		}
	}
	return runner.Code{}, "", false
}

// writeExplain prints one code's entry, wrapped for a console: what it
// means, then each of its fixes with when it applies.
func writeExplain(w io.Writer, c runner.Code, check string) {
	page := referencePage(docs.Runner)
	if check == "" {
		fmt.Fprintf(w, "%s (reported by guestcheck itself on any check, %s)\n\n", c.ID, c.Status)
	} else {
		fmt.Fprintf(w, "%s (check %s, %s)\n\n", c.ID, check, c.Status)
		page = referencePage(check)
	}
	text := docs.Plain(c.Meaning)
	if c.Fix != "" {
		text += "\n\nFix: " + docs.Plain(runner.Metavars(c.Fix))
	}
	if c.RootFix != "" {
		text += "\n\nUnder --root (an image): " + docs.Plain(runner.Metavars(c.RootFix))
	}
	for _, k := range c.Cases {
		text += "\n\nFix " + k.When + ": " + docs.Plain(runner.Metavars(k.Fix))
	}
	var b strings.Builder
	// The description renderer wraps prose the way --help does.
	helpProse(&b, text+"\n\nReference: "+page)
	io.WriteString(w, b.String())
}

// pageExists reports whether a reference page is at p; tests replace
// it, so that what explain says does not depend on the machine.
var pageExists = func(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// referencePage says where the reference page of id (a check, or
// docs.Runner) is on this machine: where the packages install it; else,
// for a binary built in a source tree (bin/guestcheck), the page in that
// tree; else the page's path in the source, saying it is not installed.
func referencePage(id string) string {
	installed := docs.PageOf(id)
	if pageExists(installed) {
		return installed
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			if p := filepath.Join(filepath.Dir(filepath.Dir(exe)), docs.SourceDir, id+".md"); pageExists(p) {
				return p
			}
		}
	}
	return docs.SourceDir + "/" + id + ".md in guestcheck's source tree (not installed here; the packages install it as " + installed + ")"
}

// helpProse wraps text as --help does.
func helpProse(b *strings.Builder, text string) {
	c := &cli.Command{Description: text}
	var out strings.Builder
	c.WriteHelp(&out)
	b.WriteString(strings.TrimPrefix(out.String(), "\n"))
}

// checkInfo is one check in --list --format json.
type checkInfo struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	DependsOn   []string `json:"depends_on,omitempty"`
	Codes       []string `json:"codes"`
	Reference   string   `json:"reference"`
}

// listWidth is the console width --list fits in.
const listWidth = 80

// listChecks is --list: a text table, or with --format json an array.
func listChecks(w io.Writer, all []runner.Check, format report.Format) error {
	switch format {
	case report.FormatText:
		idw := 0
		for _, c := range all {
			idw = max(idw, len(c.ID))
		}
		// The description under the title, wrapped so that every line
		// fits an 80-column console, as --help does.
		pad := strings.Repeat(" ", idw+2)
		for _, c := range all {
			fmt.Fprintf(w, "%-*s  %s\n", idw, c.ID, c.Title)
			for _, l := range cli.Wrap(c.Description, listWidth-len(pad)) {
				fmt.Fprintf(w, "%s%s\n", pad, l)
			}
		}
		return nil
	case report.FormatJSON:
		out := make([]checkInfo, 0, len(all))
		for _, c := range all {
			out = append(out, checkInfo{c.ID, c.Title, c.Description, c.DependsOn, runner.IDs(c.Codes), docs.PageOf(c.ID)})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return cli.Usagef("--list --format %s: --list writes text or json", format)
}

// writeVersion is --version: lines for a person, or one JSON object.
func writeVersion(w io.Writer, tool string, format report.Format) error {
	in := buildinfo.Read(tool)
	switch format {
	case report.FormatText:
		return in.WriteText(w)
	case report.FormatJSON:
		return in.WriteJSON(w)
	}
	return cli.Usagef("--version --format %s: --version writes text or json", format)
}

// colorFor decides --color for w: always, never, or on a terminal only
// (auto), never with NO_COLOR set or TERM=dumb.
func colorFor(when string, w io.Writer) bool {
	switch when {
	case "always":
		return true
	case "never":
		return false
	}
	return useColor(w)
}
