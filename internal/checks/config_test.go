package checks

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// configMistakes are files with one kind of mistake each, as an operator
// makes them; TestErrorMessages holds their messages whole.
var configMistakes = []string{
	"timout: 5s\n",
	"checks:\n  dns:\n    timout: 5s\n",
	"checks:\n  dns:\n    timeout: 5\n",
	"timeout: 5sec\n",
	"check_timeout: 0s\n",
	"checks: [dns, routes]\n",
	"checks:\n  dns: false\n",
	"hostname: web-1\n",
	"dns:\n  names: vm1.example.org\n",
	"dns:\n  names: {a: b}\n",
	"dns:\n  retries: -1\n",
	"cloud_init:\n  required: maybe\n",
	"disk:\n  warn_percent: ninety\n",
	"disk:\n  fail_percent: 120\n",
	"probe:\n  checks: fstab\n",
	"probe:\n  checks: [fstab, dns]\n",
	"probe:\n  checks: [fstab, [hostname]]\n",
	"probe:\n  checks: []\n",
	"timeout: 1m\n---\ntimeout: 2m\n",
	"checks:\n\tdns:\n\t\tenabled: false\n",
	"timeout: 1m\ntimeout: 2m\n",
	"timeout: [\n",
	"just a word\n",
	"waivers:\n  check: time-sync\n",
	"waivers:\n  - {check: time-sync, code: time-sync-clock-unsynced}\n",
	"waivers:\n  - {check: time-sync, reason: lab}\n",
	"waivers:\n  - {check: time-sync, code: time-sync-clock-unsynced, reason: lab, expires: next year}\n",
	"waivers:\n  - {check: time-sync, code: time-sync-clock-unsynced, reason: lab, until: 2027-03-01}\n",
	"waivers:\n  - {check: time-sync, code: time-sync-clock-unsynced, reason: lab}\n  - {check: time-sync, code: time-sync-clock-unsynced, reason: again}\n",
	"timout: 5s\ndisk:\n  warn_percent: lots\n",
	// Values that decode but that their section's rules refuse (#31).
	"hostname:\n  expected: \"bad_name!\"\n",
	"routes:\n  targets: [192.0.2.1, not-an-ip]\n",
	"routes:\n  targets:\n    - gateway.example.org\n",
	"disk:\n  warn_percent: 99\n  fail_percent: 90\n",
	"disk:\n  fail_percent: 80\n",
	"probe:\n  timeout: 2m\n",
	"probe:\n  checks: [fstab, hostname, fstab]\n",
	"hostname:\n  expected: \"bad_name!\"\nroutes:\n  targets: [not-an-ip]\ndisk:\n  warn_percent: 99\n  fail_percent: 90\nprobe:\n  timeout: 2m\n",
	// YAML syntax, at the line at fault and in plain words (#31).
	"timeout: 1m\nchecks:\n  dns: {enabled: false\nprobe: {}\n",
	"a: 1\nb: 2\nroutes:\n  targets: [192.0.2.1,\n  default_interface: eth0\n",
	"hostname:\n  expected: \"web-1\ntimeout: 1m\n",
	"routes: {targets: [192.0.2.1}\n",
	"routes:\n  targets: [192.0.2.1]]\n",
	"timeout: 1m\n- dns\n",
	"checks:\n  dns:\n    enabled: false\n   timeout: 5s\n",
	"hostname: {expected: a: b}\n",
	"hostname:\n  expected: @web\n",
	"dns: {timeout: 1s}\nchecks: {dns: *other}\n",
	// A structural mistake does not hide a semantic one.
	"timout: 5s\nhostname:\n  expected: web_1\n",
}

// TestConfigMessages holds every configuration message, the general
// keys' and the checks' own sections', to testdata/config-errors.golden,
// whole: one line each, naming the file, the
// line and the key path, in the user's words.
func TestConfigMessages(t *testing.T) {
	var b strings.Builder
	for _, in := range configMistakes {
		_, err := config.Parse("guestcheck.yaml", []byte(in), runner.Sections(All)...)
		fmt.Fprintf(&b, "$ %q\n", in)
		if err == nil {
			t.Errorf("Parse(%q) accepted", in)
			continue
		}
		var probs config.Errors
		if errors.As(err, &probs) && len(probs) > 1 {
			for _, p := range probs {
				fmt.Fprintf(&b, "| %s\n", p)
			}
		}
		fmt.Fprintf(&b, "> %s\n", err)
		for _, bad := range []string{"\n", "time.Duration", "config.", "struct", "!!", ": yaml:"} {
			if strings.Contains(err.Error(), bad) {
				t.Errorf("Parse(%q) = %q: holds %q", in, err, bad)
			}
		}
	}
	testenv.Golden(t, filepath.Join("testdata", "config-errors.golden"), b.String(), *update)
}
