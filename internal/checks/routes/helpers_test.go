package routes

import (
	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
	"github.com/guestcheck/guestcheck/internal/testenv/netstatetest"
)

// The helpers the package's tests share with the other network checks'
// tests: fake guest roots, a live Env, the rules every finding is held to.
var (
	writeRoot         = nstest.WriteRoot
	liveEnv           = netstatetest.LiveEnv
	assertConventions = netstatetest.AssertConventions
	codesOf           = netstatetest.Codes
	find              = netstatetest.Find
	mustFind          = netstatetest.MustFind
)
