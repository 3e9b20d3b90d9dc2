package netcheck

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/guestfile/netval"
)

// lines splits b into lines without their terminators. A final line
// without a newline is kept.
func lines(b []byte) []string {
	s := strings.Split(string(b), "\n")
	if len(s) > 0 && s[len(s)-1] == "" {
		s = s[:len(s)-1]
	}
	for i, l := range s {
		s[i] = strings.TrimSuffix(l, "\r")
	}
	return s
}

// quoteShort quotes s for a message, cut so that a finding stays one
// readable line.
func quoteShort(s string) string { return netval.Quote(s) }
