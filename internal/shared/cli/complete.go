package cli

import (
	"fmt"
	"io"
	"slices"
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
	fmt.Fprintf(b, "%s() {\n\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev= sub= i j=$((COMP_CWORD-1)) fmt= brk=\n", fn)
	// bash splits --format=json and json:FILE into words at "=" and ":"
	// (COMP_WORDBREAKS), and replaces only what follows the last break:
	// find the option behind the breaks, and the FMT before a colon.
	b.WriteString("\tif [[ $cur == [=:] ]]; then cur= j=$COMP_CWORD; fi\n")
	b.WriteString("\tif [[ ${COMP_WORDS[j]} == : ]]; then fmt=${COMP_WORDS[j-1]}: brk=1 j=$((j-2)); fi\n")
	b.WriteString("\tif [[ ${COMP_WORDS[j]} == = ]]; then brk=1 j=$((j-1)); fi\n")
	b.WriteString("\tprev=${COMP_WORDS[j]}\n")
	if len(c.Commands) > 0 {
		fmt.Fprintf(b, "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n\t\tcase ${COMP_WORDS[i]} in %s) sub=${COMP_WORDS[i]}; break ;; esac\n\tdone\n",
			strings.Join(c.SubNames(), "|"))
	}
	// An option's argument completes the same under every command that
	// has it, so one case serves them all.
	b.WriteString("\tcase $prev in\n")
	seen := map[string]bool{}
	for _, cmd := range append([]*Command{c}, c.Commands...) {
		for _, o := range cmd.Options {
			if o.Arg != "" && !seen[o.Long] {
				seen[o.Long] = true
				bashArgument(b, o)
			}
		}
	}
	// What follows a break is an option's argument or nothing.
	b.WriteString("\tesac\n\t[[ -n $brk ]] && return\n\tcase $sub in\n")
	// Commands with the same words share one branch.
	var order []string
	branches := map[string][]string{}
	for _, s := range c.Commands {
		w := strings.Join(s.completionWords(), " ")
		if _, ok := branches[w]; !ok {
			order = append(order, w)
		}
		branches[w] = append(branches[w], s.Name)
	}
	for _, w := range order {
		fmt.Fprintf(b, "\t%s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", strings.Join(branches[w], "|"), w)
	}
	fmt.Fprintf(b, "\t*) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n\tesac\n}\n", strings.Join(append(c.completionWords(), c.SubNames()...), " "))
	fmt.Fprintf(b, "complete -F %s %s\n", fn, c.Name)
}

// completionWords are what a word after the command may be: its options,
// then the words its positional argument takes.
func (c *Command) completionWords() []string {
	var all []string
	for _, o := range c.Options {
		all = append(all, "--"+o.Long)
		if o.Short != 0 {
			all = append(all, "-"+string(o.Short))
		}
	}
	if c.ArgWords != nil {
		all = append(all, c.ArgWords()...)
	}
	return all
}

// bashArgument is the case that completes option o's argument.
func bashArgument(b *strings.Builder, o Option) {
	var reply string
	switch o.Complete {
	case CompleteFile:
		reply = `COMPREPLY=($(compgen -f -- "$cur"))`
	case CompleteDir:
		reply = `COMPREPLY=($(compgen -d -- "$cur"))`
	case CompleteFormatFile:
		// After "FMT:" a file (bash split at the colon, or a
		// COMP_WORDBREAKS without one left it in cur); before it, a
		// format with its colon, without the space, or a file.
		reply = fmt.Sprintf(`local pre=; [[ -z $fmt && $cur == *:* ]] && pre=${cur%%%%:*}: cur=${cur#*:}; if [[ -n $fmt$pre ]]; then COMPREPLY=($(compgen -P "$pre" -f -- "$cur")); else COMPREPLY=($(compgen -S : -W %q -- "$cur") $(compgen -f -- "$cur")); [[ ${#COMPREPLY[@]} == 1 && $COMPREPLY == *: ]] && compopt -o nospace 2>/dev/null; fi`, o.words())
	case CompleteWords:
		switch {
		case o.ListWords && o.SignedWords != nil:
			// A comma-separated list: complete its last item, and after
			// a sign the words that take one.
			reply = fmt.Sprintf(`local pre= last=$cur w=%q; [[ $cur == *,* ]] && pre=${cur%%,*}, && last=${cur##*,}; [[ $last == [-+]* ]] && pre=$pre${last:0:1} last=${last:1} w=%q; COMPREPLY=($(compgen -P "$pre" -W "$w" -- "$last"))`,
				o.words(), strings.Join(o.SignedWords(), " "))
		case o.ListWords:
			// A comma-separated list: complete its last item.
			reply = fmt.Sprintf(`local pre= last=$cur; [[ $cur == *,* ]] && pre=${cur%%,*}, && last=${cur##*,}; COMPREPLY=($(compgen -P "$pre" -W %q -- "$last"))`, o.words())
		default:
			reply = fmt.Sprintf(`COMPREPLY=($(compgen -W %q -- "$cur"))`, o.words())
		}
	}
	if reply == "" {
		fmt.Fprintf(b, "\t--%s) return ;;\n", o.Long)
		return
	}
	fmt.Fprintf(b, "\t--%s) %s; return ;;\n", o.Long, reply)
}

// allWords is every word o's argument may be: its words, and each signed
// word after "-" and "+", for the shells that take one list.
func (o Option) allWords() string {
	w := o.words()
	if o.SignedWords != nil {
		for _, s := range o.SignedWords() {
			w += " -" + s + " +" + s
		}
	}
	return w
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
			msg := strings.ReplaceAll(o.Arg, ":", "\\:") // "[FMT:]FILE"
			switch o.Complete {
			case CompleteFile:
				arg = ":" + msg + ":_files"
			case CompleteDir:
				arg = ":" + msg + ":_files -/"
			case CompleteFormatFile:
				// After "FMT:" a file; before it a format (with its
				// colon, no space) or a file. A colon in the action is
				// escaped, or _arguments splits the spec there.
				arg = ":" + msg + `:{if compset -P "*\:"; then _files; else compadd -S "\:" -- ` + o.words() + `; _files; fi}`
			case CompleteWords:
				if o.ListWords {
					arg = ":" + msg + ":_sequence compadd - " + o.allWords()
				} else {
					arg = ":" + msg + ":(" + o.words() + ")"
				}
			default:
				arg = ":" + msg + ": "
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
	if c.anyOption(func(o Option) bool { return o.ListWords }) {
		// A comma-separated list: the words, each behind the items
		// already typed.
		fmt.Fprintf(b, `function __%s_list
	set -l pre (string match -r -- '^.*,' (commandline -ct))
	set -q pre[1]; or set pre ''
	printf '%%s\n' $pre$argv
end
`, ident(c.Name))
	}
	if c.anyOption(func(o Option) bool { return o.Complete == CompleteFormatFile }) {
		// [FMT:]FILE: after "FMT:" the files, each behind that FMT;
		// before it the formats with their colon, and the files.
		fmt.Fprintf(b, `function __%s_format_file
	set -l tok (commandline -ct)
	set -l pre (string match -r -- '^[^/:]*:' $tok)
	if test -n "$pre"
		__fish_complete_path (string replace -- $pre '' $tok) | string replace -r -- '^' $pre
	else
		printf '%%s:\n' $argv
		__fish_complete_path $tok
	end
end
`, ident(c.Name))
	}
	subs := strings.Join(c.SubNames(), " ")
	if subs != "" {
		for _, s := range c.Commands {
			fmt.Fprintf(b, "complete -c %s -f -n 'not __fish_seen_subcommand_from %s' -a %s -d %s\n", c.Name, subs, s.Name, fishQuote(s.Summary))
		}
	}
	top := ""
	if subs != "" {
		top = "not __fish_seen_subcommand_from " + subs
	}
	for _, o := range c.Options {
		fishOption(b, c.Name, top, o)
	}
	// An option several commands share is one line naming them all, so
	// that the script says each option once.
	var order []string
	with := map[string][]string{}
	opt := map[string]Option{}
	for _, s := range c.Commands {
		for _, o := range s.Options {
			var spec strings.Builder
			fishOption(&spec, "", "", o)
			k := spec.String()
			if _, ok := with[k]; !ok {
				order = append(order, k)
				opt[k] = o
			}
			with[k] = append(with[k], s.Name)
		}
	}
	for _, k := range order {
		fishOption(b, c.Name, "__fish_seen_subcommand_from "+strings.Join(with[k], " "), opt[k])
	}
}

// anyOption reports whether an option of c or of its commands is such.
func (c *Command) anyOption(such func(Option) bool) bool {
	for _, cmd := range append([]*Command{c}, c.Commands...) {
		if slices.ContainsFunc(cmd.Options, such) {
			return true
		}
	}
	return false
}

// fishOption writes one complete line for option o of prog under cond.
func fishOption(b *strings.Builder, prog, cond string, o Option) {
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
		case CompleteFormatFile:
			fmt.Fprintf(b, " -r -f -a %s", fishQuote("(__"+ident(prog)+"_format_file "+o.words()+")"))
		case CompleteWords:
			if o.ListWords {
				fmt.Fprintf(b, " -r -f -a %s", fishQuote("(__"+ident(prog)+"_list "+o.allWords()+")"))
			} else {
				fmt.Fprintf(b, " -r -f -a %s", fishQuote(o.words()))
			}
		default:
			b.WriteString(" -r -f")
		}
	}
	fmt.Fprintf(b, " -d %s\n", fishQuote(firstSentence(o.Help)))
	if o.SignedWords != nil && prog != "" {
		// fish completes a word that starts with "-" as an option, even
		// after one that takes an argument: "--ops -ss" needs its own line.
		if cond != "" {
			cond += "; and "
		}
		fmt.Fprintf(b, "complete -c %s -n %s -f -a %s\n", prog, fishQuote(cond+"test (commandline -opc)[-1] = --"+o.Long), fishQuote("(__"+ident(prog)+"_list "+o.allWords()+")"))
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
