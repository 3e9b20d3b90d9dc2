package qemuguestagent

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
)

type fakeSystemd struct {
	u   systemd.UnitState
	err error
}

func (f fakeSystemd) Units(ctx context.Context, names ...string) ([]systemd.UnitState, error) {
	if f.err != nil {
		return nil, f.err
	}
	return []systemd.UnitState{f.u}, nil
}

func active() fakeSystemd {
	return fakeSystemd{u: systemd.UnitState{Name: UnitName, LoadState: "loaded", ActiveState: "active", SubState: "running", UnitFileState: "static", MainPID: 1}}
}

func runRoot(t *testing.T, name string, live bool, sd systemd.Manager) []runner.Finding {
	t.Helper()
	root, err := fs.Open("testdata/roots/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	env := &runner.Env{Root: root, Live: live, Systemd: sd,
		Now: func() time.Time { return time.Unix(1767225600, 0).Add(time.Hour) }}
	out := Run(context.Background(), env)
	checktest.Conventions(t, out, Codes)
	return out
}

func index(fs []runner.Finding) map[string]runner.Finding {
	m := map[string]runner.Finding{}
	for _, f := range fs {
		if _, ok := m[f.Code]; !ok {
			m[f.Code] = f
		}
	}
	return m
}

func TestFixtureRoots(t *testing.T) {
	cases := []struct {
		root   string
		sd     systemd.Manager
		want   map[string]runner.Status // code -> status that must be present
		absent []string
		detail map[string]string // code/key -> substring
	}{
		{root: "debian", sd: active(),
			want: map[string]runner.Status{CodeChannelOK.ID: runner.Pass, CodeInstalled.ID: runner.Pass, CodeUnitActive.ID: runner.Pass,
				CodeProcessOK.ID: runner.Pass, CodeFilterOK.ID: runner.Pass, CodeNotFrozen.ID: runner.Pass, CodeHookDisabled.ID: runner.Warn,
				CodeConfigIgnored.ID: runner.Warn, CodeSELinuxOK.ID: runner.Pass},
			absent: []string{CodeExecBlocked.ID, CodeFreezeBlocked.ID, CodeKubeVirtBlocked.ID, CodeUnitDisabled.ID},
			detail: map[string]string{CodeInstalled.ID + "/version": "7.2.22", CodeConfigIgnored.ID + "/setting": "DAEMON_ARGS",
				CodeFilterOK.ID + "/effective_disabled": "guest-get-devices", CodeFilterOK.ID + "/settings_from": "process 812"}},
		{root: "rhel8", sd: fakeSystemd{err: fmt.Errorf("%w: test", systemd.ErrNotRunning)},
			want: map[string]runner.Status{CodeNoSystemd.ID: runner.Skip, CodeProcessMissing.ID: runner.Fail, CodeExecBlocked.ID: runner.Pass,
				CodeFilterOK.ID: runner.Pass, CodeHookScriptIgnored.ID: runner.Warn, CodeHookOK.ID: runner.Pass, CodeSELinuxDenied.ID: runner.Fail},
			absent: []string{CodeFilterUnknown.ID, CodeConfigIgnored.ID},
			detail: map[string]string{CodeExecBlocked.ID + "/origin_block_rpcs": "command line", CodeExecBlocked.ID + "/settings_from": "unit /usr/lib/systemd/system/qemu-guest-agent.service",
				CodeHookOK.ID + "/hook": "/etc/qemu-ga/fsfreeze-hook", CodeSELinuxDenied.ID + "/denied": "/data {open}",
				CodeHookScriptIgnored.ID + "/skipped": "mysql-flush.sh (not executable)"}},
		{root: "rhel9.0", sd: active(),
			want:   map[string]runner.Status{CodeFilterUnknown.ID: runner.Warn, CodeExecBlocked.ID: runner.Pass, CodeFilterOK.ID: runner.Pass},
			detail: map[string]string{CodeFilterUnknown.ID + "/unknown_names": "guest-file-*"}},
		{root: "rhel9.4", sd: active(),
			want: map[string]runner.Status{CodeExecBlocked.ID: runner.Pass, CodeFilterOK.ID: runner.Pass, CodeFrozenMarker.ID: runner.Fail,
				CodeConfigIgnored.ID: runner.Warn},
			absent: []string{CodeFilterUnknown.ID},
			detail: map[string]string{CodeExecBlocked.ID + "/effective_disabled": "guest-file-open", CodeConfigIgnored.ID + "/setting": "BLOCK_RPCS",
				CodeFrozenMarker.ID + "/marker_age": "1h0m0s"}},
		{root: "suse", sd: fakeSystemd{u: systemd.UnitState{Name: UnitName, LoadState: "loaded", ActiveState: "failed", SubState: "failed", UnitFileState: "disabled", NRestarts: 5}},
			want: map[string]runner.Status{CodeFreezeBlocked.ID: runner.Fail, CodeKubeVirtBlocked.ID: runner.Fail, CodeExecBlocked.ID: runner.Pass,
				CodeUnitInactive.ID: runner.Fail, CodeUnitDisabled.ID: runner.Warn, CodeRestartLoop.ID: runner.Warn, CodeProcessMissing.ID: runner.Fail},
			absent: []string{CodeFilterOK.ID},
			detail: map[string]string{CodeFreezeBlocked.ID + "/origin_block_rpcs": "/etc/qemu/qemu-ga.conf (block-rpcs) + command line",
				CodeKubeVirtBlocked.ID + "/blocked_rpcs": "guest-get-users"}},
	}
	// Git does not keep mtimes: give the frozen marker its age here.
	marker := "testdata/roots/rhel9.4/var/run/" + FrozenMarker
	if err := os.Chtimes(marker, time.Unix(1767225600, 0), time.Unix(1767225600, 0)); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.root, func(t *testing.T) {
			got := index(runRoot(t, c.root, true, c.sd))
			for code, st := range c.want {
				if f, ok := got[code]; !ok || f.Status != st {
					t.Errorf("want %s %s, got %+v", code, st, f)
				}
			}
			for _, code := range c.absent {
				if f, ok := got[code]; ok {
					t.Errorf("unexpected %s: %+v", code, f)
				}
			}
			for k, sub := range c.detail {
				code, key, _ := strings.Cut(k, "/")
				if !strings.Contains(got[code].Detail[key], sub) {
					t.Errorf("%s detail %s = %q, want it to contain %q", code, key, got[code].Detail[key], sub)
				}
			}
			if t.Failed() {
				for _, f := range got {
					t.Logf("%s %s: %s %v", f.Status, f.Code, f.Message, f.Detail)
				}
			}
		})
	}
}

// With a probe: section in the config, guest-exec blocked is a failure:
// every exec probe would fail. Without one it stays informational.
func TestExecBlockedFailsWhenProbesDeclared(t *testing.T) {
	for _, tc := range []struct {
		root, cfg string
		want      runner.Status
	}{
		{"rhel9.4", "probe: {}\n", runner.Fail},
		{"rhel9.4", "probe:\n", runner.Fail},
		{"rhel9.4", "timeout: 1m\n", runner.Pass},
		{"rhel8", "probe:\n  checks: [fstab]\n", runner.Fail},
		{"debian", "probe: {}\n", ""}, // guest-exec allowed: no finding
	} {
		cfg, err := config.Parse("g.yaml", []byte(tc.cfg))
		if err != nil {
			t.Fatal(err)
		}
		root, err := fs.Open("testdata/roots/" + tc.root)
		if err != nil {
			t.Fatal(err)
		}
		env := &runner.Env{Root: root, Live: true, Systemd: active(), Config: cfg,
			Now: func() time.Time { return time.Unix(1767225600, 0).Add(time.Hour) }}
		got := index(Run(context.Background(), env))
		root.Close()
		f, ok := got[CodeExecBlocked.ID]
		switch {
		case tc.want == "" && ok:
			t.Errorf("%s %q: unexpected %+v", tc.root, tc.cfg, f)
		case tc.want != "" && (!ok || f.Status != tc.want):
			t.Errorf("%s %q: %s = %+v, want %s", tc.root, tc.cfg, CodeExecBlocked.ID, f, tc.want)
		case tc.want == runner.Fail && (f.Remediation == "" || f.Detail["probe_declared_in"] != "g.yaml:1" || !strings.Contains(f.Message, "guest-exec")):
			t.Errorf("%s %q: fail without remediation or evidence: %+v", tc.root, tc.cfg, f)
		}
	}
}

func TestNotLiveJudgesFilesOnly(t *testing.T) {
	got := index(runRoot(t, "rhel8", false, nil))
	if got[CodeNotLive.ID].Status != runner.Skip {
		t.Errorf("want %s skip", CodeNotLive.ID)
	}
	for _, c := range []string{CodeChannelOK.ID, CodeProcessMissing.ID, CodeProcessOK.ID, CodeUnitActive.ID} {
		if _, ok := got[c]; ok {
			t.Errorf("not live but got %s", c)
		}
	}
	if got[CodeExecBlocked.ID].Status != runner.Pass || got[CodeHookScriptIgnored.ID].Status != runner.Warn {
		t.Errorf("file findings missing offline: %v", got)
	}
}

// TestConfdirFromOSRelease: an agent binary that names no configuration
// directory reads /etc/qemu-kvm on a release like RHEL (ID_LIKE, or
// /usr/lib/os-release when /etc has none) and /etc/qemu elsewhere; the
// word "rhel" in a comment or URL no longer counts.
func TestConfdirFromOSRelease(t *testing.T) {
	for _, tc := range []struct{ path, release, want string }{
		{"/etc/os-release", "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n", "/etc/qemu-kvm"},
		{"/usr/lib/os-release", "ID=fedora\n", "/etc/qemu-kvm"},
		{"/etc/os-release", "ID=debian\n# not rhel\nHOME_URL=\"https://example.org/rhel\"\n", "/etc/qemu"},
		{"", "", "/etc/qemu"},
	} {
		dir := t.TempDir()
		files := map[string]string{"/usr/bin/qemu-ga": "\x7fELF no directory named here"}
		if tc.path != "" {
			files[tc.path] = tc.release
		}
		for p, c := range files {
			if err := os.MkdirAll(dir+p[:strings.LastIndex(p, "/")], 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir+p, []byte(c), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		root, err := fs.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		env := &runner.Env{Root: root, Now: time.Now}
		got := ""
		for _, f := range Run(context.Background(), env) {
			if f.Code == CodeInstalled.ID {
				got = f.Detail["confdir"]
			}
		}
		root.Close()
		if got != tc.want {
			t.Errorf("%s %q: confdir %q, want %q", tc.path, tc.release, got, tc.want)
		}
	}
}
