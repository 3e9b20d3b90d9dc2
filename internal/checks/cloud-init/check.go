package cloudinit

import (
	"context"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Check verifies that cloud-init ran on this boot and finished without
// errors, judged as `cloud-init status` does from its files, plus its
// systemd units; docs/checks/cloud-init.md explains each code.
var Check = runner.Check{
	ID:    "cloud-init",
	Title: "cloud-init",
	Description: "cloud-init ran this boot and finished without errors, judged from its status.json " +
		"and result.json as `cloud-init status` does, plus its systemd units",
	Settings: settings.Section(),
	Codes:    Codes,
	Pending:  NotReadyCodes,
	Run:      Run,
}

// notStartedGrace is how long after boot a cloud-init that has not
// started is still plausibly on its way (slow emulated boots take a few
// minutes to reach cloud-init-local); after it, "not started" is a failure.
const notStartedGrace = 10 * time.Minute

// judgedUnits are the units whose failure fails the check: the ones
// `cloud-init status` consults, plus cloud-init.service, the name of the
// network stage before 24.3.
func judgedUnits() []string {
	return append(UnitNames(), "cloud-init.service")
}

// Run verifies that cloud-init ran on this boot and finished without
// errors, judging status.json and result.json the way `cloud-init status`
// does (without running it), plus cloud-init's systemd units, results left
// over from an earlier boot, and the case where cloud-init itself started
// guestcheck from runcmd. It gathers the Facts, then judges them.
func Run(ctx context.Context, env *runner.Env) []runner.Finding {
	if err := ctx.Err(); err != nil {
		return []runner.Finding{interrupted(err)}
	}
	f, err := Gather(ctx, env)
	if err != nil {
		return []runner.Finding{interrupted(err)}
	}
	return Judge(f)
}

func interrupted(err error) runner.Finding {
	return codeCIInterrupted.New(runner.Error, "cloud-init check interrupted: "+err.Error(), nil, codeCIInterrupted.Fixf())
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// clipRunes shortens s to about n bytes without splitting a character.
func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }
