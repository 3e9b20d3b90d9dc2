package cli

import (
	"fmt"
	"io"
	"strings"
)

// The shells completions are written for.
var Shells = []string{"bash", "zsh", "fish"}

// WriteCompletion writes c's completion script for shell: every option,
// each subcommand with its own options, and the words an argument takes
// (check IDs, formats, operations) as they are when it is written.
func (c *Command) WriteCompletion(w io.Writer, shell string) error {
	if err := OneOf("", "shell", shell, Shells); err != nil {
		return err
	}
	var b strings.Builder
	switch shell {
	case "bash":
		c.bash(&b)
	case "zsh":
		c.zsh(&b)
	case "fish":
		c.fish(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ident is name as a shell function name.
func ident(name string) string {
	return strings.NewReplacer("-", "_", ".", "_", " ", "_").Replace(name)
}

// words is the option's candidate words, space-separated.
func (o Option) words() string {
	if o.Words == nil {
		return ""
	}
	return strings.Join(o.Words(), " ")
}

func (c *Command) bash(b *strings.Builder) {
	fn := "_" + ident(c.Name)
	fmt.Fprintf(b, "# bash completion for %s; generated from its option table.\n", c.Name)
	fmt.Fprintf(b, "%s() {\n\tlocal cur prev sub i\n\tcur=${COMP_WORDS[COMP_CWORD]}\n\tprev=${COMP_WORDS[COMP_CWORD-1]}\n\tsub=\n", fn)
	if len(c.Commands) > 0 {
		fmt.Fprintf(b, "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n\t\tcase ${COMP_WORDS[i]} in %s) sub=${COMP_WORDS[i]}; break ;; esac\n\tdone\n",
			strings.Join(c.SubNames(), "|"))
	}
	b.WriteString("\tcase $sub in\n")
	for _, s := range c.Commands {
		fmt.Fprintf(b, "\t%s)\n", s.Name)
		bashOptions(b, s, "\t\t")
		b.WriteString("\t\t;;\n")
	}
	b.WriteString("\t*)\n")
	bashOptions(b, c, "\t\t")
	b.WriteString("\t\t;;\n\tesac\n}\n")
	fmt.Fprintf(b, "complete -F %s %s\n", fn, c.Name)
}

// bashOptions completes an option's argument after it, else the options
// (and, for the top command, the subcommands).
func bashOptions(b *strings.Builder, c *Command, in string) {
	fmt.Fprintf(b, "%scase $prev in\n", in)
	for _, o := range c.Options {
		if o.Arg == "" {
			continue
		}
		fmt.Fprintf(b, "%s--%s)\n", in, o.Long)
		switch o.Complete {
		case CompleteFile:
			fmt.Fprintf(b, "%s\tCOMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", in)
		case CompleteDir:
			fmt.Fprintf(b, "%s\tCOMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n", in)
		case CompleteWords:
			if o.ListWords {
				// A comma-separated list: complete the last item.
				fmt.Fprintf(b, "%s\tlocal pre=\"\" last=$cur\n%s\t[[ $cur == *,* ]] && pre=${cur%%,*}, && last=${cur##*,}\n", in, in)
				fmt.Fprintf(b, "%s\tCOMPREPLY=($(compgen -P \"$pre\" -W %q -- \"$last\")); return ;;\n", in, o.words())
			} else {
				fmt.Fprintf(b, "%s\tCOMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", in, o.words())
			}
		default:
			fmt.Fprintf(b, "%s\treturn ;;\n", in)
		}
	}
	fmt.Fprintf(b, "%sesac\n", in)
	var all []string
	for _, o := range c.Options {
		all = append(all, "--"+o.Long)
		if o.Short != 0 {
			all = append(all, "-"+string(o.Short))
		}
	}
	all = append(all, c.SubNames()...)
	fmt.Fprintf(b, "%sCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n", in, strings.Join(all, " "))
}

func (c *Command) zsh(b *strings.Builder) {
	fmt.Fprintf(b, "#compdef %s\n# zsh completion for %s; generated from its option table.\n", c.Name, c.Name)
	fn := "_" + ident(c.Name)
	fmt.Fprintf(b, "%s() {\n", fn)
	if len(c.Commands) > 0 {
		b.WriteString("\tcase ${words[2]} in\n")
		for _, s := range c.Commands {
			fmt.Fprintf(b, "\t%s)\n\t\tshift words; (( CURRENT-- ))\n\t\t_arguments -s \\\n", s.Name)
			zshSpecs(b, s, "\t\t\t")
			b.WriteString("\t\treturn ;;\n")
		}
		b.WriteString("\tesac\n")
	}
	b.WriteString("\t_arguments -s \\\n")
	zshSpecs(b, c, "\t\t")
	if len(c.Commands) > 0 {
		var subs []string
		for _, s := range c.Commands {
			subs = append(subs, fmt.Sprintf("%s\\:%s", s.Name, zshQuote(s.Summary)))
		}
		fmt.Fprintf(b, "\t\t'1:command:((%s))'\n", strings.Join(subs, " "))
	} else {
		b.WriteString("\t\t'*: :_files'\n")
	}
	fmt.Fprintf(b, "}\n%s \"$@\"\n", fn)
}

func zshSpecs(b *strings.Builder, c *Command, in string) {
	for _, o := range c.Options {
		names := "--" + o.Long
		if o.Short != 0 {
			names = "{-" + string(o.Short) + ",--" + o.Long + "}"
		}
		rep := ""
		if o.Repeat {
			rep = "*"
		}
		help := zshQuote(firstSentence(o.Help))
		arg := ""
		if o.Arg != "" {
			names += "="
			switch o.Complete {
			case CompleteFile:
				arg = ":" + o.Arg + ":_files"
			case CompleteDir:
				arg = ":" + o.Arg + ":_files -/"
			case CompleteWords:
				if o.ListWords {
					arg = ":" + o.Arg + ":_sequence compadd - " + o.words()
				} else {
					arg = ":" + o.Arg + ":(" + o.words() + ")"
				}
			default:
				arg = ":" + o.Arg + ": "
			}
		}
		if o.Short != 0 {
			fmt.Fprintf(b, "%s%s%s'[%s]%s' \\\n", in, rep, names, help, arg)
		} else {
			fmt.Fprintf(b, "%s'%s%s[%s]%s' \\\n", in, rep, names, help, arg)
		}
	}
}

// zshQuote makes s safe inside a single-quoted _arguments spec.
func zshQuote(s string) string {
	return strings.NewReplacer("'", "'\\''", "[", "\\[", "]", "\\]", ":", "\\:").Replace(s)
}

func (c *Command) fish(b *strings.Builder) {
	fmt.Fprintf(b, "# fish completion for %s; generated from its option table.\n", c.Name)
	subs := strings.Join(c.SubNames(), " ")
	if subs != "" {
		for _, s := range c.Commands {
			fmt.Fprintf(b, "complete -c %s -f -n 'not __fish_seen_subcommand_from %s' -a %s -d %s\n", c.Name, subs, s.Name, fishQuote(s.Summary))
		}
	}
	fishOptions(b, c, c.Name, func() string {
		if subs == "" {
			return ""
		}
		return "not __fish_seen_subcommand_from " + subs
	}())
	for _, s := range c.Commands {
		fishOptions(b, s, c.Name, "__fish_seen_subcommand_from "+s.Name)
	}
}

func fishOptions(b *strings.Builder, c *Command, prog, cond string) {
	for _, o := range c.Options {
		fmt.Fprintf(b, "complete -c %s", prog)
		if cond != "" {
			fmt.Fprintf(b, " -n '%s'", cond)
		}
		fmt.Fprintf(b, " -l %s", o.Long)
		if o.Short != 0 {
			fmt.Fprintf(b, " -s %c", o.Short)
		}
		if o.Arg != "" {
			switch o.Complete {
			case CompleteFile:
				b.WriteString(" -r -F")
			case CompleteDir:
				b.WriteString(" -r -a '(__fish_complete_directories)'")
			case CompleteWords:
				fmt.Fprintf(b, " -r -f -a %s", fishQuote(o.words()))
			default:
				b.WriteString(" -r -f")
			}
		}
		fmt.Fprintf(b, " -d %s\n", fishQuote(firstSentence(o.Help)))
	}
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// firstSentence is the help's first sentence, for the one-line
// descriptions shells show.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, ".")
}
