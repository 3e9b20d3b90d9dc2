package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/host/prove"
	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/testenv"
	"github.com/guestcheck/guestcheck/internal/testenv/docgen"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden and the generated man page and completions")

// TestMessages holds every usage message of sealprep, whole, to
// testdata/messages.golden: one line each, in the user's words, with a
// suggestion where a name is close.
func TestMessages(t *testing.T) {
	cases := [][]string{
		{},
		{"aply"},
		{"frobnicate"},
		{"--versoin"},
		{"plan", "--format", "xml"},
		{"plan", "--machine-id-mode", "remove"},
		{"plan", "--poweroff"},
		{"verify", "--fstrim"},
		{"plan", "--ops", "machine-idd"},
		{"plan", "--ops", "-machine-id,bogus"},
		{"plan", "--rot", "/mnt"},
		{"plan", "--root", "/nonexistent/sealprep-root"},
		{"plan", "--root", "/dev/null"},
		{"verify", "--image", "/nonexistent/template.qcow2"},
		{"apply", "--image", "x.qcow2", "--root", "/mnt"},
		{"apply", "--image", "x.qcow2", "--poweroff"},
		{"plan", "extra"},
		{"help", "aply"},
		{"completion"},
		{"completion", "tcsh"},
		{"--version", "--format", "xml"},
		{"prove"},
		{"prove", "--image", "t.qcow2", "--clones", "two"},
		{"prove", "--image", "t.qcow2", "--clones", "17"},
		{"prove", "--image", "t.qcow2", "--firmware", "coreboot"},
		{"prove", "--image", "t.qcow2", "--initrd", "initrd.img"},
		{"prove", "--image", "t.qcow2", "--timeout", "10s"},
		{"prove", "--image", "t.qcow2", "--format", "tap"},
		{"prove", "--image", "t.qcow2", "--user-data", "/nonexistent/user-data"},
		{"prove", "--image", "/nonexistent/t.qcow2"},
	}
	var b strings.Builder
	for _, args := range cases {
		code, out, errs := runCmd(t, "", false, args...)
		fmt.Fprintf(&b, "$ sealprep %s\nexit %d\n", strings.Join(args, " "), code)
		for _, l := range strings.Split(strings.TrimRight(out+errs, "\n"), "\n") {
			fmt.Fprintf(&b, "| %s\n", l)
		}
		if n := strings.Count(strings.TrimRight(errs, "\n"), "\n"); n > 0 {
			t.Errorf("%q: %d lines on stderr, want one", args, n+1)
		}
	}
	testenv.Golden(t, filepath.Join("testdata", "messages.golden"), b.String(), *update)
}

// manInfo is what sealprep(8) names besides the command line.
var manInfo = docgen.ManInfo{Manual: "System Administration", SeeAlso: []string{"guestcheck(8)", "machine-id(5)", "virt-sysprep(1)", "cloud-init(1)"}}

// TestReferenceFiles: the committed man page and completions are what the
// command description generates (go test -update rewrites them), and
// `sealprep completion SHELL` prints the same scripts.
func TestReferenceFiles(t *testing.T) {
	cmd := command(seal.All)
	files := map[string]func(*bytes.Buffer) error{
		"../../packaging/man/sealprep.8": func(b *bytes.Buffer) error { return docgen.WriteMan(b, cmd, manInfo) },
	}
	for sh, name := range map[string]string{"bash": "sealprep.bash", "zsh": "_sealprep", "fish": "sealprep.fish"} {
		files["../../packaging/completions/"+name] = func(b *bytes.Buffer) error { return cmd.WriteCompletion(b, sh) }
		code, out, errs := runCmd(t, "", false, "completion", sh)
		var want bytes.Buffer
		cmd.WriteCompletion(&want, sh)
		if code != 0 || out != want.String() {
			t.Errorf("sealprep completion %s: exit %d %s, or differs from the shipped script", sh, code, errs)
		}
	}
	for p, gen := range files {
		var want bytes.Buffer
		if err := gen(&want); err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(p, want.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s is not what the command description generates (%v); go test ./cmd/sealprep -run TestReferenceFiles -update", p, err)
		}
	}
}

// TestManPageRenders renders sealprep(8) with man(1), as `man -l` shows
// it from the package, and finds every command and option in it.
func TestManPageRenders(t *testing.T) {
	man := testenv.Tool(t, "man", "man-db")
	cmd := exec.Command(man, "-l", "../../packaging/man/sealprep.8")
	cmd.Env = append(os.Environ(), "MANWIDTH=100")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.Contains(stderr.String(), "warning") {
		t.Fatalf("man -l: %v\n%s", err, stderr.String())
	}
	text := string(out)
	spec := command(seal.All)
	for _, sub := range spec.Commands {
		if !strings.Contains(text, "sealprep "+sub.Name) {
			t.Errorf("sealprep(8) lacks the command %s", sub.Name)
		}
		for _, o := range sub.Options {
			if !strings.Contains(text, "--"+o.Long) {
				t.Errorf("sealprep(8) lacks --%s", o.Long)
			}
		}
	}
}

// TestBashCompletion loads the shipped script in bash and asks it what a
// user's tab would offer.
func TestBashCompletion(t *testing.T) {
	bash := testenv.Tool(t, "bash", "bash")
	for words, want := range map[string]string{
		"sealprep ap":                         "apply",
		"sealprep apply --pow":                "--poweroff",
		"sealprep plan --pow":                 "",
		"sealprep plan --ops machine-id,ss":   "machine-id,ssh-host-keys",
		"sealprep verify --machine-id-mode u": "uninitialized",
		// As bash splits the line: --format=j is three words.
		"sealprep plan --ops -ss":              "-ssh-host-keys",
		"sealprep plan --ops +auth":            "+authorized-keys",
		"sealprep plan --ops -tmp,+resolv":     "-tmp,+resolv-conf",
		"sealprep plan --format = j":           "json",
		"sealprep plan --ops = machine-id,ssh": "machine-id,ssh-host-keys",
	} {
		script := ". ../../packaging/completions/sealprep.bash\nCOMP_WORDS=(" + words + ")\nCOMP_CWORD=$((${#COMP_WORDS[@]}-1))\n_sealprep\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "-c", script).CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("%q: %q (%v), want %q", words, got, err, want)
		}
	}
}

// TestReferenceTables holds the sealprep tables of docs/reference.md and
// docs/sealprep.md to the code: the commands from the command
// description, the operations from their descriptors, in the order
// `sealprep list` prints them (go test -update rewrites them).
func TestReferenceTables(t *testing.T) {
	testenv.GeneratedBlock(t, "../../docs/reference.md", "sealprep-commands", docgen.MarkdownCommands(command(seal.All)), *update)
	var b strings.Builder
	b.WriteString("| operation | | what it does |\n|---|---|---|\n")
	for _, op := range seal.ListOrder(seal.All) {
		kind := "opt-in"
		if op.Default {
			kind = "default"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", op.ID, kind, cell(op.Summary))
	}
	testenv.GeneratedBlock(t, "../../docs/reference.md", "sealprep-operations", b.String(), *update)
	testenv.GeneratedBlock(t, "../../docs/sealprep.md", "sealprep-defaults", docTable(true, "why"), *update)
	testenv.GeneratedBlock(t, "../../docs/sealprep.md", "sealprep-opt-in", docTable(false, "why it is opt-in"), *update)
	testenv.GeneratedBlock(t, "../../docs/sealprep.md", "prove-copy-platforms", platformTable(), *update)
}

// platformTable is docs/sealprep.md's table of prove --copy's platforms,
// from prove.Platforms.
func platformTable() string {
	kept := func(b bool, k, n string) string {
		if b {
			return k
		}
		return n
	}
	var b strings.Builder
	b.WriteString("| `--copy` | the platform's operation | firmware UUID | MAC | cloud-init seed (instance-id, hostname, network-config) | read from |\n|---|---|---|---|---|---|\n")
	for _, p := range prove.Platforms {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", p.Name, cell(p.Title), kept(p.KeepsUUID, "**kept**", "new"),
			kept(p.KeepsMAC, "**kept**", "new"), kept(p.KeepsSeed, "**kept**: the same instance", "new instance, for the new MAC"), cell(p.Source))
	}
	return b.String()
}

// docTable is docs/sealprep.md's table of the default (or the opt-in)
// operations, from their Doc.
func docTable(defaults bool, why string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| ID | what it does | %s |\n|---|---|---|\n", why)
	for _, op := range seal.All {
		if op.Default != defaults {
			continue
		}
		id := "`" + op.ID + "`"
		if op.Doc.Tag != "" {
			id += " (" + op.Doc.Tag + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", id, cell(op.Doc.What), cell(op.Doc.Why))
	}
	return b.String()
}

// cell makes s one Markdown table cell: a bar would end it.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
