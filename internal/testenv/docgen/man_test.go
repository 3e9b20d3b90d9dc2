package docgen

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/cli"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

func sample() *cli.Command {
	return (&cli.Command{
		Name: "tool", Summary: "check things", ManSection: 8,
		Synopsis:    []string{"[OPTIONS]"},
		Description: "Checks things. It only reads.\n\nA second paragraph.\n\n  tool --only a,b\n",
		Options: []cli.Option{
			{Long: "only", Arg: "IDS", Help: "Run only these checks."},
			{Long: "verbose", Short: 'v', Help: "Say more."},
		},
		Commands: []*cli.Command{{Name: "probe", Summary: "answer an exec probe", Synopsis: []string{"[--config FILE]"},
			Options: []cli.Option{{Long: "config", Arg: "FILE", Help: "Configuration file."}}}},
		Sections: []cli.Section{{Title: "Exit codes", Body: "0 fine; 1 not."}},
		Examples: []cli.Example{{Command: "tool --only alpha", Comment: "Check alpha only."}},
	}).Link()
}

// TestManRenders holds the page to what man(1) and groff accept: no
// warning from groff -ww, and the options readable in the rendering.
func TestManRenders(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMan(&b, sample(), ManInfo{Version: "1.0", Date: time.Unix(0, 0), Manual: "System Administration", SeeAlso: []string{"guestcheck.yaml(5)"}}); err != nil {
		t.Fatal(err)
	}
	groff := testenv.Tool(t, "groff", "groff-base")
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-P-cbou")
	cmd.Stdin = bytes.NewReader(b.Bytes())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("groff: %v\n%s\npage:\n%s", err, stderr.String(), b.String())
	}
	text := string(out)
	for _, want := range []string{"tool - check things", "--only IDS", "-v, --verbose", "tool probe", "EXIT CODES", "guestcheck.yaml(5)", "tool --only a,b"} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered page lacks %q:\n%s", want, text)
		}
	}
}
