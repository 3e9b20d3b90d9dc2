package cloudinit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/checks/cloud-init/cloudinittest"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// TestWaitBeforeChecks holds --wait's notices: none when cloud-init
// finished, and a reason when guestcheck did not wait or gave up.
func TestWaitBeforeChecks(t *testing.T) {
	t.Parallel()
	running := `{"v1": {"datasource": "DataSourceNoCloud", "stage": "modules-config",
	  "init": {"errors": [], "start": 3.0, "finished": 4.0}, "modules-config": {"errors": [], "start": 9.0, "finished": null}}}`
	for _, tc := range []struct {
		name  string
		build func(r *cloudinittest.Root)
		live  bool
		want  string // prefix of the notice; "" for none
	}{
		{"image root", func(r *cloudinittest.Root) {}, false, "--wait ignored: needs the running system, but --root is "},
		{"disabled", func(r *cloudinittest.Root) { r.Installed().Write(DisabledMarkerPath, "") }, true, ""},
		{"not installed", func(r *cloudinittest.Root) {}, true, ""},
		{"inside cloud-init", func(r *cloudinittest.Root) {
			r.Installed().Uptime(time.Minute).Write(StatusPath, running).
				Proc(640, 1, "cloud-init", "/usr/bin/python3", "/usr/bin/cloud-init", "modules", "--mode=final").
				Proc(900, 640, "runcmd", "/bin/sh", "/var/lib/cloud/instance/scripts/runcmd").
				Proc(950, 900, "guestcheck", "guestcheck", "--wait", "10m").Self(950)
		}, true, "not waiting: refusing to wait for cloud-init from inside cloud-init (started by "},
		{"still running", func(r *cloudinittest.Root) {
			r.Installed().Uptime(time.Minute).Write(GeneratorEnabledPath, "").Write(StatusPath, running)
		}, true, `cloud-init is still "running" after --wait 80ms; checking now`},
		{"unreadable", func(r *cloudinittest.Root) {
			r.Installed().Write(StatusPath, `{"v1": {"init": {"start": "x"}}}`)
		}, true, "cloud-init state unknown after --wait 80ms ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := cloudinittest.New(t)
			tc.build(r)
			env := &runner.Env{Root: r.Open(), Live: tc.live}
			start := time.Now()
			got := WaitBeforeChecks(context.Background(), env, 80*time.Millisecond)
			if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
				t.Errorf("notice = %q, want prefix %q", got, tc.want)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("--wait 80ms took %v", el)
			}
		})
	}
}
