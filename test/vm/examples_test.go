//go:build vmtest

package vm

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/test/examples"
)

// exampleDir is the guest directory the examples run in, so that one
// writing to the current directory (> guestcheck.xml) leaves nothing.
const exampleDir = "/run/guestcheck-examples"

// examplePlan says whether the healthy guest runs command c and, if so,
// which exit codes the README documents for it there; else why not.
func examplePlan(c examples.Command) (codes []int, why string) {
	has := func(a string) bool { return slices.Contains(c.Args, a) }
	sub := ""
	if len(c.Args) > 0 {
		sub = c.Args[0]
	}
	switch {
	case c.Tool == "sealprep" && sub == "prove":
		return nil, "boots throwaway VMs on a host: TestVM/prove runs it on every template"
	case c.Tool == "guestcheck" && sub == "fleet":
		return nil, "surveys a hypervisor host's VMs through their agents: TestVM/fleet runs it against real domains"
	case c.Tool == "guestcheck" && sub == "freeze-drill":
		return nil, "freezes a hypervisor host's VMs through their agents: TestVM/freezedrill runs it against a real guest"
	case c.Tool == "sealprep" && (sub == "apply" || has("--image")):
		return nil, "changes the guest: the seal scenarios run sealprep apply in their own guests and images"
	case c.Tool == "sealprep" && sub == "verify":
		return []int{0, 1}, "" // 1: identity left, as on this unsealed guest
	case c.Tool == "sealprep":
		return []int{0}, ""
	case has("--freeze-test"):
		return nil, "this guest has no such mount; freeze-for-real freezes through the agent"
	case has("--root") && !has("/mnt/image"):
		return nil, "names a captured tree the guest lacks; --root is walked on fake roots by go test"
	case sub == "probe":
		return []int{0, 1}, ""
	case hostSafeSub[sub]:
		return []int{0}, ""
	case has("--exit-zero"):
		return []int{0}, ""
	}
	return []int{0, 1, 2}, "" // 3 is a usage error
}

var hostSafeSub = map[string]bool{"help": true, "explain": true, "completion": true, "--help": true, "--version": true, "--list": true, "check-config": true}

// examplesScenario runs, in the healthy guest, every guestcheck and
// sealprep command line of the README and packaging/examples/ that is
// safe on a running guest, exactly as written (sh -c for a shell line,
// the argv itself for a runcmd or probe list), and the per-boot script;
// each must exit with a code the README gives it there. The rest are
// logged with why they do not run here.
func examplesScenario(ctx context.Context, t *testing.T, v *VM) {
	ex, cmds, err := examples.All("../..")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(ctx, t, v, "/bin/mkdir", "-p", exampleDir)
	// --root /mnt/image: / bound read-only there, on a tmpfs /mnt so that
	// nothing stays on the disk the later scenarios clone.
	if r := mustExec(ctx, t, v, "/bin/sh", "-c", "mkdir -p /mnt && mount -t tmpfs none /mnt && mkdir /mnt/image && mount --bind / /mnt/image && mount -o remount,bind,ro /mnt/image"); r.Exit != 0 {
		t.Fatalf("bind / on /mnt/image: exit %d: %s", r.Exit, r.Stderr)
	}
	defer mustExec(ctx, t, v, "/bin/sh", "-c", "umount /mnt/image; umount /mnt; rm -rf "+exampleDir)
	seen := map[string]bool{}
	for _, c := range cmds {
		if (c.Tool != "guestcheck" && c.Tool != "sealprep") || seen[c.Line] {
			continue
		}
		seen[c.Line] = true
		if c.From != "" && c.From == readmeRuncmdExample(ex) {
			t.Logf("%s: %s: run by cloud-init from this guest's user-data (readme-runcmd)", c.Where, c.Line)
			continue
		}
		codes, why := examplePlan(c)
		if codes == nil {
			t.Logf("%s: %s: not run in this guest: %s", c.Where, c.Line, why)
			continue
		}
		runExample(ctx, t, v, c, codes)
	}
	for _, e := range ex {
		if e.Kind != examples.Shell || strings.Contains(e.Where, ":") {
			continue
		}
		if !strings.Contains(e.Text, "guestcheck ") || strings.Contains(e.Text, "sealprep") {
			t.Logf("%s: not run in this guest: the Packer build runs it (test/vm/packer_test.go)", e.Where)
			continue
		}
		r := mustExec(ctx, t, v, "/bin/sh", "-c", e.Text)
		if r.Exit != 0 {
			t.Errorf("%s: exit %d, want 0\n%s%s", e.Where, r.Exit, tail(r.Stdout, 10), tail(r.Stderr, 10))
		} else {
			t.Logf("%s: ran as sh -c SCRIPT: exit 0", e.Where)
		}
	}
}

// readmeRuncmdExample is the README's first cloud-config, whose runcmd
// the healthy guest's user-data runs (healthyUserData).
func readmeRuncmdExample(ex []examples.Example) string {
	for _, e := range ex {
		if e.Kind == examples.CloudConfig && strings.HasPrefix(e.Where, "README.md:") {
			return e.Where
		}
	}
	return ""
}

// runExample runs c in exampleDir and checks its exit code. A report it
// writes outside /run goes again afterwards, with the directories it made.
func runExample(ctx context.Context, t *testing.T, v *VM, c examples.Command, codes []int) {
	t.Helper()
	var made []string
	for i, a := range c.Args {
		if a != "--output" || i+1 >= len(c.Args) {
			continue
		}
		p := c.Args[i+1]
		if _, file, ok := strings.Cut(p, ":"); ok {
			p = file
		}
		if !strings.HasPrefix(p, "/run/") {
			top := mustExec(ctx, t, v, "/bin/sh", "-c", `d=$(dirname "$1"); top=$1; while [ ! -e "$d" ]; do top=$d; d=$(dirname "$d"); done; echo "$top"`, "sh", p)
			made = append(made, strings.TrimSpace(top.Stdout))
		}
	}
	var r ExecResult
	if c.Argv {
		r = mustExec(ctx, t, v, "/bin/sh", append([]string{"-c", `cd "$0" && exec "$@"`, exampleDir, c.Path}, c.Args...)...)
	} else {
		r = mustExec(ctx, t, v, "/bin/sh", "-c", `cd "$1" && eval "$2"`, "sh", exampleDir, c.Line)
	}
	for _, m := range made {
		mustExec(ctx, t, v, "/bin/rm", "-rf", m)
	}
	// probe says a usage error on stdout and exits 1, like not ready; its
	// stderr carries only usage errors.
	if c.Tool == "guestcheck" && len(c.Args) > 0 && c.Args[0] == "probe" && r.Stderr != "" {
		t.Errorf("%s: %s: a usage error on stderr: %s", c.Where, c.Line, r.Stderr)
	}
	if !slices.Contains(codes, r.Exit) {
		t.Errorf("%s: %s: exit %d, want one of %v\nstdout:\n%s\nstderr:\n%s", c.Where, c.Line, r.Exit, codes, tail(r.Stdout, 10), tail(r.Stderr, 10))
		return
	}
	t.Logf("%s: %s: exit %d", c.Where, c.Line, r.Exit)
}
