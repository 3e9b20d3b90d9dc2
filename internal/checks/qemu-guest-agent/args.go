package qemuguestagent

import (
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/envfile"
)

// Args is what qemu-ga's command line sets, in the order given.
type Args struct {
	Method, Path, StateDir, Config string
	// Hook is the -F argument; HookSet says -F was given (an empty Hook
	// then means the compiled-in default, CONFDIR/fsfreeze-hook).
	Hook    string
	HookSet bool
	Block   []string
	Allow   []string
	// BlockGiven and AllowGiven say the options appeared at all (qemu-ga
	// 8.1-9.0 refuse both together).
	BlockGiven, AllowGiven bool
	// Unmodelled lists options that change filtering in ways guestcheck
	// does not model (-u, -e, -i of newer agents).
	Unmodelled []string
	// DumpConf, Help and Version mean the process exits at once.
	DumpConf, Help, Version bool
}

// option is one getopt_long entry.
type option struct {
	long  string
	short byte
	arg   int // 0 none, 1 required, 2 optional
	// since/until bound the versions that accept it (until exclusive).
	sinceMaj, sinceMin int
	untilMaj, untilMin int
}

var options = []option{
	{long: "help", short: 'h'},
	{long: "version", short: 'V'},
	{long: "config", short: 'c', arg: 1, sinceMaj: 9, sinceMin: 1},
	{long: "dump-conf", short: 'D'},
	{long: "logfile", short: 'l', arg: 1},
	{long: "pidfile", short: 'f', arg: 1},
	{long: "fsfreeze-hook", short: 'F', arg: 2},
	{long: "method", short: 'm', arg: 1},
	{long: "path", short: 'p', arg: 1},
	{long: "daemonize", short: 'd'},
	{long: "block-rpcs", short: 'b', arg: 1, sinceMaj: 7, sinceMin: 2},
	{long: "blacklist", short: 'b', arg: 1, untilMaj: 9, untilMin: 1},
	{long: "allow-rpcs", short: 'a', arg: 1, sinceMaj: 8, sinceMin: 1},
	{long: "statedir", short: 't', arg: 1},
	{long: "retry-path", short: 'r'},
	{long: "verbose", short: 'v'},
	{long: "confidential", short: 'i', sinceMaj: 9, sinceMin: 1},
	{long: "no-unrestricted", short: 'u', sinceMaj: 9, sinceMin: 1},
	{long: "no-user-auth", short: 'e', sinceMaj: 9, sinceMin: 1},
}

func (o option) in(v Version) bool {
	if o.sinceMaj > 0 && !v.AtLeast(o.sinceMaj, o.sinceMin) {
		return false
	}
	if o.untilMaj > 0 && v.Known && v.AtLeast(o.untilMaj, o.untilMin) {
		return false
	}
	return true
}

// ParseArgs parses argv (without argv[0]) with the option table of
// version v, following getopt_long: clustered short options, attached or
// separate arguments, optional arguments only attached ("-F/path"), long
// options abbreviated to any unambiguous prefix, "--" ending options and
// other words ignored. An option the version does not know is an error:
// qemu-ga exits with "invalid option".
func ParseArgs(v Version, argv []string) (Args, error) {
	var a Args
	var opts []option
	for _, o := range options {
		if o.in(v) {
			opts = append(opts, o)
		}
	}
	for i := 0; i < len(argv); i++ {
		w := argv[i]
		switch {
		case w == "--":
			return a, nil
		case strings.HasPrefix(w, "--"):
			name, val, hasVal := strings.Cut(w[2:], "=")
			o, err := findLong(opts, name)
			if err != nil {
				return a, err
			}
			switch {
			case o.arg == 0 && hasVal:
				return a, fmt.Errorf("option '--%s' doesn't allow an argument", o.long)
			case o.arg == 1 && !hasVal:
				if i+1 >= len(argv) {
					return a, fmt.Errorf("option '--%s' requires an argument", o.long)
				}
				i++
				val = argv[i]
			}
			a.apply(o, val, hasVal || o.arg == 1)
		case strings.HasPrefix(w, "-") && len(w) > 1:
			for j := 1; j < len(w); j++ {
				o, ok := findShort(opts, w[j])
				if !ok {
					return a, fmt.Errorf("invalid option -- '%c'", w[j])
				}
				if o.arg == 0 {
					a.apply(o, "", false)
					continue
				}
				rest := w[j+1:]
				if rest == "" && o.arg == 1 {
					if i+1 >= len(argv) {
						return a, fmt.Errorf("option requires an argument -- '%c'", o.short)
					}
					i++
					rest = argv[i]
				}
				a.apply(o, rest, rest != "" || o.arg == 1)
				break
			}
		}
	}
	return a, nil
}

func findShort(opts []option, c byte) (option, bool) {
	for _, o := range opts {
		if o.short == c {
			return o, true
		}
	}
	return option{}, false
}

// findLong resolves an exact or abbreviated long option. Prefixes that
// match several entries with the same meaning (--bl: block-rpcs and
// blacklist) are not ambiguous, as in glibc.
func findLong(opts []option, name string) (option, error) {
	var found []option
	for _, o := range opts {
		if o.long == name {
			return o, nil
		}
		if name != "" && strings.HasPrefix(o.long, name) {
			found = append(found, o)
		}
	}
	if len(found) == 0 {
		return option{}, fmt.Errorf("unrecognized option '--%s'", name)
	}
	for _, o := range found[1:] {
		if o.short != found[0].short || o.arg != found[0].arg {
			return option{}, fmt.Errorf("option '--%s' is ambiguous", name)
		}
	}
	return found[0], nil
}

func (a *Args) apply(o option, val string, has bool) {
	switch o.short {
	case 'm':
		a.Method = val
	case 'p':
		a.Path = val
	case 't':
		a.StateDir = val
	case 'c':
		a.Config = val
	case 'F':
		a.HookSet = true
		a.Hook = ""
		if has {
			a.Hook = val
		}
	case 'b':
		a.BlockGiven = true
		a.Block = append(a.Block, splitList(val)...)
	case 'a':
		a.AllowGiven = true
		a.Allow = append(a.Allow, splitList(val)...)
	case 'D':
		a.DumpConf = true
	case 'h':
		a.Help = true
	case 'V':
		a.Version = true
	case 'i', 'u', 'e':
		a.Unmodelled = append(a.Unmodelled, "--"+o.long)
	}
}

// splitList splits a list the way qemu-ga's split_list does: on ',' only,
// with no trimming, so " guest-exec" is a different (unknown) name.
func splitList(s string) []string {
	return strings.Split(s, ",")
}

// SplitExec splits a systemd ExecStart= value into words and expands
// environment variables as systemd does: a word that is exactly $NAME
// becomes the value split on whitespace, ${NAME} (or $NAME inside a word)
// is substituted in place. The first word loses its prefixes (-@:+!).
// used reports which variables were referenced.
func SplitExec(line string, env map[string]string) (words []string, used []string, err error) {
	raw, err := splitQuoted(line)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	note := func(n string) {
		if !seen[n] {
			seen[n] = true
			used = append(used, n)
		}
	}
	for i, w := range raw {
		if i == 0 {
			w.s = strings.TrimLeft(w.s, "-@:+!")
		}
		if !w.quoted && strings.HasPrefix(w.s, "$") && !strings.HasPrefix(w.s, "${") && envfile.ValidName(w.s[1:]) {
			note(w.s[1:])
			words = append(words, strings.Fields(env[w.s[1:]])...)
			continue
		}
		words = append(words, expandVars(w.s, env, note))
	}
	return words, used, nil
}

type word struct {
	s      string
	quoted bool
}

// splitQuoted splits on whitespace honouring "..." and '...' and
// backslash escapes.
func splitQuoted(s string) ([]word, error) {
	var out []word
	var cur strings.Builder
	in := false
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, word{cur.String(), quoted})
				cur.Reset()
				in, quoted = false, false
			}
		case c == '"' || c == '\'':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unbalanced quotes in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			in, quoted = true, true
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			i++
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, word{cur.String(), quoted})
	}
	return out, nil
}

func expandVars(s string, env map[string]string, note func(string)) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			sb.WriteByte(s[i])
			continue
		}
		if s[i+1] == '{' {
			end := strings.IndexByte(s[i:], '}')
			if end > 2 && envfile.ValidName(s[i+2:i+end]) {
				n := s[i+2 : i+end]
				note(n)
				sb.WriteString(env[n])
				i += end
				continue
			}
		} else {
			j := i + 1
			for j < len(s) && envfile.ValidName(s[i+1:j+1]) {
				j++
			}
			if j > i+1 {
				n := s[i+1 : j]
				note(n)
				sb.WriteString(env[n])
				i = j - 1
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}
