package runner

import (
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/config"
)

// TestValidate holds the registry's side of a configuration's messages:
// check IDs under checks:, probe.checks and waivers, and waivers' codes,
// each at its line with a suggestion.
func TestValidate(t *testing.T) {
	all := []Check{{ID: "time-sync", Codes: codesOf("time-sync-clock-unsynced", "time-sync-ok")}, {ID: "fstab", Codes: codesOf("fstab-ok")}}
	for _, tc := range []struct{ in, want string }{
		{"checks:\n  time-synk: {enabled: false}\n", "g.yaml:2: checks.time-synk: unknown check ID; did you mean time-sync? (see guestcheck --list)"},
		{"checks:\n  fstab-ok: {enabled: false}\n", "g.yaml:2: checks.fstab-ok: a finding code of check fstab, not a check ID; to accept one finding, list it under waivers:"},
		{"probe:\n  checks:\n    - fstab\n    - fstob\n", `g.yaml:4: probe.checks[1]: unknown check ID "fstob"; did you mean fstab? (see guestcheck --list)`},
		{"waivers:\n  - {check: time-synk, code: time-sync-ok, reason: x}\n", `g.yaml:2: waivers[0].check: unknown check ID "time-synk"; did you mean time-sync? (see guestcheck --list)`},
		{"waivers:\n  - {check: time-sync-ok, code: time-sync-ok, reason: x}\n", `g.yaml:2: waivers[0].check: "time-sync-ok" is a finding code of check time-sync; check: takes a check ID, code: the finding code`},
		{"waivers:\n  - check: time-sync\n    code: time-sync-clock-unsync\n    reason: x\n", `g.yaml:3: waivers[0].code: time-sync has no finding code "time-sync-clock-unsync"; did you mean time-sync-clock-unsynced? (guestcheck explain time-sync lists them)`},
		{"waivers:\n  - {check: time-sync, code: fstab-ok, reason: x}\n", `g.yaml:2: waivers[0].code: time-sync has no finding code "fstab-ok"; it is a code of check fstab (check: fstab)`},
	} {
		cfg, err := config.Parse("g.yaml", []byte(tc.in))
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		if err := Validate(all, cfg); err == nil || err.Error() != tc.want {
			t.Errorf("Validate(%q) = %v\n want %s", tc.in, err, tc.want)
		}
	}
	cfg, _ := config.Parse("g.yaml", []byte("waivers:\n  - {check: time-sync, code: time-sync-ok, reason: x}\nchecks:\n  fstab: {}\n"))
	if err := Validate(all, cfg); err != nil {
		t.Errorf("Validate(good) = %v", err)
	}
}
