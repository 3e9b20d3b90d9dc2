package envfile

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestShellAgainstBash sources hand-made and generated files in bash (the
// shell Red Hat's network scripts use) and compares what it sets with the
// Shell dialect. The inputs hold no expansions, since Parse keeps those
// verbatim, and no command a shell could find: PATH is empty.
func TestShellAgainstBash(t *testing.T) {
	bash := testenv.Tool(t, "bash", "bash")
	inputs := []string{
		"# Created by cloud-init\nBOOTPROTO=dhcp\nDEVICE=\"eth0\"\nHWADDR='52:54:00:12:34:56'\nNAME=\"System \\\"eth0\\\"\"\nONBOOT=yes # comment\nexport TYPE=Ethernet\nzq -rf /\nBROKEN=\"unterminated\n",
		"A=plain # comment\nexport B='x y'\nD=a\\\nb\nnot an assignment\nE=\n",
		"A=x'y z'\"q\"\\ r\nB=\"1\n2\"\nC=1 D=2; E=3\nF=1 zq\nG=#x\nH=a#b\n",
		"A=1\n; B=2\nC=3\n",
		"A=1;;\nB=2\n",
		"A='x\n",
		"A=\"\\a\\\\\\\"\"\nB=\\\n\nC=\\\\\n",
		"A=1\r\nB=\"2\"\r\n",
	}
	r := rand.New(rand.NewSource(11))
	atoms := []string{"A=", "B=", "export ", "x", "y z", " ", "\t", "'", "\"", "\\", "\\\n", "\n", "#", ";", "=", "'a b'", "\"c\\\"d\"", "zq"}
	for range 300 {
		var sb strings.Builder
		for range 1 + r.Intn(12) {
			sb.WriteString(atoms[r.Intn(len(atoms))])
		}
		inputs = append(inputs, sb.String())
	}
	dir := t.TempDir()
	base := bashVars(t, bash, dir, "")
	for _, in := range inputs {
		got := bashVars(t, bash, dir, in)
		for k, v := range base {
			if got[k] == v {
				delete(got, k)
			}
		}
		vars, probs := Parse("f", []byte(in), Shell)
		mismatch := len(got) != len(vars)
		for k, v := range vars {
			if g, ok := got[k]; !ok || g != v.Value {
				mismatch = true
			}
		}
		if mismatch {
			t.Errorf("input %q:\nbash sets %q\nParse     %+v (problems %v)", in, got, vars, probs)
		}
	}
}

// bashVars sources in with every assignment exported and returns the
// environment bash ends with.
func bashVars(t *testing.T, bash, dir, in string) map[string]string {
	t.Helper()
	f := filepath.Join(dir, "vars")
	if err := os.WriteFile(f, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", `set -a; PATH=; . "$1" >/dev/null 2>&1; PATH=/usr/bin:/bin; exec env -0`, "bash", f)
	cmd.Env = []string{}
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	_ = cmd.Run() // a syntax error in the file still ends with env's output
	m := map[string]string{}
	for _, kv := range strings.Split(out.String(), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}
