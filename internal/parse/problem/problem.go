// Package problem is the one shape of a parse error in guestcheck and
// sealprep: a file, a line and what is wrong there. Every parser under
// internal/parse reports with it, so that a finding, a refusal and a
// configuration error all point the operator at "file:line: why" the same
// way.
package problem

import (
	"fmt"
	"strings"
)

// Problem is one defect found in a file. Parsers keep going past it, so
// that one typo hides nothing else.
type Problem struct {
	// File is the name shown to the operator (the guest path, or what
	// fs.Root.Display gives); empty when the parser was handed bare bytes.
	File string
	// Line is 1-based; 0 when the problem concerns the whole file.
	Line int
	// Msg says what is wrong, in one line.
	Msg string
}

// String renders the problem as "file:line: message", leaving out what is
// not known.
func (p Problem) String() string {
	msg := OneLine(p.Msg)
	switch {
	case p.File != "" && p.Line > 0:
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, msg)
	case p.File != "":
		return p.File + ": " + msg
	case p.Line > 0:
		return fmt.Sprintf("line %d: %s", p.Line, msg)
	}
	return msg
}

// Error makes a Problem usable as an error.
func (p Problem) Error() string { return p.String() }

// In returns p located in file, for parsers that were handed bare bytes.
func (p Problem) In(file string) Problem {
	p.File = file
	return p
}

// At returns a problem at file:line.
func At(file string, line int, format string, args ...any) Problem {
	return Problem{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Join renders problems one per line, for a finding's detail.
func Join(ps []Problem) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "\n")
}

// OneLine folds every run of white space (newlines included) into one
// space, so that a message taken from a file or a library stays one line.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t\v\f") && !strings.Contains(s, "  ") && strings.TrimSpace(s) == s {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
