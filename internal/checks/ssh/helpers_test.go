package ssh

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// guestMachineID is the machine ID tree gives a root that names none: a
// guest's, so that the root is not judged as a sealed template.
const guestMachineID = "0123456789abcdef0123456789abcdef\n"

// tree writes files under a fresh directory; a value of "<dir>" makes a
// directory, "<none>" leaves the path out. /etc/machine-id holds
// guestMachineID unless files names it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if _, ok := files["/etc/machine-id"]; !ok {
		files["/etc/machine-id"] = guestMachineID
		defer delete(files, "/etc/machine-id")
	}
	for p, s := range files {
		full := filepath.Join(dir, p)
		if s == "<none>" {
			continue
		}
		if s == "<dir>" {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// keyPair returns an OpenSSH private key and its authorized_keys line.
func keyPair(t *testing.T) (priv, pub string) {
	t.Helper()
	priv, pub, _ = testenv.HostKeyPair(t, "")
	return priv, pub
}

// writeKey writes a key pair with the given private mode and mtime.
func writeKey(t *testing.T, dir, p string, mode os.FileMode, mtime time.Time, pubOverride string) {
	t.Helper()
	priv, pub := keyPair(t)
	if pubOverride != "" {
		pub = pubOverride
	}
	full := filepath.Join(dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(priv), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(full, mode); err != nil {
		t.Fatal(err)
	}
	if pubOverride != "-" {
		if err := os.WriteFile(full+".pub", []byte(pub), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(full, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// openRoot opens a test tree as a guest root, closed when the test ends.
var openRoot = nstest.OpenRoot

// validate holds findings to the conventions every check follows, and
// to ssh's own: no detail carries key material.
func validate(t *testing.T, fs []runner.Finding) {
	t.Helper()
	checktest.Conventions(t, fs, Codes)
	for _, f := range fs {
		for k, v := range f.Detail {
			if strings.Contains(v, "PRIVATE KEY") {
				t.Errorf("%s: detail %s carries key material", f.Code, k)
			}
		}
	}
}

// find returns the findings with code.
func find(fs []runner.Finding, code runner.Code) []runner.Finding {
	var out []runner.Finding
	for _, f := range fs {
		if f.Code == code.ID {
			out = append(out, f)
		}
	}
	return out
}

// want asserts exactly one finding with code and status whose message
// contains each of subs, and returns it.
func want(t *testing.T, fs []runner.Finding, code runner.Code, st runner.Status, subs ...string) runner.Finding {
	t.Helper()
	return checktest.Want(t, fs, code.ID, st, subs...)
}

func dumpFindings(fs []runner.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + string(f.Status) + " " + f.Code + ": " + f.Message + "\n")
	}
	return b.String()
}
