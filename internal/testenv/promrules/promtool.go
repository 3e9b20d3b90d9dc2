package promrules

import (
	"context"
	"os/exec"
	"time"
)

// deadline bounds one promtool run: it evaluates a few thousand samples in
// well under a second, so a minute means a hung tool, not a slow one.
const deadline = 60 * time.Second

// run runs promtool with the deadline, returning its combined output.
func run(promtool string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	return exec.CommandContext(ctx, promtool, args...).CombinedOutput()
}
