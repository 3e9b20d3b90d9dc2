package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

func sample() *Command {
	return (&Command{
		Name: "tool", Summary: "check things", ManSection: 8,
		Synopsis:    []string{"[OPTIONS]"},
		Description: "Checks things. It only reads.\n\nA second paragraph.\n\n  tool --only a,b\n",
		Options: []Option{
			{Long: "only", Arg: "IDS", Help: "Run only these checks.", Complete: CompleteWords, ListWords: true, Words: func() []string { return []string{"alpha", "beta"} }},
			{Long: "format", Arg: "FMT", Help: "Report format. One of text or json.", Complete: CompleteWords, Words: func() []string { return []string{"text", "json"} }},
			{Long: "output", Arg: "FILE", Help: "Also write the report to FILE.", Repeat: true, Complete: CompleteFormatFile, Words: func() []string { return []string{"text", "json"} }},
			{Long: "ops", Arg: "SPEC", Help: "The operations.", Complete: CompleteWords, ListWords: true, Words: func() []string { return []string{"defaults", "ssh-keys", "tmp"} }, SignedWords: func() []string { return []string{"ssh-keys", "tmp"} }},
			{Long: "root", Arg: "DIR", Help: "Read guest files under DIR.", Complete: CompleteDir},
			{Long: "timeout", Arg: "DUR", Help: "Bound the run."},
			{Long: "verbose", Short: 'v', Help: "Say more."},
			{Long: "version", Help: "Print the version."},
		},
		Commands: []*Command{{Name: "probe", Summary: "answer an exec probe", Synopsis: []string{"[--config FILE]"},
			Options: []Option{{Long: "config", Arg: "FILE", Help: "Configuration file.", Complete: CompleteFile}}}},
		Sections: []Section{{Title: "Exit codes", Body: "0 fine; 1 not."}},
		Examples: []Example{{Command: "tool --only alpha", Comment: "Check alpha only."}},
	}).Link()
}

func TestParse(t *testing.T) {
	c := sample()
	v, err := c.Parse([]string{"--only=alpha", "-v", "--output", "a", "pos", "--output=b", "--timeout", "5s", "--", "--not-an-option"})
	if err != nil {
		t.Fatal(err)
	}
	if v.String("only", "") != "alpha" || !v.Bool("verbose") || !reflect.DeepEqual(v.All("output"), []string{"a", "b"}) ||
		!reflect.DeepEqual(v.Args, []string{"pos", "--not-an-option"}) || v.Bool("version") {
		t.Errorf("parsed %+v", v)
	}
	if d, err := v.Duration("timeout"); err != nil || d != 5*time.Second {
		t.Errorf("duration %v %v", d, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--versoin"}, "--versoin: unknown option; did you mean --version? (see tool --help)"},
		{[]string{"--formt", "json"}, "--formt: unknown option; did you mean --format? (see tool --help)"},
		{[]string{"--zzz"}, "--zzz: unknown option (see tool --help)"},
		{[]string{"-x"}, "-x: unknown option (see tool --help)"},
		{[]string{"--timeout"}, "--timeout needs an argument (DUR)"},
		{[]string{"--output", "--format", "json"}, "--output needs FILE, and the word after it is the option --format: put FILE right after --output"},
		{[]string{"--output", "--verbose=1"}, "--output needs FILE, and the word after it is the option --verbose: put FILE right after --output"},
		{[]string{"--verbose=yes"}, "--verbose takes no argument"},
		{[]string{"--format", "a", "--format", "b"}, "--format given twice; give it once"},
	} {
		_, err := c.Parse(tc.args)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
	// A value that only looks like an option is taken: an unknown
	// name, a sealprep --ops spec, or the odd name given inline.
	v, err = c.Parse([]string{"--output", "--not-ours", "--only", "-alpha", "--output=--format"})
	if err != nil || !reflect.DeepEqual(v.All("output"), []string{"--not-ours", "--format"}) || v.String("only", "") != "-alpha" {
		t.Errorf("option-like values: %+v %v", v, err)
	}
	v, _ = c.Parse([]string{"--timeout", "5"})
	if _, err := v.Duration("timeout"); err == nil || err.Error() != `--timeout "5": not a duration; write one as 30s, 5m or 1h30m` {
		t.Errorf("bare number: %v", err)
	}
	if err := OneOf("--format", "format", "jsn", []string{"text", "json"}); err == nil ||
		err.Error() != `--format "jsn": unknown format; did you mean json? (one of text, json)` {
		t.Errorf("OneOf: %v", err)
	}
	if got := c.Sub("probe").Path(); got != "tool probe" {
		t.Errorf("Path %q", got)
	}
}

func TestHelp(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteHelp(&b); err != nil {
		t.Fatal(err)
	}
	want := `Usage: tool [OPTIONS]
       tool probe [--config FILE]

Checks things. It only reads.

A second paragraph.

  tool --only a,b

Commands:
  probe              answer an exec probe

Options:
  --only IDS         Run only these checks.
  --format FMT       Report format. One of text or json.
  --output FILE      Also write the report to FILE.
  --ops SPEC         The operations.
  --root DIR         Read guest files under DIR.
  --timeout DUR      Bound the run.
  -v, --verbose      Say more.
  --version          Print the version.

Exit codes:
0 fine; 1 not.

Examples:
  tool --only alpha
      Check alpha only.
`
	if b.String() != want {
		t.Errorf("help:\n%s\nwant:\n%s", b.String(), want)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if len(l) > helpWidth {
			t.Errorf("line over %d columns: %q", helpWidth, l)
		}
	}
}

// TestCompletions loads each script in its shell: bash answers a
// completion request, zsh and fish parse the script.
func TestCompletions(t *testing.T) {
	c := sample()
	dir := t.TempDir()
	for _, sh := range Shells {
		var b bytes.Buffer
		if err := c.WriteCompletion(&b, sh); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "tool."+sh)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		switch sh {
		case "bash":
			// COMP_WORDS as bash splits the line: at "=" and ":" too
			// (COMP_WORDBREAKS), so "--format=j" is three words.
			files := t.TempDir()
			if err := os.WriteFile(filepath.Join(files, "report.json"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct{ words, want string }{
				{"tool --fo", "--format"},
				{"tool --format j", "json"},
				{"tool --format = j", "json"},
				{"tool --format =", "text json"},
				{"tool --only alpha,b", "alpha,beta"},
				{"tool --only = alpha,b", "alpha,beta"},
				{"tool --ops -ss", "-ssh-keys"},
				{"tool --ops +t", "+tmp"},
				{"tool --ops tmp,-ss", "tmp,-ssh-keys"},
				{"tool --ops d", "defaults"},
				{"tool --ops -d", ""},
				{"tool --output j", "json:"},
				{"tool --output json : ", "report.json"},
				{"tool --output json : rep", "report.json"},
				{"tool --output = json : rep", "report.json"},
				{"tool --output json:rep", "json:report.json"},
				{"tool --output rep", "report.json"},
				{"tool --verbose = x", ""},
				{"tool pro", "probe"},
				{"tool probe --con", "--config"},
			} {
				words := tc.words
				if strings.HasSuffix(words, " ") {
					words += "''"
				}
				script := ". " + p + "\ncd " + files + "\nCOMP_WORDS=(" + words + ")\nCOMP_CWORD=$((${#COMP_WORDS[@]}-1))\n_tool\necho \"${COMPREPLY[*]}\"\n"
				out, err := exec.Command(testenv.Tool(t, "bash", "bash"), "-c", script).CombinedOutput()
				if err != nil || strings.TrimSpace(string(out)) != tc.want {
					t.Errorf("bash %q: %q (%v), want %q", tc.words, out, err, tc.want)
				}
			}
		case "zsh":
			if out, err := exec.Command(testenv.Tool(t, "zsh", "zsh"), "-n", p).CombinedOutput(); err != nil {
				t.Errorf("zsh -n: %v\n%s\n%s", err, out, b.String())
			}
		case "fish":
			fish := testenv.Tool(t, "fish", "fish")
			if out, err := exec.Command(fish, "--no-execute", p).CombinedOutput(); err != nil {
				t.Errorf("fish -n: %v\n%s\n%s", err, out, b.String())
			}
			files := t.TempDir()
			if err := os.WriteFile(filepath.Join(files, "report.json"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			for line, want := range map[string]string{
				"tool --ops -ss":         "-ssh-keys",
				"tool --ops tmp,+ss":     "tmp,+ssh-keys",
				"tool --only alpha,b":    "alpha,beta",
				"tool --output j":        "json:",
				"tool --output json:rep": "json:report.json",
				"tool --format=j":        "--format=json",
			} {
				cmd := exec.Command(fish, "--no-config", "-c", "source "+p+"; complete -C '"+line+"'")
				cmd.Dir = files
				out, err := cmd.CombinedOutput()
				got, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
				if err != nil || got != want {
					t.Errorf("fish %q: %q (%v), want %q", line, out, err, want)
				}
			}
		}
	}
	if err := c.WriteCompletion(&bytes.Buffer{}, "tcsh"); err == nil || !strings.Contains(err.Error(), "one of bash, zsh, fish") {
		t.Errorf("unknown shell: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("--only=a -v --output x -- y")
	f.Add("-vv --timeout")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := sample().Parse(strings.Fields(s))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		_ = v.String("only", "")
	})
}
