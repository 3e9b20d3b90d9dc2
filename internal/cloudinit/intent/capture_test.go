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

	"github.com/guestcheck/guestcheck/internal/check"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// want is what a capture must produce: status by "code@key_path".
type want map[string]check.Status

var captureWants = map[string]want{
	"healthy": {
		CodeSchemaValid + "@":          check.Pass,
		CodeUserOK + "@users[0]":       check.Pass,
		CodePwauthOK + "@ssh_pwauth":   check.Pass,
		CodePackageOK + "@packages[0]": check.Pass,
		CodeScriptRan + "@runcmd":      check.Pass,
		CodeElsewhere + "@":            check.Pass,
		CodeNotJudged + "@":            check.Pass,
	},
	"broken": {
		CodePackageOK + "@packages[0]":                       check.Pass,
		CodePackageMissing + "@packages[1]":                  check.Fail,
		CodeFileChanged + "@write_files[0].content":          check.Warn,
		CodeFileOK + "@write_files[1]":                       check.Pass,
		CodeKeyStrictModes + "@users[0].ssh_authorized_keys": check.Fail,
		CodeUnknownKey + "@pacakges":                         check.Fail,
		CodePwauthMismatch + "@ssh_pwauth":                   check.Fail,
		CodeDeprecated + "@chpasswd.list":                    check.Warn,
		CodeUserOK + "@users[1]":                             check.Pass,
		CodeRootKeyPrefix + "@ssh_authorized_keys[0]":        check.Pass,
		CodeScriptRan + "@runcmd":                            check.Pass,
	},
}

func captureDirs(t *testing.T) []string {
	dirs, err := filepath.Glob("testdata/real/*-*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no captures under testdata/real: %v", err)
	}
	return dirs
}

func judgeCapture(t testing.TB, dir string) []check.Finding {
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
			got := map[string]check.Status{}
			for _, f := range fs {
				got[f.Code+"@"+f.Detail["key_path"]] = f.Status
				if kind == "healthy" && f.Status != check.Pass {
					t.Errorf("healthy capture: %s %s: %s", f.Status, f.Code, f.Message)
				}
				if f.Status != check.Pass && f.Status != check.Skip && f.Remediation == "" {
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
					if (f.Status == check.Fail || f.Status == check.Warn) && f.Detail["key_path"] == "" {
						t.Errorf("%s: %s has no key path", f.Code, f.Message)
					}
				}
			}
			golden(t, filepath.Join("testdata", "golden", name+".json"), fs)
		})
	}
}

func golden(t *testing.T, file string, fs []check.Finding) {
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
		t.Errorf("%s differs from the judged findings; run `go test ./internal/cloudinit/intent -run TestCaptures -update` and review the diff\n%s", file, b)
	}
}
