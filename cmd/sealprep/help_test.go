package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/seal"
)

// TestCommandHelp: plan, apply, verify and list each say what they do,
// their exit codes and examples that parse; only apply's help says it
// changes anything, and every --ops help names "all".
func TestCommandHelp(t *testing.T) {
	for _, name := range []string{"list", "plan", "apply", "verify"} {
		code, out, errs := runCmd(t, "", false, name, "--help")
		if code != 0 || errs != "" {
			t.Fatalf("%s --help: exit %d, %s", name, code, errs)
		}
		sub := command(seal.All).Sub(name)
		flat := strings.Join(strings.Fields(out), " ") // unwrapped
		for _, want := range []string{strings.Join(strings.Fields(sub.Description), " "), " Exit codes: ", " Examples: ", "or all (every operation, the opt-in ones too)"} {
			if !strings.Contains(flat, want) {
				t.Errorf("sealprep %s --help lacks %q:\n%s", name, want, out)
			}
		}
		if name != "apply" {
			for _, bad := range []string{"and seal it there", "Nothing outside it is changed"} {
				if strings.Contains(flat, bad) {
					t.Errorf("sealprep %s --help says %q, though %s changes nothing", name, bad, name)
				}
			}
		}
		if len(sub.Examples) == 0 {
			t.Errorf("sealprep %s: no examples", name)
		}
		for _, e := range sub.Examples {
			args := strings.Fields(e.Command)[1:]
			o, err := parseArgs(command(seal.All), args)
			if errors.Is(err, errHelp) || err == nil && o.cmd != name {
				t.Errorf("%s: parsed as %q (%v)", e.Command, o.cmd, err)
				continue
			}
			if err == nil {
				_, err = seal.Select(seal.All, o.ops)
			}
			if err != nil {
				t.Errorf("%s: %v", e.Command, err)
			}
		}
	}
	if _, out, _ := runCmd(t, "", false, "verify", "--help"); !strings.Contains(strings.Join(strings.Fields(out), " "), "and verify it there") {
		t.Errorf("verify --help:\n%s", out)
	}
}
