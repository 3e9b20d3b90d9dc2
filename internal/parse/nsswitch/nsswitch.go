// Package nsswitch reads /etc/nsswitch.conf, the Name Service Switch
// configuration: which sources (files, dns, myhostname, resolve, …) glibc
// asks, in order, for each database (hosts, passwd, …). guestcheck cannot
// load NSS modules itself, so its checks read this file to know what a
// glibc program would consult that a static binary does not.
package nsswitch

import (
	"bytes"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Entry is one database line of nsswitch.conf.
type Entry struct {
	// Line is the 1-based line number.
	Line int
	// Database is the name before the colon ("hosts").
	Database string
	// Sources are the services in order, lower-cased as glibc compares
	// them, without the [STATUS=action] items between them.
	Sources []string
}

// Parse returns the database lines of b in file order. A '#' starts a
// comment. A line with no colon, and an action item that is never closed
// (which hides every source after it), are reported as problems; parsing
// goes on past them, as glibc does.
func Parse(b []byte) ([]Entry, []problem.Problem) {
	var entries []Entry
	var problems []problem.Problem
	for i, raw := range bytes.Split(b, []byte("\n")) {
		line := string(raw)
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			problems = append(problems, problem.At("", i+1, "no ':' after a database name"))
			continue
		}
		srcs, open := sources(rest)
		if open {
			problems = append(problems, problem.At("", i+1, "a '[' action is not closed, so the sources after it are ignored"))
		}
		entries = append(entries, Entry{Line: i + 1, Database: strings.TrimSpace(key), Sources: srcs})
	}
	return entries, problems
}

// sources splits the words after a database's colon into its sources,
// leaving out the [STATUS=action] items; open is true when an item is
// still open at the end of the line.
func sources(rest string) (srcs []string, open bool) {
	for _, w := range strings.Fields(rest) {
		// Actions may contain spaces: "[ NOTFOUND = return ]".
		if strings.HasPrefix(w, "[") {
			open = true
		}
		if !open {
			srcs = append(srcs, strings.ToLower(w))
		}
		if strings.HasSuffix(w, "]") {
			open = false
		}
	}
	return srcs, open
}

// Lookup returns the sources configured for database db and whether a
// line for it exists. When db appears more than once the last line wins,
// as in Go's resolver, which is the resolver guestcheck has.
func Lookup(entries []Entry, db string) (sources []string, found bool) {
	for _, e := range entries {
		if e.Database == db {
			sources, found = e.Sources, true
		}
	}
	return sources, found
}
