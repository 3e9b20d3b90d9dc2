package vm

// This file has no build tag: the mirror lookup is tested in every
// `go test ./...`, and the VM tests use it to build their images.

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// debianSources returns the apt source lines for suite that
// scripts/debian-mirrors.sh derives (GUESTCHECK_DEBIAN_MIRROR, else the
// host's apt sources), so that images build behind a company mirror as
// apt itself fetches.
func debianSources(t *testing.T, suite string) []string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join("..", "..", "scripts", "debian-mirrors.sh"), suite).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		t.Fatalf("image: %s", msg)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func TestDebianMirrors(t *testing.T) {
	etc := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(etc, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(etc, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lookup := func(env ...string) ([]string, string, error) {
		cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "debian-mirrors.sh"), "trixie")
		cmd.Env = append([]string{"GUESTCHECK_APT_ETC=" + etc, "PATH=" + os.Getenv("PATH")}, env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		return strings.Split(strings.TrimSpace(string(out)), "\n"), strings.TrimSpace(stderr.String()), err
	}
	want := func(main, sec string) []string {
		return []string{"deb " + main + " trixie main", "deb " + main + " trixie-updates main", "deb " + sec + " trixie-security main"}
	}

	// No sources and no variable: one line naming the variable.
	if _, msg, err := lookup(); err == nil || !strings.Contains(msg, "GUESTCHECK_DEBIAN_MIRROR") || strings.Contains(msg, "\n") {
		t.Errorf("no sources: err %v, message %q", err, msg)
	}
	// deb822, with a disabled Debian entry and another vendor's repository first.
	write("sources.list.d/vendor.sources", "Types: deb\nURIs: https://vendor.example/apt\nSuites: nodistro\nComponents: main\n")
	write("sources.list.d/debian.sources", "Types: deb\nURIs: http://old.example/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n\n"+
		"Types: deb deb-src\n# a comment\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\nComponents: main\n\n"+
		"Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n")
	if got, msg, err := lookup(); err != nil || !reflect.DeepEqual(got, want("http://mirror.example/debian", "http://mirror.example/debian-security")) {
		t.Errorf("deb822: %q (%v, %s)", got, err, msg)
	}
	// One-line format with options, old-style security suite; sources.list comes first.
	write("sources.list", "# deb http://commented.example/debian bookworm main\n"+
		"deb [arch=amd64 signed-by=/k.gpg] http://proxy.example:3142/debian bullseye main\n"+
		"deb http://proxy.example:3142/security bullseye/updates main\n")
	if got, msg, err := lookup(); err != nil || !reflect.DeepEqual(got, want("http://proxy.example:3142/debian", "http://proxy.example:3142/security")) {
		t.Errorf("one-line: %q (%v, %s)", got, err, msg)
	}
	// The variable wins; the security archive defaults to the host's.
	if got, _, err := lookup("GUESTCHECK_DEBIAN_MIRROR=http://corp.example/deb"); err != nil || !reflect.DeepEqual(got, want("http://corp.example/deb", "http://proxy.example:3142/security")) {
		t.Errorf("variable: %q (%v)", got, err)
	}
	// debianSources, which the image builds call, passes the variable on.
	t.Setenv("GUESTCHECK_DEBIAN_MIRROR", "http://corp.example/deb")
	t.Setenv("GUESTCHECK_DEBIAN_SECURITY_MIRROR", "http://corp.example/sec")
	if got := debianSources(t, "trixie"); !reflect.DeepEqual(got, want("http://corp.example/deb", "http://corp.example/sec")) {
		t.Errorf("debianSources: %q", got)
	}
	os.RemoveAll(etc)
	if got, _, err := lookup("GUESTCHECK_DEBIAN_MIRROR=http://corp.example/deb"); err != nil || !reflect.DeepEqual(got, want("http://corp.example/deb", "http://corp.example/deb-security")) {
		t.Errorf("variable alone: %q (%v)", got, err)
	}
}
