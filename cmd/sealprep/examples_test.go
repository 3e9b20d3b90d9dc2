package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/test/examples"
)

// TestExamplesParse takes every sealprep command line of the README and
// packaging/examples/ (test/examples finds them) through the real
// parser: parseArgs and the operation selection (prove selects none). The ones that read
// nothing of this machine (list, help, completion, --help, --version) run
// for real and must exit 0; test/vm runs plan and verify in a guest.
func TestExamplesParse(t *testing.T) {
	_, cmds, err := examples.All("../..")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cmds {
		if c.Tool != "sealprep" {
			continue
		}
		n++
		o, err := parseArgs(command(seal.All), c.Args)
		if errors.Is(err, errHelp) {
			err = nil
		}
		if err == nil && o.cmd != "" && o.cmd != "help" && o.cmd != "completion" && o.cmd != "version" && o.cmd != "prove" {
			_, err = seal.Select(seal.All, o.ops)
		}
		if err != nil {
			t.Errorf("%s: %s: %v", c.Where, c.Line, err)
			continue
		}
		if len(c.Args) > 0 && strings.Contains(" list help completion --help --version ", " "+c.Args[0]+" ") {
			var out, errb bytes.Buffer
			if code := run(c.Args, strings.NewReader(""), &out, &errb, env{all: seal.All}); code != 0 {
				t.Errorf("%s: %s: exit %d, want 0\n%s", c.Where, c.Line, code, errb.String())
			}
			continue
		}
		t.Logf("%s: %s: parsed, not run here", c.Where, c.Line)
	}
	if n == 0 {
		t.Fatal("no sealprep command line in the examples: the walk is broken")
	}
}
