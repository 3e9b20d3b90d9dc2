package intent

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/checks/cloud-init"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Run is the cloud-config check: gather through env.Root, then judge.
func Run(ctx context.Context, env *runner.Env) []runner.Finding {
	if err := ctx.Err(); err != nil {
		return []runner.Finding{runner.Errorf(CodeUnreadable, "cloud-config check interrupted: "+err.Error(), nil,
			"Raise checks.cloud-config.timeout in the config file")}
	}
	f := Gather(ctx, RootSource{env.Root}, Options{IsRoot: env.IsRoot, Live: env.Live})
	if env.Live {
		f.Inside, _ = cloudinit.Inside(env.Facts, env.Root)
	}
	return Judge(f)
}
