package examples

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTestFailuresScript: scripts/test-failures.sh, on the log of a real
// `go test -v` run with parallel subtests, repeats what the innermost
// failed tests printed, and nothing of a passing test or of a failing
// parent's setup.
func TestTestFailuresScript(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module demo\n\ngo 1.22\n",
		"demo_test.go": `package demo

import "testing"

func TestVM(t *testing.T) {
	t.Log("parent setup line")
	for _, name := range []string{"broken", "healthy"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			t.Log(name + " boots")
			t.Run("hotplug", func(t *testing.T) {
				t.Log(name + " hotplug step")
				if name == "broken" {
					t.Fatal("device_add: unexpected end of JSON input\nsecond line")
				}
			})
		})
	}
}
`,
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := exec.Command("go", "test", "-v", "-count=1", ".")
	c.Dir = dir
	c.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	log, err := c.CombinedOutput()
	if err == nil || !strings.Contains(string(log), "--- FAIL: TestVM/broken/hotplug") {
		t.Fatalf("the demo run did not fail as meant (%v):\n%s", err, log)
	}
	logFile := filepath.Join(dir, "run.log")
	os.WriteFile(logFile, log, 0o644)
	out, err := exec.Command("bash", filepath.Join(repo, "scripts/test-failures.sh"), logFile).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := string(out)
	for _, want := range []string{"--- TestVM/broken/hotplug", "broken hotplug step", "device_add: unexpected end of JSON input", "second line"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	for _, not := range []string{"healthy", "parent setup line", "broken boots"} {
		if strings.Contains(got, not) {
			t.Errorf("%q should not be there:\n%s", not, got)
		}
	}
}
