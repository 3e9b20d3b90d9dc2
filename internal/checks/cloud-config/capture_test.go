package cloudconfig

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
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// want is what a capture must produce: status by "code@key_path".
type want map[string]runner.Status

var captureWants = map[string]want{
	"healthy": {
		codeSchemaValid.ID + "@":          runner.Pass,
		codeUserOK.ID + "@users[0]":       runner.Pass,
		codePwauthOK.ID + "@ssh_pwauth":   runner.Pass,
		codePackageOK.ID + "@packages[0]": runner.Pass,
		codeScriptRan.ID + "@runcmd":      runner.Pass,
		codeElsewhere.ID + "@":            runner.Pass,
		codeNotJudged.ID + "@":            runner.Pass,
	},
	"broken": {
		codePackageOK.ID + "@packages[0]":                       runner.Pass,
		codePackageMissing.ID + "@packages[1]":                  runner.Fail,
		codeFileChanged.ID + "@write_files[0].content":          runner.Warn,
		codeFileOK.ID + "@write_files[1]":                       runner.Pass,
		codeKeyStrictModes.ID + "@users[0].ssh_authorized_keys": runner.Fail,
		codeUnknownKey.ID + "@pacakges":                         runner.Fail,
		codePwauthMismatch.ID + "@ssh_pwauth":                   runner.Fail,
		codeDeprecated.ID + "@chpasswd.list":                    runner.Warn,
		codeUserOK.ID + "@users[1]":                             runner.Pass,
		codeRootKeyPrefix.ID + "@ssh_authorized_keys[0]":        runner.Pass,
		codeScriptRan.ID + "@runcmd":                            runner.Pass,
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
			}
			checktest.Conventions(t, fs, Codes)
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
