package seal

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/envfile"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestStripKeysAgainstBash sources generated ifcfg-like files before and
// after stripKeys in bash: afterwards HWADDR and UUID are unset and
// every other variable is as it was.
func TestStripKeysAgainstBash(t *testing.T) {
	bash := testenv.Tool(t, "bash", "bash")
	inputs := []string{
		"DEVICE=eth0\nHWADDR=52:54:00:12:34:56\n  UUID=abc\nexport HWADDR=x\nMY_HWADDR=keep\n# HWADDR=comment\nONBOOT=yes",
		"A=1 HWADDR=x B=2\nexport\tUUID=u C=3\nHWADDR=\"52:54\n:00\" D=4\nE=5; UUID=6; F=7\nHWADDR=x # pinned\n",
		"export HWADDR=x\nexport UUID=1 G=2\nH=a\\\nb HWADDR=c\\\nd\n",
	}
	r := rand.New(rand.NewSource(5))
	atoms := []string{"HWADDR=", "UUID=", "A=", "B=", "export ", "x", "'y z'", "\"q\"", " ", "\t", "\n", "\\\n", "# c", ";", "1"}
	for range 400 {
		var sb strings.Builder
		for range 1 + r.Intn(14) {
			sb.WriteString(atoms[r.Intn(len(atoms))])
		}
		inputs = append(inputs, sb.String())
	}
	dir := t.TempDir()
	for _, in := range inputs {
		if _, probs := envfile.Assignments("f", []byte(in)); len(probs) > 0 {
			continue // sh would stop or run something: not an ifcfg file
		}
		out := string(stripKeys([]byte(in), "HWADDR", "UUID"))
		before, after := sourced(t, bash, dir, in), sourced(t, bash, dir, out)
		delete(before, "HWADDR")
		delete(before, "UUID")
		if !equalVars(before, after) {
			t.Errorf("input %q\nstripped %q\nbash before %q\nbash after  %q", in, out, before, after)
		}
		if again := string(stripKeys([]byte(out), "HWADDR", "UUID")); again != out {
			t.Errorf("not idempotent: %q -> %q", out, again)
		}
	}
}

func equalVars(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// sourced returns the variables bash sets when it sources in, as "NAME
// value" pairs of its set -a environment.
func sourced(t *testing.T, bash, dir, in string) map[string]string {
	t.Helper()
	f := filepath.Join(dir, "ifcfg")
	if err := os.WriteFile(f, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", `set -a; PATH=; . "$1" >/dev/null 2>&1; PATH=/usr/bin:/bin; exec env -0`, "bash", f)
	cmd.Env = []string{}
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	_ = cmd.Run()
	m := map[string]string{}
	for _, kv := range strings.Split(out.String(), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "PWD" && k != "SHLVL" && k != "_" && k != "OLDPWD" && k != "PATH" {
			m[k] = v
		}
	}
	return m
}
