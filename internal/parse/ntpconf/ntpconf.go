// Package ntpconf parses the configuration files of chronyd (chrony.conf(5)
// and its .sources files) and ntpd (ntp.conf(5)): one directive per line,
// its arguments separated by blanks. Both name their time sources with
// server, pool and peer lines; chrony adds refclock and pulls in more files
// with include, confdir and sourcedir, ntpd with includefile. Parsing is
// pure; the caller follows the includes.
package ntpconf

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Flavor selects the comment rules.
type Flavor int

const (
	// Chrony: a line whose first character is '#', '%', ';' or '!' is a comment.
	Chrony Flavor = iota
	// NTP: '#' starts a comment anywhere on the line.
	NTP
)

// Directive is one configuration line.
type Directive struct {
	Keyword string // lower case
	Args    []string
	Line    int
}

// Parse splits a file into directives. Its problems are the lines that
// cannot be read; they carry no file name, which the caller adds with In.
func Parse(b []byte, fl Flavor) ([]Directive, []problem.Problem) {
	var out []Directive
	var probs []problem.Problem
	for i, l := range strings.Split(string(b), "\n") {
		n := i + 1
		if !utf8.ValidString(l) || strings.ContainsRune(l, 0) {
			probs = append(probs, problem.Problem{Line: n, Msg: "line is not text"})
			continue
		}
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		switch fl {
		case Chrony:
			if strings.ContainsRune("#%;!", rune(t[0])) {
				continue
			}
		case NTP:
			t, _, _ = strings.Cut(t, "#")
		}
		f := strings.Fields(t)
		if len(f) == 0 {
			continue
		}
		out = append(out, Directive{Keyword: strings.ToLower(f[0]), Args: f[1:], Line: n})
	}
	return out, probs
}

// Source is a time source a configuration names.
type Source struct {
	Kind string // server, pool, peer, refclock
	Host string // the host, or the refclock driver and device
	Line int
}

// Sources returns the directives that name time sources. A server, pool
// or peer line without a host is a problem (chronyd and ntpd reject it).
func Sources(ds []Directive) ([]Source, []problem.Problem) {
	var out []Source
	var probs []problem.Problem
	for _, d := range ds {
		switch d.Keyword {
		case "server", "pool", "peer", "refclock":
			if len(d.Args) == 0 {
				probs = append(probs, problem.Problem{Line: d.Line, Msg: fmt.Sprintf("%s without a host", d.Keyword)})
				continue
			}
			host := d.Args[0]
			if d.Keyword == "refclock" && len(d.Args) > 1 {
				host += " " + d.Args[1]
			}
			out = append(out, Source{Kind: d.Keyword, Host: host, Line: d.Line})
		}
	}
	return out, probs
}
