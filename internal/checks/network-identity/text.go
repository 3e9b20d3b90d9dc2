package networkidentity

import "github.com/guestcheck/guestcheck/internal/parse/netval"

// quoteShort quotes s for a message, cut so that a finding stays one
// readable line.
func quoteShort(s string) string { return netval.Quote(s) }
