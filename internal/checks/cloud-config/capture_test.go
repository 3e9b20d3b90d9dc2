package intent

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// want is what a capture must produce: status by "code@key_path".
type want map[string]runner.Status

var captureWants = map[string]want{
	"healthy": {
		CodeSchemaValid + "@":          runner.Pass,
		CodeUserOK + "@users[0]":       runner.Pass,
		CodePwauthOK + "@ssh_pwauth":   runner.Pass,
		CodePackageOK + "@packages[0]": runner.Pass,
		CodeScriptRan + "@runcmd":      runner.Pass,
		CodeElsewhere + "@":            runner.Pass,
		CodeNotJudged + "@":            runner.Pass,
	},
	"broken": {
		CodePackageOK + "@packages[0]":                       runner.Pass,
		CodePackageMissing + "@packages[1]":                  runner.Fail,
		CodeFileChanged + "@write_files[0].content":          runner.Warn,
		CodeFileOK + "@write_files[1]":                       runner.Pass,
		CodeKeyStrictModes + "@users[0].ssh_authorized_keys": runner.Fail,
		CodeUnknownKey + "@pacakges":                         runner.Fail,
		CodePwauthMismatch + "@ssh_pwauth":                   runner.Fail,
		CodeDeprecated + "@chpasswd.list":                    runner.Warn,
		CodeUserOK + "@users[1]":                             runner.Pass,
		CodeRootKeyPrefix + "@ssh_authorized_keys[0]":        runner.Pass,
		CodeScriptRan + "@runcmd":                            runner.Pass,
	},
}

func captureDirs(t *testing.T) []string {
	dirs, err := filepath.Glob("testdata/real/*-*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no captures under testdata/real: %v", err)
	}
	return dirs
}

func judgeCapture(t testing.TB, dir string) []runner.Finding {
	src := loadTar(t, filepath.Join(dir, "root.tar.gz"))
	f := Gather(context.Background(), src, Options{IsRoot: true})
	f.SchemaTime = 0 // not part of the verdict
	return Judge(f)
}

// TestCaptures judges every real capture and holds it to its verdicts and
// to its golden file.
func TestCaptures(t *testing.T) {
	for _, dir := range captureDirs(t) {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			fs := judgeCapture(t, dir)
			kind := name[strings.LastIndex(name, "-")+1:]
			w, ok := captureWants[kind]
			if !ok {
				t.Fatalf("no expectations for %s", kind)
			}
			got := map[string]runner.Status{}
			for _, f := range fs {
				got[f.Code+"@"+f.Detail["key_path"]] = f.Status
				if kind == "healthy" && f.Status != runner.Pass {
					t.Errorf("healthy capture: %s %s: %s", f.Status, f.Code, f.Message)
				}
				if f.Status != runner.Pass && f.Status != runner.Skip && f.Remediation == "" {
					t.Errorf("%s has no remediation", f.Code)
				}
				if !contains(Codes, f.Code) {
					t.Errorf("undeclared code %s", f.Code)
				}
			}
			for k, st := range w {
				if got[k] != st {
					t.Errorf("%s: got %q, want %q", k, got[k], st)
				}
			}
			if kind == "broken" {
				// Each failure names its own key path.
				for _, f := range fs {
					if (f.Status == runner.Fail || f.Status == runner.Warn) && f.Detail["key_path"] == "" {
						t.Errorf("%s: %s has no key path", f.Code, f.Message)
					}
				}
			}
			golden(t, filepath.Join("testdata", "golden", name+".json"), fs)
		})
	}
}

func golden(t *testing.T, file string, fs []runner.Finding) {
	t.Helper()
	sort.SliceStable(fs, func(i, j int) bool { return false })
	b, err := json.MarshalIndent(fs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(old) != string(b) {
		t.Errorf("%s differs from the judged findings; run `go test ./internal/checks/cloud-config -run TestCaptures -update` and review the diff\n%s", file, b)
	}
}
