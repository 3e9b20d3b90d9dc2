//go:build vmtest

package vm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
)

// TestPackageReference unpacks the .deb the VM tests install and holds
// what it ships for operators: every man page renders with man -l and no
// warning, the bash completions load and complete, the check reference
// pages are there, and the packaged guestcheck explains a code from them.
func TestPackageReference(t *testing.T) {
	deb := debPath(t)
	dir := t.TempDir()
	if out, err := exec.Command("dpkg-deb", "-x", deb, dir).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -x: %v\n%s", err, out)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "usr/share/man/man*/*"))
	want := map[string]bool{"guestcheck.8": false, "sealprep.8": false, "guestcheck.yaml.5": false}
	for _, p := range pages {
		want[filepath.Base(p)] = true
		cmd := exec.Command("man", "-l", p)
		cmd.Env = append(os.Environ(), "MANWIDTH=80")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 || !bytes.Contains(out, []byte("NAME")) {
			t.Errorf("man -l %s: %v\n%s", filepath.Base(p), err, stderr.String())
		}
	}
	for name, found := range want {
		if !found {
			t.Errorf("the package has no man page %s", name)
		}
	}
	for cmdName, words := range map[string]string{"guestcheck": "guestcheck --only hostn", "sealprep": "sealprep verify --machine-id-mode e"} {
		script := ". " + filepath.Join(dir, "usr/share/bash-completion/completions", cmdName) +
			"\nCOMP_WORDS=(" + words + ")\nCOMP_CWORD=$((${#COMP_WORDS[@]}-1))\n_" + cmdName + "\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command("bash", "-c", script).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) == "" {
			t.Errorf("bash completion of %q from the package: %q (%v)", words, out, err)
		}
	}
	for _, f := range []string{"usr/share/zsh/vendor-completions/_guestcheck", "usr/share/fish/vendor_completions.d/sealprep.fish",
		"usr/share/doc/guestcheck/checks/hostname.md", "usr/share/doc/guestcheck/checks/fstab.md",
		"usr/share/doc/guestcheck/fleet.md", "usr/share/doc/guestcheck/probe.md", "usr/share/doc/guestcheck/packaging.md",
		"usr/share/doc/guestcheck/formats.md", "usr/share/doc/guestcheck/sealprep.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the package lacks /%s", f)
		}
	}
	// The description apt show prints names every check and command
	// (cmd/*/package_test.go hold nfpm.yaml to the code; this, that the
	// .deb carries it).
	desc, err := exec.Command("dpkg-deb", "-f", deb, "Description", "Maintainer").CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb -f: %v\n%s", err, desc)
	}
	words := strings.Join(strings.Fields(string(desc)), " ")
	for _, w := range append(checkIDs(), "guestcheck probe", "guestcheck fleet", "guestcheck explain", "guestcheck check-config",
		"sealprep list", "prove", "guestcheck maintainers <guestcheck@users.noreply.github.com>") {
		if !strings.Contains(words, w) {
			t.Errorf("the .deb's control fields do not name %q:\n%s", w, desc)
		}
	}
	out, err := exec.Command(filepath.Join(dir, "usr/bin/guestcheck"), "explain", "fstab-device-missing").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "/usr/share/doc/guestcheck/checks/fstab.md") {
		t.Errorf("packaged guestcheck explain: %v\n%s", err, out)
	}
}

// checkIDs are the registered checks' IDs.
func checkIDs() []string {
	var ids []string
	for _, c := range checks.All {
		ids = append(ids, c.ID)
	}
	return ids
}
