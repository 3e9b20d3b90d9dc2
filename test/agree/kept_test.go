package agree

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/kept.golden")

// keptVerify is the part of sealprep verify's JSON about kept items.
type keptVerify struct {
	Status  string `json:"status"`
	Summary struct {
		Left     int `json:"left"`
		Warnings int `json:"warnings"`
	} `json:"summary"`
	Kept []struct {
		Op      string `json:"op"`
		Forced  bool   `json:"forced"`
		Message string `json:"message"`
	} `json:"kept"`
}

// noRegenerator is bootedOnce without cloud-init and without systemd:
// nothing regenerates host keys and sealprep cannot install its unit, so
// ssh-host-keys refuses, forcibly.
func noRegenerator() []node {
	var out []node
	for _, n := range bootedOnce() {
		if !strings.Contains(n.path, "cloud") && !strings.Contains(n.path, "systemd") {
			out = append(out, n)
		}
	}
	return out
}

var stampRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|\(\d+ ms\)`)

// runText runs name with args and returns its exit code and stdout, with
// the root's directory, times and durations replaced by names.
func runText(t *testing.T, dir, name string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout = &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", filepath.Base(name), err)
	}
	s := strings.ReplaceAll(out.String(), dir, "ROOT")
	return code, stampRE.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "(") {
			return "(N ms)"
		}
		return "TIME"
	})
}

// TestKeptByChoice (issue 29, item 3): a host key kept by --ops
// -ssh-host-keys, or a refusal passed by --force, is one choice that
// sealprep verify and guestcheck --root both report as a warning, in the
// template record's one wording; verify after --force gives apply's
// verdict. testdata/kept.golden holds verify's text, its kept items in
// JSON and guestcheck's finding for both.
func TestKeptByChoice(t *testing.T) {
	var b strings.Builder
	for _, sc := range []struct {
		name, code string
		nodes      func() []node
		args       []string
	}{
		{"apply --ops -ssh-host-keys", "ssh-hostkey-in-template", bootedOnce, []string{"--ops", "-ssh-host-keys"}},
		{"apply --force, nothing regenerates host keys", "ssh-hostkey-none", noRegenerator, []string{"--force"}},
	} {
		dir := t.TempDir()
		buildRoot(t, dir, sc.nodes())
		applyCode, _ := runText(t, dir, bin.sealprep, append([]string{"apply", "--yes", "--root", dir}, sc.args...)...)
		verifyCode, text := runText(t, dir, bin.sealprep, "verify", "--root", dir)
		if applyCode != verifyCode {
			t.Errorf("%s: apply exit %d, then verify exit %d", sc.name, applyCode, verifyCode)
		}
		var v keptVerify
		runJSON(t, &v, bin.sealprep, "verify", "--root", dir, "--format", "json")
		var g checkReport
		runJSON(t, &g, bin.guestcheck, "--root", dir, "--format", "json", "--config", bin.config, "--only", "ssh")
		fmt.Fprintf(&b, "# %s: apply exit %d\n$ sealprep verify --root ROOT\nexit %d\n%s", sc.name, applyCode, verifyCode, text)
		kj, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintf(&b, "$ sealprep verify --root ROOT --format json (status, summary, kept)\n%s\n", stampRE.ReplaceAllString(string(kj), "TIME"))
		if len(v.Kept) != 1 {
			t.Fatalf("%s: verify lists %d kept items, want 1", sc.name, len(v.Kept))
		}
		told := 0
		for _, c := range g.Checks {
			for _, f := range c.Findings {
				if f.Status == "fail" && strings.HasPrefix(f.Code, "ssh-hostkey") {
					t.Errorf("%s: guestcheck fails %s: %s", sc.name, f.Code, f.Message)
				}
				if f.Message == v.Kept[0].Message {
					told++
					fmt.Fprintf(&b, "$ guestcheck --root ROOT --only ssh\n%s %s: %s\n", f.Status, f.Code, stampRE.ReplaceAllString(f.Message, "TIME"))
					if f.Status != "warn" || f.Code != sc.code {
						t.Errorf("%s: guestcheck says %s %s, want warn %s", sc.name, f.Status, f.Code, sc.code)
					}
				}
			}
		}
		if told != 1 {
			t.Errorf("%s: guestcheck tells the kept item %d times, want once, as verify does", sc.name, told)
		}
		b.WriteString("\n")
	}
	testenv.Golden(t, filepath.Join("testdata", "kept.golden"), b.String(), *update)
}
