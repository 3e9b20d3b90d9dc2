package seal

import (
	"context"
	"strings"
)

var opRootPasswordLock = Operation{
	ID:      "root-password-lock",
	Summary: "set root's password field in /etc/shadow to \"*\": no password login, no shared hash (opt-in)",
	Doc: Doc{
		What: "sets root's password field in `/etc/shadow` to `*` (atomic rewrite, mode and label kept) " +
			"unless it already holds no hash (`*`, `!`, `!!`, `!*`, `*LOCK*`)",
		Why: "changes how the console can be used",
	},
	Plan: planRootPasswordLock,
}

func planRootPasswordLock(ctx context.Context, p *Planner) ([]Action, error) {
	return p.rewritePath("/etc/shadow", "one root password hash shared by every clone; cloud-init or the console sets the clone's",
		lockRootPassword)
}

// lockedFields are password fields that already allow no password login
// and carry no hash.
var lockedFields = map[string]bool{"*": true, "!": true, "!*": true, "!!": true, "*LOCK*": true}

// lockRootPassword sets root's password field to "*" unless it is already
// a hash-free lock. Every other byte of the file stays.
func lockRootPassword(b []byte) []byte {
	lines := splitKeepNL(b)
	var out []byte
	for _, l := range lines {
		s := string(l)
		if strings.HasPrefix(s, "root:") {
			f := strings.SplitN(s, ":", 3)
			if len(f) == 3 && !lockedFields[f[1]] {
				s = f[0] + ":*:" + f[2]
			}
		}
		out = append(out, s...)
	}
	return out
}
