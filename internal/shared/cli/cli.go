// Package cli is the one description of guestcheck's and sealprep's
// command lines: every option, subcommand, exit code and example is
// written once, as data, and from it come the parser (GNU style, with a
// "did you mean" for every misspelt name), --help, the man pages and the
// bash, zsh and fish completions. A test holds the generated pages to the
// shipped ones, so they cannot drift apart.
package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/suggest"
)

// Complete says what an option's argument completes to in a shell.
type Complete int

// The completion kinds.
const (
	CompleteNone  Complete = iota // free text: no candidates
	CompleteFile                  // a file name
	CompleteDir                   // a directory name
	CompleteWords                 // Option.Words
	// CompleteFormatFile is "[FMT:]FILE": a file name, optionally after
	// one of Option.Words and a colon, as --output json:r.json.
	CompleteFormatFile
)

// Option is one command-line option.
type Option struct {
	// Long is the name after "--"; Short the letter after "-" (0: none).
	Long  string
	Short byte
	// Arg is the argument's metavariable ("FMT", "DUR"); empty for a
	// switch that takes none.
	Arg string
	// Help says what the option does, in sentences; renderers wrap it.
	Help string
	// Repeat allows the option more than once; each value is kept.
	Repeat bool
	// Complete and Words drive shell completion of the argument. Words
	// may be comma-separated lists (ListWords), as --only takes.
	Complete  Complete
	Words     func() []string
	ListWords bool
	// SignedWords are list items that may also be written with a leading
	// "-" or "+" (sealprep's --ops -ID,+ID): completion offers them after
	// either sign as well as bare.
	SignedWords func() []string
}

// Example is one example command line and what it does.
type Example struct {
	Command, Comment string
}

// Section is a titled block of prose, for help and man pages.
type Section struct {
	Title string
	Body  string
}

// Command is a program or one of its subcommands.
type Command struct {
	// Name is what the user types: "guestcheck", or "probe" for a
	// subcommand (Path gives "guestcheck probe").
	Name string
	// Summary is one line: what it is for (man's NAME line).
	Summary string
	// Synopsis lists the usage lines, without the program name.
	Synopsis []string
	// Description is the prose under the usage lines.
	Description string
	// Args names the positional arguments, "" when there are none, and
	// ArgWords lists what they may be, for completion.
	Args     string
	ArgWords func() []string
	Options  []Option
	Commands []*Command
	// Sections follow the options: exit codes, files, environment.
	Sections []Section
	Examples []Example
	// Section is the man page section (8 for administration commands).
	ManSection int

	parent *Command
}

// Path is the command as typed: "guestcheck probe".
func (c *Command) Path() string {
	if c.parent == nil {
		return c.Name
	}
	return c.parent.Path() + " " + c.Name
}

// Link sets each subcommand's parent, so that Path and messages name the
// whole command. Call it once on the top command.
func (c *Command) Link() *Command {
	for _, s := range c.Commands {
		s.parent = c
		s.Link()
	}
	return c
}

// Sub returns the subcommand called name, or nil.
func (c *Command) Sub(name string) *Command {
	for _, s := range c.Commands {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// SubNames lists the subcommands' names.
func (c *Command) SubNames() []string {
	var out []string
	for _, s := range c.Commands {
		out = append(out, s.Name)
	}
	return out
}

func (c *Command) option(long string) *Option {
	for i := range c.Options {
		if c.Options[i].Long == long {
			return &c.Options[i]
		}
	}
	return nil
}

func (c *Command) short(b byte) *Option {
	for i := range c.Options {
		if c.Options[i].Short == b {
			return &c.Options[i]
		}
	}
	return nil
}

// UsageError is a mistake on the command line: one line, in the user's
// words (option names as typed), with a suggestion where one is close.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Values are the parsed options of one command line.
type Values struct {
	vals map[string][]string
	// Args are the positional arguments, in order.
	Args []string
}

// Has reports whether the option was given.
func (v *Values) Has(long string) bool { _, ok := v.vals[long]; return ok }

// String is the option's last value, or def when it was not given.
func (v *Values) String(long, def string) string {
	if s := v.vals[long]; len(s) > 0 {
		return s[len(s)-1]
	}
	return def
}

// All are every value of a repeatable option, in order.
func (v *Values) All(long string) []string { return v.vals[long] }

// Bool reports whether a switch was given.
func (v *Values) Bool(long string) bool { return v.Has(long) }

// Duration parses the option as a duration (0 when not given), refusing
// a negative one and saying how to write one.
func (v *Values) Duration(long string) (time.Duration, error) {
	s := v.String(long, "")
	if s == "" && !v.Has(long) {
		return 0, nil
	}
	return ParseDuration("--"+long, s)
}

// ParseDuration reads a duration given to what (an option or a key path)
// and says how to write one when it is not.
func ParseDuration(what, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, Usagef("%s %q: not a duration; write one as 30s, 5m or 1h30m", what, s)
	}
	if d < 0 {
		return 0, Usagef("%s %q: must not be negative", what, s)
	}
	return d, nil
}

// OneOf checks that value is one of choices, naming the closest when it
// is not: "--format jsn: unknown format; did you mean json? (one of
// text, json, ...)".
func OneOf(what, kind, value string, choices []string) error {
	if slices.Contains(choices, value) {
		return nil
	}
	msg := fmt.Sprintf("%q: unknown %s", value, kind)
	if what != "" {
		msg = what + " " + msg
	}
	if s := suggest.Suggest(value, choices); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return &UsageError{Msg: msg + " (one of " + strings.Join(choices, ", ") + ")"}
}

// Parse reads args (without the program or subcommand name) in GNU
// style: --name, --name=value, --name value, -x, bundled switches -xy,
// -xVALUE, and "--" ending the options. Options may follow positional
// arguments. A subcommand is not looked for here: the caller dispatches
// on the first argument before parsing.
func (c *Command) Parse(args []string) (*Values, error) {
	v := &Values{vals: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			v.Args = append(v.Args, args[i+1:]...)
			return v, nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			o := c.option(name)
			if o == nil {
				return nil, c.unknown("--"+name, name)
			}
			n, err := c.take(v, o, "--"+name, val, hasVal, args, i)
			if err != nil {
				return nil, err
			}
			i += n
		case len(a) > 1 && a[0] == '-':
			n, err := c.shorts(v, a, args, i)
			if err != nil {
				return nil, err
			}
			i += n
		default:
			v.Args = append(v.Args, a)
		}
	}
	return v, nil
}

// shorts reads one "-xyz" word; it returns how many following words it
// consumed as an argument.
func (c *Command) shorts(v *Values, a string, args []string, i int) (int, error) {
	for j := 1; j < len(a); j++ {
		o := c.short(a[j])
		if o == nil {
			return 0, c.unknown("-"+a[j:j+1], "")
		}
		if o.Arg == "" {
			if err := c.set(v, o, "-"+a[j:j+1], ""); err != nil {
				return 0, err
			}
			continue
		}
		rest := a[j+1:]
		return c.take(v, o, "-"+a[j:j+1], rest, rest != "", args, i)
	}
	return 0, nil
}

// take sets option o, seen as typed, from an inline value or the next
// word; it returns how many following words it consumed.
func (c *Command) take(v *Values, o *Option, typed, val string, hasVal bool, args []string, i int) (int, error) {
	if o.Arg == "" {
		if hasVal {
			return 0, Usagef("%s takes no argument", typed)
		}
		return 0, c.set(v, o, typed, "")
	}
	if hasVal {
		return 0, c.set(v, o, typed, val)
	}
	if i+1 >= len(args) {
		return 0, Usagef("%s needs an argument (%s)", typed, o.Arg)
	}
	// "--merge --format json a.json" means the FILE was forgotten, not a
	// file named --format: no option of ours takes an option's name, and
	// --merge=--format still says the odd name on purpose.
	next := args[i+1]
	if name, _, _ := strings.Cut(strings.TrimPrefix(next, "--"), "="); len(name) > 1 && strings.HasPrefix(next, "--") && c.option(name) != nil {
		return 0, Usagef("%s needs %s, and the word after it is the option --%s: put %s right after %s", typed, o.Arg, name, o.Arg, typed)
	}
	return 1, c.set(v, o, typed, next)
}

func (c *Command) set(v *Values, o *Option, typed, val string) error {
	if _, dup := v.vals[o.Long]; dup && !o.Repeat && o.Arg != "" {
		return Usagef("%s given twice; give it once", typed)
	}
	v.vals[o.Long] = append(v.vals[o.Long], val)
	return nil
}

// unknown is the error for an option the command does not have; one
// that a sibling command has is named with it.
func (c *Command) unknown(typed, name string) error {
	if c.parent != nil && name != "" {
		var with []string
		for _, s := range c.parent.Commands {
			if s != c && s.option(name) != nil {
				with = append(with, s.Path())
			}
		}
		if len(with) > 0 {
			return &UsageError{Msg: fmt.Sprintf("%s is not an option of %s; it goes with %s", typed, c.Path(), strings.Join(with, ", "))}
		}
	}
	msg := typed + ": unknown option"
	if name != "" {
		var longs []string
		for _, o := range c.Options {
			longs = append(longs, o.Long)
		}
		if s := suggest.Suggest(name, longs); s != "" {
			msg += "; did you mean --" + s + "?"
		}
	}
	return &UsageError{Msg: msg + " (see " + c.Path() + " --help)"}
}
