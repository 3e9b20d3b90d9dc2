package buildinfo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestWriteTextCommit: a stamped commit is shown; none is "unknown".
func TestWriteTextCommit(t *testing.T) {
	for _, c := range []struct{ commit, want string }{{"abc123", "commit:   abc123\n"}, {"", "commit:   unknown\n"}} {
		var b bytes.Buffer
		if err := (Info{Tool: "guestcheck", Version: "1", Commit: c.commit}).WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("commit %q: %q, want a line %q", c.commit, b.String(), c.want)
		}
	}
}

// TestVersionNamesCommitWithoutVCS builds guestcheck as the Makefile does
// (its ldflags, from make ldflags) but with -buildvcs=false, so that the
// toolchain records no commit, and checks that --version still names it:
// once from this checkout, once from a directory without .git with COMMIT
// given, as a build from a release tarball would be.
func TestVersionNamesCommitWithoutVCS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds guestcheck twice")
	}
	makePath, ok := testenv.Look("make")
	if !ok {
		testenv.Skip(t, "tool:make", "make not found: apt-get install make")
	}
	gitPath, ok := testenv.Look("git")
	if !ok {
		testenv.Skip(t, "tool:git", "git not found: apt-get install git")
	}
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command(gitPath, "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		testenv.Skip(t, "git-checkout", "not a git checkout: "+err.Error())
	}
	tarball := t.TempDir() // no .git: git rev-parse fails there
	for _, c := range []struct {
		name, dir, want string
		vars            []string
	}{
		{"checkout", repo, strings.TrimSpace(string(head)), nil},
		{"tarball", tarball, "0123456789abcdef0123456789abcdef01234567", []string{"COMMIT=0123456789abcdef0123456789abcdef01234567", "VERSION=1.2.3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--no-print-directory", "-s", "-f", filepath.Join(repo, "Makefile"), "-C", c.dir, "ldflags"}, c.vars...)
			ldflags, err := exec.Command(makePath, args...).Output()
			if err != nil {
				t.Fatalf("make ldflags: %v", err)
			}
			bin := filepath.Join(t.TempDir(), "guestcheck")
			build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", strings.TrimSpace(string(ldflags)), "-o", bin, "./cmd/guestcheck")
			build.Dir = repo
			build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			out, err := exec.Command(bin, "--version").Output()
			if err != nil {
				t.Fatalf("--version: %v", err)
			}
			if !strings.Contains(string(out), "\ncommit:   "+c.want+"\n") {
				t.Errorf("--version does not name commit %s:\n%s", c.want, out)
			}
		})
	}
}
