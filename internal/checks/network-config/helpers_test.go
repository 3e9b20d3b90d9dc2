package networkconfig

import "github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"

// The helpers the package's tests share with the other network checks'
// tests: fake guest roots, a live Env, the rules every finding is held to.
var (
	writeRoot = nstest.WriteRoot
)
