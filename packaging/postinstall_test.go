package packaging_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPostinstallChecksConfig runs the package's postinstall as dpkg does
// on an upgrade (configure OLD-VERSION), with the real guestcheck built
// from this tree reading a stand-in for /etc/guestcheck/guestcheck.yaml:
// a file the new version refuses is a warning naming its problems, never
// a failed install, and a valid file or no runnable guestcheck says
// nothing.
func TestPostinstallChecksConfig(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain to build guestcheck")
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "guestcheck.real")
	build := exec.Command(gobin, "build", "-o", real, "../cmd/guestcheck")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	write := func(p, body string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "guestcheck.yaml")
	for _, tc := range []struct {
		name, conf, wrapper string
		want                []string // lines on stderr, whole
	}{
		{"broken", "checks:\n  dns:\n    timout: 5s\n", "", []string{
			"guestcheck: warning: /etc/guestcheck/guestcheck.yaml is not valid for this version; guestcheck exits 3 without checking until it is fixed (see guestcheck.yaml(5)):",
			"  " + conf + ":3: checks.dns.timout: unknown key; did you mean timeout? (known here: enabled, timeout)",
		}},
		{"valid", "timeout: 90s\n", "", nil},
		{"cannot run", "", "#!/bin/sh\nexit 126\n", nil},
		{"absent", "", "none", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "bin")
			if err := os.Mkdir(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			write(filepath.Join(bin, "systemctl"), "#!/bin/sh\nexit 0\n", 0o755)
			write(conf, tc.conf, 0o644)
			switch tc.wrapper {
			case "":
				// The default path stands for the test's file.
				write(filepath.Join(bin, "guestcheck"), "#!/bin/sh\n[ \"$1\" = check-config ] && [ $# -eq 1 ] && set -- check-config '"+conf+"'\nexec '"+real+"' \"$@\"\n", 0o755)
			case "none":
			default:
				write(filepath.Join(bin, "guestcheck"), tc.wrapper, 0o755)
			}
			cmd := exec.Command(sh, "scripts/postinstall.sh", "configure", "1.0.0")
			cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("postinstall failed: %v\n%s", err, stderr.String())
			}
			var got []string
			if s := strings.TrimRight(stderr.String(), "\n"); s != "" {
				got = strings.Split(s, "\n")
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") || stdout.Len() > 0 {
				t.Errorf("stderr:\n%s\nwant:\n%s\nstdout %q", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), stdout.String())
			}
		})
	}
}
