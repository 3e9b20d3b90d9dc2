package cloudinit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"

	"github.com/guestcheck/guestcheck/internal/checks/cloud-init/cloudinittest"
	"github.com/guestcheck/guestcheck/internal/fact/identity/appid"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
)

var ciNow = time.Date(2025, 11, 29, 22, 0, 0, 0, time.UTC)

const (
	ciDone = `{"v1": {"datasource": "DataSourceNoCloud [seed=/dev/vdb][dsmode=net]", "stage": null,
	  "init-local": {"errors": [], "recoverable_errors": {}, "start": 4.1, "finished": 5.2},
	  "init": {"errors": [], "recoverable_errors": {}, "start": 8.0, "finished": 11.5},
	  "modules-config": {"errors": [], "recoverable_errors": {}, "start": 14.0, "finished": 15.0},
	  "modules-final": {"errors": [], "recoverable_errors": {}, "start": 20.0, "finished": 25.5}}}`
	ciResultOK  = `{"v1": {"datasource": "DataSourceNoCloud [seed=/dev/vdb][dsmode=net]", "errors": []}}`
	ciDoneEpoch = `{"v1": {"datasource": "DataSourceNoCloud [seed=/dev/vdb][dsmode=net]", "stage": null,
	  "init-local": {"errors": [], "start": 1764453000.5, "finished": 1764453002.0},
	  "modules-final": {"errors": [], "start": 1764453100.0, "finished": 1764453110.25}}}`
	ciModuleError = `{"v1": {"datasource": "DataSourceNoCloud", "stage": null,
	  "init": {"errors": [], "start": 8.0, "finished": 11.5},
	  "modules-config": {"errors": ["('write_files', PermissionError(13, 'Permission denied'))"], "recoverable_errors": {"WARNING":
	     ["Running module write_files (<module 'cloudinit.config.cc_write_files' from '/usr/lib/python3/dist-packages/cloudinit/config/cc_write_files.py'>) failed"]},
	     "start": 14.0, "finished": 15.0},
	  "modules-final": {"errors": [], "start": 20.0, "finished": 25.5}}}`
	ciDegraded = `{"v1": {"datasource": "DataSourceNoCloud", "stage": null,
	  "init": {"errors": [], "recoverable_errors": {"DEPRECATED": ["Deprecated cloud-config provided: apt_upgrade:  Deprecated in version 22.2."]}, "start": 8.0, "finished": 11.5},
	  "modules-config": {"errors": [], "recoverable_errors": {"WARNING": ["Invalid cloud-config provided:\npermissions: 420 is not of type 'string'", "second warning"]}, "start": 14.0, "finished": 15.0},
	  "modules-final": {"errors": [], "start": 20.0, "finished": 25.5}}}`
	ciRunningFinal = `{"v1": {"datasource": "DataSourceNoCloud", "stage": "modules-final",
	  "init": {"errors": [], "start": 8.0, "finished": 11.5},
	  "modules-config": {"errors": [], "start": 14.0, "finished": 15.0},
	  "modules-final": {"errors": [], "start": 20.0, "finished": null}}}`
	ciRunningFinalDirtyInit = `{"v1": {"datasource": "DataSourceNoCloud", "stage": "modules-final",
	  "init": {"errors": ["Consuming user data failed!"], "start": 8.0, "finished": 11.5},
	  "modules-final": {"errors": [], "start": 20.0, "finished": null}}}`
	ciRunningInit = `{"v1": {"datasource": null, "stage": "init",
	  "init-local": {"errors": [], "start": 4.0, "finished": 5.0},
	  "init": {"errors": [], "start": 8.0, "finished": null}}}`
	ciDoneNone = `{"v1": {"datasource": "DataSourceNone", "stage": null,
	  "init": {"errors": [], "recoverable_errors": {"WARNING": ["Used fallback datasource"]}, "start": 8.0, "finished": 11.5},
	  "modules-final": {"errors": [], "start": 20.0, "finished": 25.5}}}`
)

// ciHealthyUnits are cloud-init 25.1's units after a clean boot.
func ciHealthyUnits() []systemd.UnitState {
	return []systemd.UnitState{
		cloudinittest.Unit("cloud-init-main.service", "active", "exited", "enabled"),
		cloudinittest.Unit("cloud-init-local.service", "active", "exited", "enabled"),
		cloudinittest.Unit("cloud-init-network.service", "active", "exited", "enabled"),
		cloudinittest.Unit("cloud-config.service", "active", "exited", "enabled"),
		cloudinittest.Unit("cloud-final.service", "active", "exited", "enabled"),
	}
}

func ciUnitsWith(u systemd.UnitState) []systemd.UnitState {
	out := ciHealthyUnits()
	for i := range out {
		if out[i].Name == u.Name {
			out[i] = u
		}
	}
	return out
}

// ciRuncmdChain makes guestcheck a child of cloud-init's runcmd script.
func ciRuncmdChain(r *cloudinittest.Root) {
	r.Proc(1, 0, "systemd", "/sbin/init").
		Proc(345, 1, "cloud-init", "/usr/bin/python3", "/usr/bin/cloud-init", "--all-stages").
		Proc(900, 345, "runcmd", "/bin/sh", "/var/lib/cloud/instance/scripts/runcmd").
		Proc(950, 900, "guestcheck", "/usr/local/bin/guestcheck", "--exit-zero").Self(950)
}

// ciBooted is a live root with cloud-init installed and enabled, up for up.
func ciBooted(t *testing.T, up time.Duration) *cloudinittest.Root {
	return cloudinittest.New(t).Installed().Uptime(up).Write(GeneratorEnabledPath, "")
}

type ciCase struct {
	name     string
	root     func(t *testing.T) *cloudinittest.Root
	offline  bool
	required bool
	sd       *cloudinittest.Systemd // nil: healthy units
	want     []string               // "status code" per finding, sorted
	check    func(t *testing.T, fs []runner.Finding, rootDir string)
}

func TestCloudInitCheck(t *testing.T) {
	cases := []ciCase{
		{name: "not installed", root: func(t *testing.T) *cloudinittest.Root { return cloudinittest.New(t) },
			want: []string{"skip cloud-init-not-installed"}},
		{name: "not installed but required", required: true, root: func(t *testing.T) *cloudinittest.Root { return cloudinittest.New(t) },
			want: []string{"fail cloud-init-not-installed"}},
		{name: "done", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciDone).Write(ResultPath, ciResultOK).
				Write(InstanceDataPath, `{"v1": {"instance_id": "iid-42", "cloud_name": "nocloud", "local_hostname": "vm1"}}`)
		}, want: []string{"pass cloud-init-done"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
			d := fs[0].Detail
			for k, v := range map[string]string{
				"datasource": "nocloud", "extended_status": "done", "cloud_init_exit_code": "0", "boot_status_code": "enabled-by-generator",
				"stage": "none running", "instance_id": "iid-42", "cloud_name": "nocloud", "local_hostname": "vm1",
				"timestamp_encoding": "seconds since boot (24.2+)", "uptime": "5m0s",
				// Booted at 21:55:00; modules-final finished 25.5 s later.
				"last_update":         "2025-11-29T21:55:25Z (25.5)",
				"stage_modules_final": "start 2025-11-29T21:55:20Z (20), finished 2025-11-29T21:55:25Z (25.5)",
				"units":               "cloud-final.service=active/exited (enabled), cloud-config.service=active/exited (enabled), cloud-init-network.service=active/exited (enabled), cloud-init-local.service=active/exited (enabled), cloud-init-main.service=active/exited (enabled), cloud-init.service=not-found",
			} {
				if d[k] != v {
					t.Errorf("detail %s = %q, want %q", k, d[k], v)
				}
			}
		}},
		// KubeVirt's NoCloud instance-id is the firmware UUID, which
		// systemd on KVM makes the machine-id: only its hash is shown.
		{name: "done, a UUID instance-id", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciDone).Write(ResultPath, ciResultOK).
				Write(InstanceDataPath, `{"v1": {"instance_id": "4c4c4544-0042-3510-8056-b4c04f4d3232", "cloud_name": "nocloud"}}`)
		}, want: []string{"pass cloud-init-done"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
			d := fs[0].Detail
			if h, _ := appid.UUIDHash("4c4c4544-0042-3510-8056-b4c04f4d3232"); d["instance_id_hash"] != h || d["instance_id"] != "" {
				t.Errorf("detail instance_id %q, instance_id_hash %q, want only the hash %s", d["instance_id"], d["instance_id_hash"], h)
			}
		}},
		{name: "done, epoch timestamps before 24.2", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, time.Hour).Write(StatusPath, ciDoneEpoch).Write(ResultPath, ciResultOK)
		}, want: []string{"pass cloud-init-done"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
			d := fs[0].Detail
			if d["timestamp_encoding"] != "epoch seconds (before 24.2)" || d["last_update"] != "2025-11-29T21:51:50Z (1764453110.25)" {
				t.Errorf("detail = %q %q", d["timestamp_encoding"], d["last_update"])
			}
		}},
		{name: "module error", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciModuleError).
				Write(ResultPath, `{"v1": {"datasource": "DataSourceNoCloud", "errors": ["('write_files', PermissionError(13, 'Permission denied'))"]}}`)
		}, want: []string{"fail cloud-init-module-error", "warn cloud-init-recoverable-error"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
			f := ciFind(t, fs, "cloud-init-module-error")
			if f.Message != "cloud-init module write_files failed in stage modules-config: ('write_files', PermissionError(13, 'Permission denied'))" {
				t.Errorf("message = %q", f.Message)
			}
			if f.Detail["module"] != "write_files" || f.Detail["error_stage"] != "modules-config" || f.Detail["extended_status"] != "error - done" ||
				f.Detail["cloud_init_exit_code"] != "1" {
				t.Errorf("detail = %v", f.Detail)
			}
		}},
		{name: "degraded", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciDegraded).Write(ResultPath, ciResultOK)
		}, want: []string{"pass cloud-init-done", "warn cloud-init-recoverable-error", "warn cloud-init-recoverable-error"},
			check: func(t *testing.T, fs []runner.Finding, _ string) {
				var levels []string
				for _, f := range fs {
					if f.Code == "cloud-init-recoverable-error" {
						levels = append(levels, f.Detail["level"])
						if f.Detail["level"] == "WARNING" {
							if f.Message != "cloud-init logged 2 WARNING messages: Invalid cloud-config provided: permissions: 420 is not of type 'string' (+1 more)" {
								t.Errorf("message = %q", f.Message)
							}
							if f.Detail["messages"] != "Invalid cloud-config provided: permissions: 420 is not of type 'string'\nsecond warning" {
								t.Errorf("messages = %q", f.Detail["messages"])
							}
						}
					}
				}
				if strings.Join(levels, ",") != "DEPRECATED,WARNING" {
					t.Errorf("levels = %v", levels)
				}
				if f := ciFind(t, fs, "cloud-init-done"); f.Detail["extended_status"] != "degraded done" || f.Message != "cloud-init finished this boot: degraded done (datasource nocloud)" {
					t.Errorf("done = %q %v", f.Message, f.Detail["extended_status"])
				}
			}},
		{name: "running, not from cloud-init", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 2*time.Minute).Write(StatusPath, ciRunningFinal)
		}, sd: &cloudinittest.Systemd{States: ciUnitsWith(cloudinittest.Unit("cloud-final.service", "activating", "start", "enabled"))},
			want: []string{"warn cloud-init-running"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
				if !strings.Contains(fs[0].Remediation, "--wait") {
					t.Errorf("remediation does not suggest --wait: %q", fs[0].Remediation)
				}
			}},
		{name: "running in final, invoked from runcmd", root: func(t *testing.T) *cloudinittest.Root {
			r := ciBooted(t, 2*time.Minute).Write(StatusPath, ciRunningFinal)
			ciRuncmdChain(r)
			return r
		}, sd: &cloudinittest.Systemd{States: ciUnitsWith(cloudinittest.Unit("cloud-final.service", "activating", "start", "enabled"))},
			want: []string{"pass cloud-init-running-in-final"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
				d := fs[0].Detail
				if !strings.Contains(d["invoked_from"], "scripts/runcmd (pid 900)") || !strings.Contains(d["note"], "--exit-zero") ||
					d["extended_status"] != "running" || !strings.Contains(fs[0].Message, "earlier stages finished cleanly") {
					t.Errorf("finding = %+v", fs[0])
				}
			}},
		{name: "running in final from runcmd, earlier stage failed", root: func(t *testing.T) *cloudinittest.Root {
			r := ciBooted(t, 2*time.Minute).Write(StatusPath, ciRunningFinalDirtyInit)
			ciRuncmdChain(r)
			return r
		}, want: []string{"fail cloud-init-module-error", "pass cloud-init-running-in-final"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
			if f := ciFind(t, fs, "cloud-init-module-error"); f.Message != "cloud-init stage init failed: Consuming user data failed!" {
				t.Errorf("message = %q", f.Message)
			}
		}},
		{name: "running init stage, invoked from bootcmd", root: func(t *testing.T) *cloudinittest.Root {
			r := ciBooted(t, time.Minute).Write(StatusPath, ciRunningInit)
			r.Proc(345, 1, "cloud-init", "/usr/bin/python3", "/usr/bin/cloud-init", "init").
				Proc(400, 345, "sh", "/bin/sh", "/var/lib/cloud/instance/boothooks/x").
				Proc(401, 400, "guestcheck", "guestcheck").Self(401)
			return r
		}, want: []string{"warn cloud-init-running"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
			if !strings.Contains(fs[0].Message, "stage init, which started guestcheck") {
				t.Errorf("message = %q", fs[0].Message)
			}
		}},
		{name: "not started, booting", root: func(t *testing.T) *cloudinittest.Root { return ciBooted(t, 90*time.Second) },
			want: []string{"warn cloud-init-not-started"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
				// 8m30s of the 10m grace is left: wait that, rounded up.
				if !strings.Contains(fs[0].Remediation, "`--wait 9m`") {
					t.Errorf("fix = %q, want --wait 9m", fs[0].Remediation)
				}
			}},
		{name: "not started, long after boot", root: func(t *testing.T) *cloudinittest.Root { return ciBooted(t, 11*time.Minute) },
			want: []string{"fail cloud-init-not-started"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
				// Past the grace period no wait is advised: why it did not start.
				if r := fs[0].Remediation; strings.Contains(r, "--wait") || !strings.Contains(r, "should have started by now") || !strings.Contains(r, "journalctl") {
					t.Errorf("fix = %q", r)
				}
			}},
		{name: "not started, uptime unknown", root: func(t *testing.T) *cloudinittest.Root {
			return cloudinittest.New(t).Installed()
		}, want: []string{"warn cloud-init-not-started"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
			if !strings.Contains(fs[0].Remediation, "`--wait 10m`") {
				t.Errorf("fix = %q, want --wait 10m", fs[0].Remediation)
			}
		}},
		{name: "offline image", offline: true, root: func(t *testing.T) *cloudinittest.Root {
			return cloudinittest.New(t).Installed().Uptime(time.Hour)
		}, want: []string{"skip cloud-init-not-started"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
			if !strings.HasPrefix(fs[0].Detail["units"], "not queried") {
				t.Errorf("units = %q", fs[0].Detail["units"])
			}
		}},
		{name: "stale boot-finished and result.json", root: func(t *testing.T) *cloudinittest.Root {
			boot := ciNow.Add(-time.Hour)
			return ciBooted(t, time.Hour).
				Write(BootFinishedPath, "40.10 - Thu, 27 Nov 2025 09:00:40 +0000 - v. 25.1.4\n").
				Chtime(BootFinishedPath, boot.Add(-49*time.Hour)).
				Write(DataResultPath, ciResultOK).Chtime(DataResultPath, boot.Add(-49*time.Hour))
		}, want: []string{"fail cloud-init-not-started", "warn cloud-init-stale-result", "warn cloud-init-stale-result"},
			check: func(t *testing.T, fs []runner.Finding, dir string) {
				f := ciFind(t, fs, "cloud-init-stale-result")
				want := "/var/lib/cloud/instance/boot-finished is from an earlier boot (modified 2025-11-27T20:00:00Z, before this boot at 2025-11-29T21:00:00Z)"
				if f.Message != want {
					t.Errorf("message = %q\nwant      %q", f.Message, want)
				}
			}},
		{name: "stale status.json from a longer earlier boot", root: func(t *testing.T) *cloudinittest.Root {
			// /run survived (not a tmpfs): events at uptime 20-25 s, up 10 s now.
			return ciBooted(t, 10*time.Second).Write(StatusPath, ciDone).Write(ResultPath, ciResultOK)
		}, want: []string{"warn cloud-init-not-started", "warn cloud-init-stale-result"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
			if f := ciFind(t, fs, "cloud-init-stale-result"); !strings.Contains(f.Message, "its last event is at uptime 26s, but this boot has been up only 10s") {
				t.Errorf("message = %q", f.Message)
			}
		}},
		{name: "disabled by marker file", root: func(t *testing.T) *cloudinittest.Root {
			// Leftovers are expected once cloud-init is disabled after first boot.
			return ciBooted(t, time.Hour).Write(DisabledMarkerPath, "").
				Write(BootFinishedPath, "40.10 - Thu, 27 Nov 2025 09:00:40 +0000 - v. 25.1.4\n").
				Chtime(BootFinishedPath, ciNow.Add(-72*time.Hour))
		}, want: []string{"skip cloud-init-disabled"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
			if fs[0].Message != "cloud-init is disabled on this boot: Cloud-init disabled by /etc/cloud/cloud-init.disabled (disabled-by-marker-file)" {
				t.Errorf("message = %q", fs[0].Message)
			}
		}},
		{name: "disabled by kernel command line, required", required: true, root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, time.Hour).Write("/proc/cmdline", "root=/dev/vda1 ro cloud-init=disabled\n")
		}, want: []string{"fail cloud-init-disabled"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
			if fs[0].Detail["boot_status_code"] != "disabled-by-kernel-command-line" || !strings.Contains(fs[0].Remediation, "kernel command line") {
				t.Errorf("finding = %+v", fs[0])
			}
		}},
		{name: "disabled by generator", root: func(t *testing.T) *cloudinittest.Root {
			return cloudinittest.New(t).Installed().Uptime(time.Hour).Write(GeneratorDisabledPath, "")
		}, want: []string{"skip cloud-init-disabled"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
			if fs[0].Detail["boot_status_code"] != "disabled-by-generator" {
				t.Errorf("detail = %v", fs[0].Detail)
			}
		}},
		{name: "disabled by environment", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, time.Hour).Write("/proc/1/environ", "KERNEL_CMDLINE=cloud-init=disabled\x00")
		}, want: []string{"skip cloud-init-disabled"}},
		{name: "failed unit", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciDone).Write(ResultPath, ciResultOK)
		}, sd: &cloudinittest.Systemd{States: ciUnitsWith(cloudinittest.Unit("cloud-final.service", "failed", "failed", "enabled"))},
			want: []string{"fail cloud-init-unit-failed", "pass cloud-init-done"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
				f := ciFind(t, fs, "cloud-init-unit-failed")
				if f.Message != "cloud-final.service failed (failed/failed)" || f.Detail["unit"] != "cloud-final.service" {
					t.Errorf("finding = %+v", f)
				}
			}},
		{name: "crashed while running: cloud-init's own error - done", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciRunningFinal)
		}, sd: &cloudinittest.Systemd{States: ciUnitsWith(cloudinittest.Unit("cloud-final.service", "failed", "failed", "enabled"))},
			want: []string{"fail cloud-init-unit-failed"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
				if d := fs[0].Detail; d["extended_status"] != "error - done" || d["cloud_init_exit_code"] != "1" {
					t.Errorf("detail = %v", d)
				}
			}},
		{name: "masked unit", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciDone).Write(ResultPath, ciResultOK)
		}, sd: &cloudinittest.Systemd{States: ciUnitsWith(cloudinittest.Unit("cloud-config.service", "inactive", "dead", "masked"))},
			want: []string{"fail cloud-init-unit-failed", "pass cloud-init-done"}},
		{name: "no systemd", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciDone).Write(ResultPath, ciResultOK)
		}, sd: &cloudinittest.Systemd{Err: fmt.Errorf("connect: %w", systemd.ErrNotRunning)},
			want: []string{"pass cloud-init-done"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
				if fs[0].Detail["units"] != "systemd not running" {
					t.Errorf("units = %q", fs[0].Detail["units"])
				}
			}},
		{name: "systemd query fails", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciDone).Write(ResultPath, ciResultOK)
		}, sd: &cloudinittest.Systemd{Err: errors.New("dbus: access denied\nretry later")},
			want: []string{"pass cloud-init-done"}, check: func(t *testing.T, fs []runner.Finding, _ string) {
				if fs[0].Detail["units"] != "query failed: dbus: access denied retry later" {
					t.Errorf("units = %q", fs[0].Detail["units"])
				}
			}},
		{name: "datasource none", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciDoneNone).Write(ResultPath, ciResultOK)
		}, want: []string{"pass cloud-init-done", "warn cloud-init-datasource-none", "warn cloud-init-recoverable-error"}},
		{name: "truncated status.json", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciDone[:100])
		}, sd: &cloudinittest.Systemd{States: ciUnitsWith(cloudinittest.Unit("cloud-final.service", "failed", "failed", "enabled"))},
			// The unreadable file does not hide the unit failure.
			want: []string{"error cloud-init-status-unreadable", "fail cloud-init-unit-failed"}, check: func(t *testing.T, fs []runner.Finding, dir string) {
				f := ciFind(t, fs, "cloud-init-status-unreadable")
				if f.Message != "/run/cloud-init/status.json: unexpected end of JSON input" {
					t.Errorf("message = %q", f.Message)
				}
			}},
		{name: "garbage result.json", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciDone).Write(ResultPath, "not json at all")
		}, want: []string{"pass cloud-init-done", "warn cloud-init-result-unreadable"}, check: func(t *testing.T, fs []runner.Finding, dir string) {
			f := ciFind(t, fs, "cloud-init-result-unreadable")
			want := "/run/cloud-init/result.json is unusable (invalid character 'o' in literal null (expecting 'u') (at byte 2)), " +
				"so tools that read it get no result; the verdict comes from status.json, as cloud-init's does"
			if f.Message != want || f.Detail["reason"] != "invalid character 'o' in literal null (expecting 'u') (at byte 2)" {
				t.Errorf("message = %q\nwant      %q", f.Message, want)
			}
		}},
		// cloud-init only tests that result.json exists: the errors
		// status.json names are the verdict, whatever result.json holds.
		{name: "module error with empty result.json", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciModuleError).Write(ResultPath, "")
		}, want: []string{"fail cloud-init-module-error", "warn cloud-init-recoverable-error", "warn cloud-init-result-unreadable"},
			check: func(t *testing.T, fs []runner.Finding, _ string) {
				f := ciFind(t, fs, "cloud-init-module-error")
				if f.Detail["module"] != "write_files" || f.Detail["extended_status"] != "error - done" || f.Detail["cloud_init_exit_code"] != "1" {
					t.Errorf("module error detail = %q", f.Detail)
				}
				if r := ciFind(t, fs, "cloud-init-result-unreadable"); r.Detail["reason"] != "unexpected end of JSON input" {
					t.Errorf("reason = %q", r.Detail["reason"])
				}
			}},
		{name: "module error with truncated result.json", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciModuleError).Write(ResultPath, `{"v1": {"datasource": "DataSourceNoCloud", "errors": ["('write_`)
		}, want: []string{"fail cloud-init-module-error", "warn cloud-init-recoverable-error", "warn cloud-init-result-unreadable"}},
		{name: "module error with result.json not an object", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciModuleError).Write(ResultPath, `[]`)
		}, want: []string{"fail cloud-init-module-error", "warn cloud-init-recoverable-error", "warn cloud-init-result-unreadable"},
			check: func(t *testing.T, fs []runner.Finding, _ string) {
				if r := ciFind(t, fs, "cloud-init-result-unreadable"); r.Detail["reason"] != "top level is an array, want an object" {
					t.Errorf("reason = %q", r.Detail["reason"])
				}
			}},
		{name: "running with null result.json is done", root: func(t *testing.T) *cloudinittest.Root {
			// status.json alone says running; a result.json, even "null",
			// ends the run for cloud-init.
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciDone).Write(ResultPath, "null")
		}, want: []string{"pass cloud-init-done", "warn cloud-init-result-unreadable"}},
		{name: "both status.json and result.json broken", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, "").Write(ResultPath, `"done"`)
		}, want: []string{"error cloud-init-status-unreadable", "warn cloud-init-result-unreadable"},
			check: func(t *testing.T, fs []runner.Finding, _ string) {
				if r := ciFind(t, fs, "cloud-init-result-unreadable"); !strings.HasSuffix(r.Message, "status.json is unusable too, so there is no verdict") {
					t.Errorf("message = %q", r.Message)
				}
			}},
		{name: "wrong type in status.json", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, `{"v1": {"modules-final": {"errors": "none", "start": 1.0}}}`)
		}, want: []string{"error cloud-init-status-unreadable"}, check: func(t *testing.T, fs []runner.Finding, dir string) {
			if fs[0].Message != `/run/cloud-init/status.json: "v1.modules-final.errors" is a string, want an array of strings` {
				t.Errorf("message = %q", fs[0].Message)
			}
		}},
		{name: "directory where status.json should be", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Mkdir(StatusPath)
		}, want: []string{"error cloud-init-status-unreadable"}, check: func(t *testing.T, fs []runner.Finding, dir string) {
			if fs[0].Message != "/run/cloud-init/status.json: is a directory" {
				t.Errorf("message = %q", fs[0].Message)
			}
		}},
		{name: "broken instance-data does not hide the status", root: func(t *testing.T) *cloudinittest.Root {
			return ciBooted(t, 5*time.Minute).Write(StatusPath, ciDone).Write(ResultPath, ciResultOK).
				Write(InstanceDataPath, `{"v1": {"local_hostname": ["x"]}}`)
		}, want: []string{"error cloud-init-status-unreadable", "pass cloud-init-done"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.root(t)
			env := ciEnv(r, !tc.offline, tc.required, tc.sd)
			fs := Run(context.Background(), env)
			ciConventions(t, fs)
			var got []string
			for _, f := range fs {
				got = append(got, string(f.Status)+" "+f.Code)
			}
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("findings:\n%s\nwant:\n%s\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), ciDump(fs))
			}
			if tc.check != nil {
				tc.check(t, fs, r.Dir)
			}
		})
	}
}

func TestCloudInitUnreadableAsUser(t *testing.T) {
	testenv.RequireUnprivileged(t, "root reads mode-000 files anyway; the directory-as-file case covers read errors")
	r := ciBooted(t, 5*time.Minute).Write(StatusPath, ciDone)
	if err := os.Chmod(r.Dir+StatusPath, 0); err != nil {
		t.Fatal(err)
	}
	fs := Run(context.Background(), ciEnv(r, true, false, nil))
	f := ciFind(t, fs, "cloud-init-status-unreadable")
	if f.Message != r.Dir+"/run/cloud-init/status.json: permission denied" || !strings.Contains(f.Remediation, "root") {
		t.Errorf("finding = %+v", f)
	}
}

func TestCloudInitInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := ciBooted(t, 5*time.Minute).Write(StatusPath, ciDone)
	fs := Run(ctx, ciEnv(r, true, false, nil))
	if len(fs) != 1 || fs[0].Status != runner.Error || fs[0].Code != "cloud-init-interrupted" {
		t.Fatalf("findings = %s", ciDump(fs))
	}
}

func ciEnv(r *cloudinittest.Root, live, required bool, sd *cloudinittest.Systemd) *runner.Env {
	if sd == nil {
		sd = &cloudinittest.Systemd{States: ciHealthyUnits()}
	}
	cfg := config.Default()
	settings.Set(cfg, Settings{Required: required})
	return &runner.Env{Root: r.Open(), Live: live, Systemd: sd, Config: cfg, Now: func() time.Time { return ciNow }}
}

// ciConventions holds findings to the framework's rules.
func ciConventions(t *testing.T, fs []runner.Finding) {
	t.Helper()
	if len(fs) == 0 {
		t.Fatal("no findings")
	}
	checktest.Conventions(t, fs, Codes)
	for _, f := range fs {
		needFix := f.Status != runner.Pass && f.Status != runner.Skip
		if needFix != (f.Remediation != "") {
			t.Errorf("%s (%s): remediation %q", f.Code, f.Status, f.Remediation)
		}
		if f.Code == "cloud-init-interrupted" {
			continue
		}
		for _, k := range []string{"datasource", "stage", "extended_status", "boot_status_code", "units"} {
			if f.Code != "cloud-init-not-installed" && f.Detail[k] == "" {
				t.Errorf("%s: detail lacks %s", f.Code, k)
			}
		}
		for k := range f.Detail {
			if !ciSnake(k) {
				t.Errorf("%s: detail key %q is not snake_case", f.Code, k)
			}
		}
	}
}

func ciSnake(s string) bool {
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' && i > 0) {
			return false
		}
	}
	return s != ""
}

func ciFind(t *testing.T, fs []runner.Finding, code string) runner.Finding {
	t.Helper()
	for _, f := range fs {
		if f.Code == code {
			return f
		}
	}
	t.Fatalf("no %s finding in\n%s", code, ciDump(fs))
	return runner.Finding{}
}

func ciDump(fs []runner.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s %s: %s\n", f.Status, f.Code, f.Message)
	}
	return b.String()
}

// TestCloudInitAgreesWithCloudInit runs the check on every real capture
// and synthetic case (see internal/checks/cloud-init/testdata) and requires its
// verdict to match cloud-init's own: error → fail, degraded → warn, done →
// pass, disabled → skip, running → warn (pass when started from runcmd in
// the final stage), not started → warn or fail by uptime. A case where the
// check deliberately differs says so in its guestcheck-verdict file.
func TestCloudInitAgreesWithCloudInit(t *testing.T) {
	for _, src := range []string{"real", "synthetic"} {
		t.Run(src, func(t *testing.T) {
			caps, err := cloudinittest.LoadCaptures("testdata/" + src)
			if err != nil || len(caps) == 0 {
				t.Fatalf("no %s fixtures in internal/checks/cloud-init/testdata/%s (%v)", src, src, err)
			}
			for _, c := range caps {
				all := []*cloudinittest.Capture{c}
				if c.Runcmd != nil {
					all = append(all, c.Runcmd)
				}
				for _, c := range all {
					t.Run(c.Name, func(t *testing.T) { ciAgree(t, c, true) })
					if len(c.Parents) > 0 {
						// The same files seen from a console: still running.
						t.Run(c.Name+"/console", func(t *testing.T) { ciAgree(t, c, false) })
					}
				}
			}
		})
	}
}

func ciAgree(t *testing.T, c *cloudinittest.Capture, inside bool) {
	r := c.Root(t)
	if !inside {
		r.Remove("/proc/self")
	}
	sd := &cloudinittest.Systemd{States: c.Units}
	if c.Units == nil {
		sd.Err = fmt.Errorf("no bus: %w", systemd.ErrNotRunning)
	}
	env := &runner.Env{Root: r.Open(), Live: true, Systemd: sd, Config: config.Default(), Now: func() time.Time { return c.Now }}
	fs := Run(context.Background(), env)
	ciConventions(t, fs)

	w := c.Want
	ext := w.Status // cloud-init before 23.4 has no extended status
	if w.ExtendedStatus != nil {
		ext = *w.ExtendedStatus
	}
	var want runner.Status
	switch {
	case c.Verdict != "":
		want = runner.Status(c.Verdict)
		t.Logf("deliberate difference from cloud-init (%s): %s", ext, c.VerdictWhy)
	case strings.HasPrefix(ext, "error"):
		want = runner.Fail
	case strings.HasPrefix(ext, "degraded"):
		want = runner.Warn
	case ext == "done":
		want = runner.Pass
	case ext == "disabled":
		want = runner.Skip
	case ext == "running" && inside && len(c.Parents) > 0:
		want = runner.Pass
	case ext == "running":
		want = runner.Warn
	case ext == "not started" || ext == "not run":
		want = runner.Warn
		if up := ciUptime(t, c.UptimeRaw); up > notStartedGrace {
			want = runner.Fail
		}
	default:
		t.Fatalf("cloud-init status %q not mapped", ext)
	}
	if got := ciVerdict(fs); got != want {
		t.Errorf("check says %s, cloud-init says %q (rc %d), want %s\n%s", got, ext, w.RC, want, ciDump(fs))
	}
	for _, f := range fs {
		if w.ExtendedStatus != nil && f.Detail["extended_status"] != ext {
			t.Errorf("%s: detail extended_status %q, cloud-init says %q", f.Code, f.Detail["extended_status"], ext)
		}
		if f.Detail["cloud_init_exit_code"] != fmt.Sprint(w.RC) {
			t.Errorf("%s: detail cloud_init_exit_code %q, cloud-init exited %d", f.Code, f.Detail["cloud_init_exit_code"], w.RC)
		}
	}
	if len(c.Parents) > 0 && inside && strings.HasSuffix(ext, "running") {
		f := ciFind(t, fs, "cloud-init-running-in-final")
		if !strings.Contains(f.Detail["invoked_from"], "scripts/runcmd") {
			t.Errorf("invoked_from = %q", f.Detail["invoked_from"])
		}
	}
	// Every error cloud-init lists (except its systemd summary, which the
	// unit findings stand for) has a module-error finding.
	for _, e := range w.Errors {
		if e == SystemdFailureMessage {
			continue
		}
		found := false
		for _, f := range fs {
			if f.Code != "cloud-init-module-error" || f.Detail["error"] != e {
				continue
			}
			found = true
			// str() of cloud-init's (module, exception) pair names the module.
			if strings.HasPrefix(e, "('") && f.Detail["module"] == "unknown" {
				t.Errorf("no module extracted from %q", e)
			}
		}
		if !found {
			t.Errorf("cloud-init error %q has no module-error finding\n%s", e, ciDump(fs))
		}
	}
}

// ciVerdict is the check's status as the runner summarises it.
func ciVerdict(fs []runner.Finding) runner.Status {
	sts := make([]runner.Status, len(fs))
	pass := false
	for i, f := range fs {
		sts[i] = f.Status
		pass = pass || f.Status == runner.Pass
	}
	if w := reportv1.Worst(sts...); w != runner.Skip || !pass {
		return w
	}
	return runner.Pass
}

func ciUptime(t *testing.T, raw string) time.Duration {
	t.Helper()
	var sec float64
	if _, err := fmt.Sscan(raw, &sec); err != nil {
		t.Fatalf("uptime %q: %v", raw, err)
	}
	return time.Duration(sec * float64(time.Second))
}

func TestCloudInitDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/checks/cloud-init.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range Codes {
		if !runner.IsKebab(code.ID) || !strings.Contains(string(doc), "| `"+code.ID+"` |") {
			t.Errorf("code %s is not in the codes table of docs/checks/cloud-init.md", code.ID)
		}
	}
	for _, k := range []string{"cloud_init.required", "--wait", "--exit-zero"} {
		if !strings.Contains(string(doc), k) {
			t.Errorf("docs do not mention %s", k)
		}
	}
}
