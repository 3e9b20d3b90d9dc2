package netintent

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (
)
