package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

const unitDir = "../../packaging/usr/lib/systemd/system"

// unitExecArgs returns the arguments of the unit's ExecStart= after
// systemd's expansion of ${VAR} (one word) and $VAR (split at spaces, an
// empty one vanishing), using the unit's own Environment= defaults.
func unitExecArgs(t *testing.T, unit string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(unitDir, unit))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	var exec string
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Environment="); ok {
			k, val, _ := strings.Cut(v, "=")
			env[k] = val
		}
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			exec = v
		}
	}
	if exec == "" {
		t.Fatalf("%s: no ExecStart=", unit)
	}
	exec = regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(exec, func(m string) string { return env[m[2:len(m)-1]] })
	exec = regexp.MustCompile(`\$(\w+)`).ReplaceAllStringFunc(exec, func(m string) string { return env[m[1:]] })
	return strings.Fields(exec)
}

// TestTextfileUnitCommandLine parses the packaged timer unit's command line
// with guestcheck's own flag parser: it must be valid and write Prometheus
// format into Debian's textfile collector directory.
func TestTextfileUnitCommandLine(t *testing.T) {
	args := unitExecArgs(t, "guestcheck-textfile.service")
	if args[0] != "/usr/bin/guestcheck" {
		t.Fatalf("ExecStart runs %q", args[0])
	}
	o, err := parseFlags(command(nil), args[1:])
	if err != nil {
		t.Fatalf("ExecStart's flags %q: %v", args[1:], err)
	}
	want := outputSpec{format: report.FormatPrometheus, path: "/var/lib/prometheus/node-exporter/guestcheck.prom"}
	if len(o.outputs) != 1 || o.outputs[0] != want || !o.exitZero {
		t.Errorf("outputs %+v exit-zero %v; want %+v and --exit-zero", o.outputs, o.exitZero, want)
	}
}

// TestTextfileUnitsVerify runs systemd-analyze verify on the packaged
// service and timer in a scratch root with stub targets, and wants it
// silent: an unknown key or a bad value is only a warning to systemd.
func TestTextfileUnitsVerify(t *testing.T) {
	sa := testenv.Tool(t, "systemd-analyze", "systemd")
	root := t.TempDir()
	u := filepath.Join(root, "usr/lib/systemd/system")
	write := func(p, body string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, tg := range []string{"sysinit", "basic", "timers", "shutdown"} {
		write(filepath.Join(u, tg+".target"), "[Unit]\nDescription=stub\n", 0o644)
	}
	write(filepath.Join(u, "guestcheck.service"), "[Unit]\nDescription=stub\n[Service]\nExecStart=/bin/sh\n", 0o644)
	write(filepath.Join(root, "usr/bin/guestcheck"), "#!/bin/sh\n", 0o755)
	write(filepath.Join(root, "bin/sh"), "#!/bin/sh\n", 0o755)
	var units []string
	for _, n := range []string{"guestcheck-textfile.service", "guestcheck-textfile.timer"} {
		b, err := os.ReadFile(filepath.Join(unitDir, n))
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(u, n), string(b), 0o644)
		units = append(units, filepath.Join(u, n))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, sa, append([]string{"verify", "--man=no", "--root=" + root}, units...)...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestFormatsDocumented holds --help, docs/reference.md and
// docs/formats.md to the list of formats and the format flags.
func TestFormatsDocumented(t *testing.T) {
	ref, err := os.ReadFile("../../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/formats.md")
	if err != nil {
		t.Fatal(err)
	}
	var help strings.Builder
	command(nil).WriteHelp(&help)
	usageText := help.String()
	for _, f := range report.Formats {
		if !strings.Contains(usageText, string(f)) {
			t.Errorf("--help does not name format %s", f)
		}
		if !strings.Contains(string(ref), "| `"+string(f)+"` |") {
			t.Errorf("docs/reference.md's format table lacks %s", f)
		}
		if f != report.FormatText && f != report.FormatJSON && !strings.Contains(string(doc), "\n## "+string(f)+"\n") {
			t.Errorf("docs/formats.md has no section for %s", f)
		}
	}
	for _, fl := range []string{"--exit-codes", "--service-name", "--format", "--output"} {
		if !strings.Contains(usageText, "  "+fl+" ") && !strings.Contains(usageText, "  "+fl+"\n") {
			t.Errorf("--help does not list %s", fl)
		}
		if !strings.Contains(string(ref), "| `"+fl) {
			t.Errorf("docs/reference.md's flag table lacks %s", fl)
		}
	}
}
