package cloudconfig

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/checks/cloud-init"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Check compares what the instance's user-data asked cloud-init for
// (users, keys, sudo, ssh_pwauth, packages, write_files, runcmd and more)
// with the system it produced, and validates the user-data against the
// guest's own cloud-init schema; docs/checks/cloud-config.md explains
// each code.
var Check = runner.Check{
	ID:          "cloud-config",
	Title:       "cloud-config applied",
	Description: "what user-data asked cloud-init for is what the system has, and user-data is valid under the installed cloud-init's schema",
	Codes:       Codes,
	Run:         Run,
}

// Run is the cloud-config check: gather through env.Root, then judge.
func Run(ctx context.Context, env *runner.Env) []runner.Finding {
	if err := ctx.Err(); err != nil {
		return []runner.Finding{codeUnreadable.New(runner.Error, "cloud-config check interrupted: "+err.Error(), nil,
			codeUnreadable.CaseFix("when the check was interrupted"))}
	}
	f := Gather(ctx, RootSource{env.Root}, Options{IsRoot: env.IsRoot, Live: env.Live})
	if env.Live {
		f.Inside, _ = cloudinit.Inside(env.Facts, env.Root)
	}
	return Judge(f)
}
