// Package sudoers reads sudoers(5) as far as cloud-init's sudo rules need:
// logical lines (backslash continuation, comments removed), and the
// include directives (#include, @include, #includedir, @includedir) that
// decide which files sudo reads. It does not evaluate the grammar: a rule
// is compared as text, with whitespace normalised. Parsing is pure; Load
// reads files only through the Source it is given.
package sudoers

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// DefaultPath is the main sudoers file.
const DefaultPath = "/etc/sudoers"

// maxDepth is sudo's limit on nested includes.
const maxDepth = 128

// Line is one logical line that is not a comment or an include.
type Line struct {
	File string
	Line int // first physical line, 1-based
	Text string
}

// At is "file:line".
func (l Line) At() string { return fmt.Sprintf("%s:%d", l.File, l.Line) }

// Include is one include directive.
type Include struct {
	Dir    bool   // includedir
	Target string // as written, made absolute
	Line   int
}

var includeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[#@](include|includedir)[ \t]+(.+)$`) })

// Parse splits one file into logical lines and include directives.
func Parse(name string, b []byte) ([]Line, []Include) {
	var lines []Line
	var incs []Include
	phys := strings.Split(string(b), "\n")
	for i := 0; i < len(phys); i++ {
		start := i + 1
		s := strings.TrimRight(phys[i], "\r")
		for strings.HasSuffix(s, "\\") && i+1 < len(phys) {
			i++
			s = strings.TrimSuffix(s, "\\") + strings.TrimRight(phys[i], "\r")
		}
		t := strings.TrimSpace(s)
		if m := includeRE().FindStringSubmatch(t); m != nil {
			target := strings.Trim(strings.TrimSpace(m[2]), `"`)
			if !strings.HasPrefix(target, "/") {
				// sudo 1.9+: relative to the including file's directory.
				target = path.Join(path.Dir(name), target)
			}
			incs = append(incs, Include{Dir: m[1] == "includedir", Target: path.Clean(target), Line: start})
			continue
		}
		t = stripComment(t)
		if t == "" {
			continue
		}
		lines = append(lines, Line{File: name, Line: start, Text: t})
	}
	return lines, incs
}

// stripComment removes a '#' comment. "#123" after whitespace or at a
// word start is a uid in sudoers, so '#' followed by a digit is kept.
func stripComment(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] != '#' {
			continue
		}
		if i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
			continue
		}
		if i > 0 && s[i-1] == '\\' {
			continue
		}
		return strings.TrimSpace(s[:i])
	}
	return s
}

// Source is how Load reads files.
type Source interface {
	ReadFile(name string) ([]byte, error)
	// ReadDirNames lists the names (not paths) in dir.
	ReadDirNames(dir string) ([]string, error)
}

// Config is the files sudo reads, in order, and their rules.
type Config struct {
	Lines []Line
	// Files lists every file read, in reading order.
	Files []string
	// Dirs lists every directory included with includedir.
	Dirs     []string
	Problems []string
}

// Reads reports whether sudo reads file.
func (c Config) Reads(file string) bool {
	for _, f := range c.Files {
		if f == file {
			return true
		}
	}
	return false
}

// Load reads main and everything it includes. A missing included file is
// a problem, as sudo reports it; a missing includedir is not.
func Load(main string, src Source) Config {
	var c Config
	c.load(main, src, 0, true)
	return c
}

func (c *Config) load(name string, src Source, depth int, required bool) {
	if depth > maxDepth {
		c.Problems = append(c.Problems, name+": includes nested too deep")
		return
	}
	b, err := src.ReadFile(name)
	if err != nil {
		if required {
			// A read error names its file already (*PathError): once is enough.
			msg := err.Error()
			if !strings.Contains(msg, name) {
				msg = name + ": " + msg
			}
			c.Problems = append(c.Problems, msg)
		}
		return
	}
	c.Files = append(c.Files, name)
	lines, incs := Parse(name, b)
	c.Lines = append(c.Lines, lines...)
	for _, inc := range incs {
		if !inc.Dir {
			c.load(inc.Target, src, depth+1, true)
			continue
		}
		c.Dirs = append(c.Dirs, inc.Target)
		names, err := src.ReadDirNames(inc.Target)
		if err != nil {
			continue
		}
		sort.Strings(names)
		for _, n := range names {
			// sudo skips names ending in '~' or containing '.'.
			if strings.HasSuffix(n, "~") || strings.Contains(n, ".") {
				continue
			}
			c.load(path.Join(inc.Target, n), src, depth+1, false)
		}
	}
}

// Normalize collapses runs of whitespace, so rules compare as sudo reads them.
func Normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// FindRule returns the lines of file that equal "user rule" after
// normalising whitespace.
func (c Config) FindRule(file, user, rule string) (Line, bool) {
	want := Normalize(user + " " + rule)
	for _, l := range c.Lines {
		if l.File == file && Normalize(l.Text) == want {
			return l, true
		}
	}
	return Line{}, false
}
