// Package testenv decides in one place what a test does when it needs root
// or a system tool. As root, which is how CI and `make test` on a build
// machine run, a missing tool fails the test: scripts/test-deps.sh installs
// every tool, so a missing one is a broken setup, not a reason to pass
// quietly. As any other user the test skips, and the skip is appended to
// the file named by $GUESTCHECK_SKIP_LOG so that `make test` can end with
// one line naming the tiers and tools that did not run.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// SkipLogEnv names the environment variable holding the skip log's path.
const SkipLogEnv = "GUESTCHECK_SKIP_LOG"

// IsRoot reports whether the tests run with root's privileges.
func IsRoot() bool { return os.Geteuid() == 0 }

// RequireRoot skips the test for a non-root user, recording the skip under
// the "root" tier with why as the reason.
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if !IsRoot() {
		Skip(t, "root", why)
	}
}

// RequireUnprivileged skips the test when it runs as root, for tests of
// permission errors that root does not get.
func RequireUnprivileged(t testing.TB, why string) {
	t.Helper()
	if IsRoot() {
		Skip(t, "unprivileged", why)
	}
}

// Tool returns the path of a system tool, searching PATH and then the sbin
// directories that an unprivileged user's PATH often lacks. When the tool is
// missing it fails the test as root and skips it otherwise; pkg names the
// Debian package that provides it.
func Tool(t testing.TB, name, pkg string) string {
	t.Helper()
	if p, ok := Look(name); ok {
		return p
	}
	Missing(t, "tool:"+name, fmt.Sprintf("%s not found: install the Debian package %s (bash scripts/test-deps.sh install)", name, pkg))
	return ""
}

// Missing is for a facility the test needs that root always has on the
// machines this suite supports (a tool, a mount, netlink, xattrs): as root
// its absence fails the test; as another user the test skips under tier.
func Missing(t testing.TB, tier, reason string) {
	t.Helper()
	if IsRoot() {
		t.Fatal(reason)
	}
	Skip(t, tier, reason)
}

// Look finds a system tool in PATH or in /usr/sbin and /sbin.
func Look(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// Skip records the skip under tier (such as "root" or "tool:mmdebstrap")
// and skips the test with reason.
func Skip(t testing.TB, tier, reason string) {
	t.Helper()
	record(t.Name(), tier, reason)
	t.Skip(reason)
}

// record appends one tab-separated line to the skip log. A failure to
// write is ignored: the log only feeds a summary line.
func record(test, tier, reason string) {
	path := os.Getenv(SkipLogEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	clean := func(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }
	// One write per line: O_APPEND keeps lines from parallel test
	// processes whole.
	f.WriteString(clean(tier) + "\t" + clean(test) + "\t" + clean(reason) + "\n")
}
