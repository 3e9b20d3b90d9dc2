package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
	"github.com/guestcheck/guestcheck/internal/testenv/docgen"
)

// manInfo is what guestcheck(8) names besides the command line.
var manInfo = docgen.ManInfo{Manual: "System Administration", SeeAlso: []string{"guestcheck.yaml(5)", "sealprep(8)", "cloud-init(1)", "qemu-ga(8)"}}

// referenceFiles are the shipped pages and completions generated from
// command(): they cannot drift from --help, because a test regenerates
// them.
func referenceFiles(t *testing.T) map[string][]byte {
	t.Helper()
	cmd := command(checks.All)
	out := map[string][]byte{}
	var b bytes.Buffer
	if err := docgen.WriteMan(&b, cmd, manInfo); err != nil {
		t.Fatal(err)
	}
	out["../../packaging/man/guestcheck.8"] = append([]byte(nil), b.Bytes()...)
	keys := config.Describe(runner.Sections(checks.All)...)
	b.Reset()
	if err := docgen.WriteConfigMan(&b, keys); err != nil {
		t.Fatal(err)
	}
	out[configPage] = append([]byte(nil), b.Bytes()...)
	b.Reset()
	if err := docgen.WriteConffile(&b, keys); err != nil {
		t.Fatal(err)
	}
	out[shippedConfig] = append([]byte(nil), b.Bytes()...)
	for sh, name := range map[string]string{"bash": "guestcheck.bash", "zsh": "_guestcheck", "fish": "guestcheck.fish"} {
		b.Reset()
		if err := cmd.WriteCompletion(&b, sh); err != nil {
			t.Fatal(err)
		}
		out["../../packaging/completions/"+name] = append([]byte(nil), b.Bytes()...)
	}
	return out
}

// TestReferenceFiles: `guestcheck completion SHELL` prints the scripts
// the packages ship (TestGenerated holds those to the command
// description).
func TestReferenceFiles(t *testing.T) {
	for _, sh := range cli.Shells {
		var out, errb bytes.Buffer
		if code := run([]string{"completion", sh}, &out, &errb, checks.All); code != 0 {
			t.Fatalf("completion %s: exit %d %s", sh, code, errb.String())
		}
		var want bytes.Buffer
		command(checks.All).WriteCompletion(&want, sh)
		if out.String() != want.String() {
			t.Errorf("guestcheck completion %s differs from the shipped script", sh)
		}
	}
}

// TestManPageRenders renders guestcheck(8) with man(1), as `man -l`
// shows it from the package, and finds every option in it.
func TestManPageRenders(t *testing.T) {
	page := referenceFiles(t)["../../packaging/man/guestcheck.8"]
	p := filepath.Join(t.TempDir(), "guestcheck.8")
	if err := os.WriteFile(p, page, 0o644); err != nil {
		t.Fatal(err)
	}
	man := testenv.Tool(t, "man", "man-db")
	cmd := exec.Command(man, "-l", p)
	// Not a terminal and no pager: man strips the formatting.
	cmd.Env = append(os.Environ(), "MANWIDTH=100")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.Contains(stderr.String(), "warning") {
		t.Fatalf("man -l: %v\n%s", err, stderr.String())
	}
	text := string(out)
	for _, o := range command(checks.All).Options {
		if !strings.Contains(text, "--"+o.Long) {
			t.Errorf("guestcheck(8) lacks --%s", o.Long)
		}
	}
	for _, w := range []string{"guestcheck probe", "guestcheck explain", "EXIT CODES", "guestcheck.yaml(5)"} {
		if !strings.Contains(text, w) {
			t.Errorf("guestcheck(8) lacks %q", w)
		}
	}
}

// TestBashCompletion loads the shipped script in bash and asks it what a
// user's tab would offer.
func TestBashCompletion(t *testing.T) {
	bash := testenv.Tool(t, "bash", "bash")
	for words, want := range map[string]string{
		"guestcheck --only host":     "hostname",
		"guestcheck --only dns,clou": "dns,cloud-init dns,cloud-config",
		"guestcheck --format pro":    "prometheus",
		"guestcheck --col":           "--color",
		"guestcheck --color a":       "auto always",
		"guestcheck pro":             "probe",
		"guestcheck probe --t":       "--timeout",
		"guestcheck --exit-codes n":  "nagios",
		// As bash splits the line: at "=" and ":" too.
		"guestcheck --format = j":                       "json junit jsonl",
		"guestcheck --output jsonl : /nonexistent":      "",
		"guestcheck --output junit : ../../READ":        "../../README.md",
		"guestcheck --output prom":                      "prometheus:",
		"guestcheck fleet --output = json : ../../READ": "../../README.md",
	} {
		script := ". ../../packaging/completions/guestcheck.bash\nCOMP_WORDS=(" + words + ")\nCOMP_CWORD=$((${#COMP_WORDS[@]}-1))\n_guestcheck\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "-c", script).CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("%q: %q (%v), want %q", words, got, err, want)
		}
	}
}
