package checks

import (
	"context"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// TestNewChecksUnderImageRoot runs ssh, systemd and time-sync through the
// registry against an empty image root: each must answer, with its live
// parts reported as skipped rather than passed.
func TestNewChecksUnderImageRoot(t *testing.T) {
	root, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	env := &runner.Env{Root: root, Config: config.Default(), Now: time.Now}
	for id, wantCode := range map[string]string{"ssh": "ssh-not-installed", "systemd": "systemd-not-live", "time-sync": "time-sync-not-live"} {
		c, ok := ByID(id)
		if !ok {
			t.Fatalf("%s is not registered", id)
		}
		out := c.Run(context.Background(), env)
		found := false
		for _, f := range out {
			found = found || f.Code == wantCode
			if f.Status == runner.Pass && (f.Code == "systemd-running" || f.Code == "time-sync-clock-synced") {
				t.Errorf("%s: live verdict %s under an image root", id, f.Code)
			}
		}
		if !found {
			t.Errorf("%s: no %s finding in %+v", id, wantCode, out)
		}
	}
}
