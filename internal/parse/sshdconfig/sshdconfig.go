// Package sshdconfig parses OpenSSH's sshd_config(5) the way sshd reads it:
// keywords are case-insensitive, "Keyword value" and "Keyword=value" are
// the same, arguments may be quoted, Include pulls in drop-ins (globs
// sorted, paths relative to /etc/ssh), and for each keyword the first value
// wins. Match blocks are kept as conditional: they override the global
// value only for the connections they match, so they are reported beside
// it rather than folded into it. Parsing is pure; Load reads files only
// through the Source it is given.
package sshdconfig

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Dir is where sshd resolves relative Include paths (SSHDIR).
const Dir = "/etc/ssh"

// DefaultPath is the server configuration file sshd reads without -f.
const DefaultPath = "/etc/ssh/sshd_config"

// maxDepth is sshd's SERVCONF_MAX_DEPTH: deeper Include nesting is an error.
const maxDepth = 16

// Line is one non-comment line of one file.
type Line struct {
	// Keyword is as written; compare with strings.EqualFold or use Key.
	Keyword string
	// Args are the arguments after the keyword, unquoted.
	Args []string
	// Line is 1-based.
	Line int
}

// Key is the keyword in lower case, the form sshd -T prints.
func (l Line) Key() string { return strings.ToLower(l.Keyword) }

// at is a problem at file:line.
func at(file string, line int, msg string) problem.Problem {
	return problem.Problem{File: file, Line: line, Msg: msg}
}

// Parse splits one file's bytes into lines; each line sshd rejects (it
// then refuses to start) is a problem. It does not follow Include.
func Parse(name string, b []byte) ([]Line, []problem.Problem) {
	var out []Line
	var probs []problem.Problem
	for i, raw := range strings.Split(string(b), "\n") {
		n := i + 1
		raw = strings.TrimRight(raw, " \t\r\f")
		if !utf8.ValidString(raw) || strings.ContainsRune(raw, 0) {
			probs = append(probs, at(name, n, "line is not text"))
			continue
		}
		kw, rest, ok := keyword(raw)
		if !ok {
			continue
		}
		args, err := splitArgs(rest)
		if err != nil {
			probs = append(probs, at(name, n, err.Error()))
			continue
		}
		if len(args) == 0 {
			probs = append(probs, at(name, n, fmt.Sprintf("no argument after keyword %q", kw)))
			continue
		}
		out = append(out, Line{Keyword: kw, Args: args, Line: n})
	}
	return out, probs
}

// keyword cuts the first token the way sshd's strdelim does: it ends at
// whitespace or at a single '='. Blank lines and comments report !ok.
func keyword(s string) (kw, rest string, ok bool) {
	s = strings.TrimLeft(s, " \t\r\f")
	if s == "" || s[0] == '#' {
		return "", "", false
	}
	end := strings.IndexAny(s, " \t\r\f=")
	if end < 0 {
		return s, "", true
	}
	kw, rest = s[:end], strings.TrimLeft(s[end:], " \t\r\f")
	if strings.HasPrefix(rest, "=") {
		rest = strings.TrimLeft(rest[1:], " \t\r\f")
	}
	return kw, rest, kw != ""
}

// splitArgs is sshd's argv_split with comments terminating the line:
// words split on whitespace, "..." and '...' quote, a backslash escapes a
// quote, a backslash or a space, and an unquoted '#' starting a word ends
// the line.
func splitArgs(s string) ([]string, error) {
	var args []string
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return args, nil
		}
		if s[i] == '#' {
			return args, nil
		}
		var w strings.Builder
		var quote byte
		for i < len(s) {
			c := s[i]
			switch {
			case quote == 0 && isSpace(c):
				goto done
			case c == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '"' || s[i+1] == '\'' || (quote == 0 && s[i+1] == ' ')):
				w.WriteByte(s[i+1])
				i += 2
				continue
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
			case quote != 0 && c == quote:
				quote = 0
			default:
				w.WriteByte(c)
			}
			i++
		}
	done:
		if quote != 0 {
			return nil, fmt.Errorf("invalid quotes")
		}
		args = append(args, w.String())
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\f' }

// Source is how Load reads files: the guest's filesystem in production, a
// map in tests.
type Source interface {
	ReadFile(name string) ([]byte, error)
	// Glob returns the names matching pattern (path.Match syntax), sorted.
	Glob(pattern string) ([]string, error)
}

// Match is the condition of a Match block.
type Match struct {
	Criteria string // "User backup", "Address 192.0.2.0/24", "all"
	File     string
	Line     int
}

// Directive is one keyword as it applies: globally (Match nil) or only to
// the connections its Match block matches.
type Directive struct {
	Line
	File  string
	Match *Match
}

// At is "file:line", for findings.
func (d Directive) At() string { return fmt.Sprintf("%s:%d", d.File, d.Line.Line) }

// Value is the first argument, or "".
func (d Directive) Value() string {
	if len(d.Args) == 0 {
		return ""
	}
	return d.Args[0]
}

// Config is the whole configuration after following Include.
type Config struct {
	Directives []Directive
	// Files lists every file read, in reading order.
	Files []string
	// Problems are the lines sshd rejects and the Include files that
	// cannot be followed: sshd refuses to start with any of them.
	Problems []problem.Problem
	// Denied are the files this process was not allowed to read
	// (permission denied), kept apart from Problems: sshd, as root, may
	// read them, so they say that the configuration is not known, not
	// that it is broken.
	Denied []problem.Problem
}

// Load reads main and every file it includes, in sshd's order.
func Load(main string, src Source) Config {
	var c Config
	b, err := src.ReadFile(main)
	if err != nil {
		c.readError(problem.Problem{File: main, Msg: err.Error()}, err)
		return c
	}
	c.load(main, b, nil, src, 0)
	return c
}

func (c *Config) load(name string, b []byte, match *Match, src Source, depth int) {
	c.Files = append(c.Files, name)
	lines, probs := Parse(name, b)
	c.Problems = append(c.Problems, probs...)
	// A Match in this file lasts until the next Match or the file's end;
	// sshd restores the including file's state after an Include.
	cur := match
	for _, l := range lines {
		switch l.Key() {
		case "match":
			m := &Match{Criteria: strings.Join(l.Args, " "), File: name, Line: l.Line}
			if match != nil {
				// Nested inside an outer Match (an Include within a
				// Match block): both must hold.
				m.Criteria = match.Criteria + " and " + m.Criteria
			}
			cur = m
			continue
		case "include":
			if depth+1 > maxDepth {
				c.Problems = append(c.Problems, at(name, l.Line, "Include nested too deep"))
				continue
			}
			for _, pat := range l.Args {
				if !strings.HasPrefix(pat, "/") {
					pat = path.Join(Dir, pat)
				}
				names, err := src.Glob(pat)
				if err != nil {
					c.Problems = append(c.Problems, at(name, l.Line, fmt.Sprintf("Include %s: %v", pat, err)))
					continue
				}
				for _, f := range names {
					ib, err := src.ReadFile(f)
					if err != nil {
						c.readError(problem.At(name, l.Line, "Include %s: %v", f, err), err)
						continue
					}
					c.load(f, ib, cur, src, depth+1)
				}
			}
			continue
		}
		c.Directives = append(c.Directives, Directive{Line: l, File: name, Match: cur})
	}
}

// readError records a file that could not be read as p: among Denied
// when this process was refused it, else among Problems.
func (c *Config) readError(p problem.Problem, err error) {
	if errors.Is(err, iofs.ErrPermission) {
		c.Denied = append(c.Denied, p)
		return
	}
	c.Problems = append(c.Problems, p)
}

// Unreadable returns the first file sshd can read but this process could
// not (permission denied), or nil.
func (c Config) Unreadable() *problem.Problem {
	if len(c.Denied) == 0 {
		return nil
	}
	return &c.Denied[0]
}

// First returns the global directive that wins for key (first value wins).
func (c Config) First(key string) (Directive, bool) {
	for _, d := range c.Directives {
		if d.Match == nil && strings.EqualFold(d.Keyword, key) {
			return d, true
		}
	}
	return Directive{}, false
}

// All returns every global directive for key, for keywords that
// accumulate (HostKey, Port, ListenAddress).
func (c Config) All(key string) []Directive {
	var out []Directive
	for _, d := range c.Directives {
		if d.Match == nil && strings.EqualFold(d.Keyword, key) {
			out = append(out, d)
		}
	}
	return out
}

// Conditional returns, per Match block, the first directive for key in
// it: the value that replaces the global one for matching connections.
func (c Config) Conditional(key string) []Directive {
	var out []Directive
	seen := map[*Match]bool{}
	for _, d := range c.Directives {
		if d.Match != nil && !seen[d.Match] && strings.EqualFold(d.Keyword, key) {
			seen[d.Match] = true
			out = append(out, d)
		}
	}
	return out
}

// MatchBlocks returns the Match blocks in order, each once.
func (c Config) MatchBlocks() []*Match {
	var out []*Match
	for _, d := range c.Directives {
		if d.Match != nil && !slices.Contains(out, d.Match) {
			out = append(out, d.Match)
		}
	}
	return out
}
