package main

import (
	"bytes"
	"errors"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/test/examples"
)

// hostSafe are the subcommands and options that read nothing of the
// machine they run on: an example using one runs here for real.
var hostSafe = map[string]bool{"help": true, "explain": true, "completion": true, "--help": true, "--version": true, "--list": true}

// TestExamplesParse takes every guestcheck command line of the README and
// packaging/examples/ (test/examples finds them) through the real
// parser: parseFlags and the check selection for a run, each
// subcommand's own parse for probe and check-config. The ones that read
// nothing of this machine (help, explain, completion, --help, --version,
// --list) run for real and must exit 0. test/vm runs the rest in a guest.
func TestExamplesParse(t *testing.T) {
	_, cmds, err := examples.All("../..")
	if err != nil {
		t.Fatal(err)
	}
	if parseExample([]string{"--versoin"}) == nil || parseExample([]string{"--only", "hostnam"}) == nil {
		t.Fatal("parseExample accepts a misspelt option or check ID: it proves nothing")
	}
	n := 0
	for _, c := range cmds {
		if c.Tool != "guestcheck" {
			continue
		}
		n++
		if len(c.Args) > 0 && hostSafe[c.Args[0]] {
			var out, errb bytes.Buffer
			if code := run(c.Args, &out, &errb, checks.All); code != 0 {
				t.Errorf("%s: %s: exit %d, want 0\n%s", c.Where, c.Line, code, errb.String())
			}
			continue
		}
		if err := parseExample(c.Args); err != nil {
			t.Errorf("%s: %s: %v", c.Where, c.Line, err)
		} else {
			t.Logf("%s: %s: parsed, not run here", c.Where, c.Line)
		}
	}
	if n == 0 {
		t.Fatal("no guestcheck command line in the examples: the walk is broken")
	}
}

// parseExample parses args as guestcheck would, up to the point where it
// would read the machine.
func parseExample(args []string) error {
	cmd := command(checks.All)
	if len(args) > 0 {
		switch sub := cmd.Sub(args[0]); {
		case args[0] == "probe":
			// runProbe's parse: options, no argument, the timeout.
			v, err := sub.Parse(args[1:])
			if err == nil && len(v.Args) > 0 {
				return errors.New("unexpected argument " + v.Args[0])
			}
			if err == nil {
				_, err = v.Duration("timeout")
			}
			return err
		case args[0] == "check-config":
			var out, errb bytes.Buffer
			if _, code := onlyArg(sub, args[1:], &out, &errb, true); code >= 0 {
				return errors.New(errb.String())
			}
			return nil
		case args[0] == "fleet":
			// runFleet's parse: every option checked, no VM contacted.
			_, _, err := parseFleet(sub, args[1:])
			return err
		case args[0] == "freeze-drill":
			// runDrill's parse: every option checked, no VM frozen.
			_, _, err := parseDrill(sub, args[1:])
			return err
		case sub != nil:
			return errors.New("no parse-only walk for guestcheck " + args[0] + ": add one to TestExamplesParse")
		}
	}
	o, err := parseFlags(cmd, args)
	if err != nil {
		return err
	}
	_, err = runner.Select(checks.All, config.Default(), o.only, o.skip)
	return err
}
