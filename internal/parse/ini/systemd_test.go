package ini

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestSystemdAgainstVerify has `systemd-analyze verify` load hand-made and
// generated service units and compares, per unit, the Type= values it
// echoes when it rejects them (continuations joined its way) and the lines
// it ignores for want of a key=value with what Parse returns. No generated
// value is a valid service type, so systemd echoes every one.
func TestSystemdAgainstVerify(t *testing.T) {
	bin := testenv.Tool(t, "systemd-analyze", "systemd")
	bodies := []string{
		"Type=a \\\n  b\n",
		"Type=1 \\\n# no\n; no\n  2\n",
		"# c \\\nType=x\n",
		"Type=x\\\\\nType=y\n",
		"Type=x\\",
		"Type=x\\\n\nType=y\n",
		"zz\n=q\na b=1\nType = v w \n",
	}
	r := rand.New(rand.NewSource(11))
	atoms := []string{"Type=", "Type", "=", "v", "w x", " ", "\t", "\\", "\\\n", "\n", "#", ";", "\n# c\n", "\n; c \\\n", "\n\n"}
	for range 150 {
		var sb strings.Builder
		for range 1 + r.Intn(12) {
			sb.WriteString(atoms[r.Intn(len(atoms))])
		}
		bodies = append(bodies, sb.String())
	}
	dir := t.TempDir()
	args := []string{"verify", "--man=no"}
	for i, b := range bodies {
		p := filepath.Join(dir, fmt.Sprintf("c%d.service", i))
		if err := os.WriteFile(p, []byte("[Service]\nExecStart=/bin/true\n"+b), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput() // verify exits non-zero on the warnings it is fed
	types := map[int][]string{}
	ignored := map[int]int{}
	line := regexp.MustCompile(`/c(\d+)\.service:\d+: (.*)$`)
	syntax := regexp.MustCompile(`^(Missing '='|Missing key name before '='|Unknown key '[^']*[ \t][^']*' in section)`)
	for _, l := range strings.Split(string(out), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		if v, ok := strings.CutPrefix(m[2], "Failed to parse service type, ignoring: "); ok {
			types[i] = append(types[i], v)
		} else if syntax.MatchString(m[2]) {
			ignored[i]++
		}
	}
	if len(types) < 5 { // the hand-made units alone give seven
		t.Fatalf("systemd-analyze echoed too few Type= values; its output:\n%s", out)
	}
	for i, b := range bodies {
		f, probs := Parse("u", []byte("[Service]\nExecStart=/bin/true\n"+b), Systemd)
		var got []string
		for _, e := range f.All("Service", "Type") {
			got = append(got, e.Value)
		}
		// systemd 252 rejects an empty Type= too; others may take it as a reset.
		got = slices.DeleteFunc(got, func(v string) bool { return v == "" })
		types[i] = slices.DeleteFunc(types[i], func(v string) bool { return v == "" })
		n := 0
		for _, p := range probs {
			if strings.HasPrefix(p.Msg, "expected key=value") {
				n++
			}
		}
		if !slices.Equal(got, types[i]) || n != ignored[i] {
			t.Errorf("unit %q:\nsystemd Type= %q, %d lines ignored\nParse   Type= %q, %d problems %v", b, types[i], ignored[i], got, n, probs)
		}
	}
}
