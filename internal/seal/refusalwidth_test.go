package seal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/identity"
)

// maxRefusalWidth is how wide a refusal's line may be in the text
// report, paths the user gave aside: the why on one line, the fix on the
// next, each readable on a terminal.
const maxRefusalWidth = 160

// readOnly is a target whose every mount is read-only.
type readOnly struct{ Target }

func (readOnly) ReadOnly(string) (bool, error) { return true, nil }

// TestRefusalWidth holds every refusal sealprep's operations and
// preflight give, as the text report shows it, to maxRefusalWidth
// columns, with each one's why and fix on lines of their own.
func TestRefusalWidth(t *testing.T) {
	var refs []Refusal
	add := func(name string, want int, rs []Refusal) {
		t.Helper()
		if len(rs) != want {
			t.Fatalf("%s: %d refusals, want %d: %+v", name, len(rs), want, rs)
		}
		refs = append(refs, rs...)
	}
	// Preflight: not an OS root, a read-only mount, inside a container.
	_, bare := newRoot(t, []node{f("/etc/hostname", "x\n")})
	rs, _ := Preflight(bare, Options{}, true, nil)
	add("no os-release", 1, rs)
	_, ok := newRoot(t, debianNodes())
	rs, _ = Preflight(readOnly{ok}, Options{}, true, nil)
	add("read-only", 1, rs)
	container := func(p string) ([]byte, error) {
		if p == "/proc/1/environ" {
			return []byte("container=systemd-nspawn\x00"), nil
		}
		return nil, os.ErrNotExist
	}
	rs, _ = Preflight(ok, Options{Live: true}, true, container)
	add("container", 1, rs)
	// The operations' own.
	base := []node{f("/etc/os-release", "ID=debian\n")}
	sshd := append(base, f("/usr/sbin/sshd", "ELF"), d("/etc/ssh"))
	withUnit := append(sshd, f("/usr/bin/ssh-keygen", "ELF"), f("/usr/lib/systemd/systemd", "ELF"))
	for _, c := range []struct {
		name  string
		nodes []node
		op    Operation
	}{
		{"dangling machine-id link", append(base, l("/etc/machine-id", "/var/lib/machine-id")), opMachineID},
		{"no host key regenerator", sshd, opSSHHostKeys},
		{"key unit path taken", append(withUnit, d(identity.KeygenUnitPath)), opSSHHostKeys},
		{"wants directory taken", append(withUnit, f(identity.KeygenWantsDir, "")), opSSHHostKeys},
	} {
		dir, _, _, rep := verifyOps(t, c.nodes, c.op)
		for i := range rep.Refusals {
			rep.Refusals[i].Message = strings.ReplaceAll(rep.Refusals[i].Message, dir, "")
		}
		add(c.name, 1, rep.Refusals)
	}
	// The golden plans' (encrypted credentials, and whatever else the
	// fixtures refuse).
	files, _ := filepath.Glob(filepath.Join("testdata", "plans", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var cases map[string]goldenCase
		if err := json.Unmarshal(b, &cases); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, c := range cases {
			refs = append(refs, c.Refusals...)
		}
	}
	var b strings.Builder
	writeProblems(&b, Report{Refusals: refs})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")[1:]
	if len(lines) < 2*len(refs)-2 {
		t.Errorf("%d lines for %d refusals: the fixes are not on lines of their own:\n%s", len(lines), len(refs), b.String())
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > maxRefusalWidth {
			t.Errorf("%d columns, more than %d:\n%s", n, maxRefusalWidth, l)
		}
	}
}

// TestRefusalFixOwnLine: the fix follows the why on a line of its own,
// and a forcible refusal whose fix does not name --force says it.
func TestRefusalFixOwnLine(t *testing.T) {
	var b strings.Builder
	writeProblems(&b, Report{Refusals: []Refusal{{Op: "x", Path: "/p", Message: "why", Fix: "fix it", Forcible: true}, {Op: "y", Message: "only why", Forcible: true}}})
	want := "\nRefused (2):\n  [x] /p: why\n      fix: fix it, or --force goes ahead anyway\n  [y] only why\n      fix: --force goes ahead anyway\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
