package guestagent

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
	for _, f := range out {
		if !runner.IsKebab(f.Code) || !containsStr(Codes, f.Code) {
			t.Errorf("undeclared code %q", f.Code)
		}
		if f.Status != runner.Pass && f.Status != runner.Skip && f.Remediation == "" {
			t.Errorf("%s: %s without remediation", f.Code, f.Status)
		}
		if strings.HasSuffix(f.Message, ".") || strings.Contains(f.Message, "\n") {
			t.Errorf("%s: message %q is not one line without a trailing period", f.Code, f.Message)
		}
		for k := range f.Detail {
			if strings.ToLower(k) != k || strings.ContainsAny(k, "- ") {
				t.Errorf("%s: detail key %q is not snake_case", f.Code, k)
			}
		}
	}
	return out
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
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
			want: map[string]runner.Status{CodeChannelOK: runner.Pass, CodeInstalled: runner.Pass, CodeUnitActive: runner.Pass,
				CodeProcessOK: runner.Pass, CodeFilterOK: runner.Pass, CodeNotFrozen: runner.Pass, CodeHookDisabled: runner.Warn,
				CodeConfigIgnored: runner.Warn, CodeSELinuxOK: runner.Pass},
			absent: []string{CodeExecBlocked, CodeFreezeBlocked, CodeKubeVirtBlocked, CodeUnitDisabled},
			detail: map[string]string{CodeInstalled + "/version": "7.2.22", CodeConfigIgnored + "/setting": "DAEMON_ARGS",
				CodeFilterOK + "/effective_disabled": "guest-get-devices", CodeFilterOK + "/settings_from": "process 812"}},
		{root: "rhel8", sd: fakeSystemd{err: fmt.Errorf("%w: test", systemd.ErrNotRunning)},
			want: map[string]runner.Status{CodeNoSystemd: runner.Skip, CodeProcessMissing: runner.Fail, CodeExecBlocked: runner.Pass,
				CodeFilterOK: runner.Pass, CodeHookScriptIgnored: runner.Warn, CodeHookOK: runner.Pass, CodeSELinuxDenied: runner.Fail},
			absent: []string{CodeFilterUnknown, CodeConfigIgnored},
			detail: map[string]string{CodeExecBlocked + "/origin_block_rpcs": "command line", CodeExecBlocked + "/settings_from": "unit /usr/lib/systemd/system/qemu-guest-agent.service",
				CodeHookOK + "/hook": "/etc/qemu-ga/fsfreeze-hook", CodeSELinuxDenied + "/denied": "/data {open}",
				CodeHookScriptIgnored + "/skipped": "mysql-flush.sh (not executable)"}},
		{root: "rhel9.0", sd: active(),
			want:   map[string]runner.Status{CodeFilterUnknown: runner.Warn, CodeExecBlocked: runner.Pass, CodeFilterOK: runner.Pass},
			detail: map[string]string{CodeFilterUnknown + "/unknown_names": "guest-file-*"}},
		{root: "rhel9.4", sd: active(),
			want: map[string]runner.Status{CodeExecBlocked: runner.Pass, CodeFilterOK: runner.Pass, CodeFrozenMarker: runner.Fail,
				CodeConfigIgnored: runner.Warn},
			absent: []string{CodeFilterUnknown},
			detail: map[string]string{CodeExecBlocked + "/effective_disabled": "guest-file-open", CodeConfigIgnored + "/setting": "BLOCK_RPCS",
				CodeFrozenMarker + "/marker_age": "1h0m0s"}},
		{root: "suse", sd: fakeSystemd{u: systemd.UnitState{Name: UnitName, LoadState: "loaded", ActiveState: "failed", SubState: "failed", UnitFileState: "disabled", NRestarts: 5}},
			want: map[string]runner.Status{CodeFreezeBlocked: runner.Fail, CodeKubeVirtBlocked: runner.Fail, CodeExecBlocked: runner.Pass,
				CodeUnitInactive: runner.Fail, CodeUnitDisabled: runner.Warn, CodeRestartLoop: runner.Warn, CodeProcessMissing: runner.Fail},
			absent: []string{CodeFilterOK},
			detail: map[string]string{CodeFreezeBlocked + "/origin_block_rpcs": "/etc/qemu/qemu-ga.conf (block-rpcs) + command line",
				CodeKubeVirtBlocked + "/blocked_rpcs": "guest-get-users"}},
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
		f, ok := got[CodeExecBlocked]
		switch {
		case tc.want == "" && ok:
			t.Errorf("%s %q: unexpected %+v", tc.root, tc.cfg, f)
		case tc.want != "" && (!ok || f.Status != tc.want):
			t.Errorf("%s %q: %s = %+v, want %s", tc.root, tc.cfg, CodeExecBlocked, f, tc.want)
		case tc.want == runner.Fail && (f.Remediation == "" || f.Detail["probe_declared_in"] != "g.yaml:1" || !strings.Contains(f.Message, "guest-exec")):
			t.Errorf("%s %q: fail without remediation or evidence: %+v", tc.root, tc.cfg, f)
		}
	}
}

func TestNotLiveJudgesFilesOnly(t *testing.T) {
	got := index(runRoot(t, "rhel8", false, nil))
	if got[CodeNotLive].Status != runner.Skip {
		t.Errorf("want %s skip", CodeNotLive)
	}
	for _, c := range []string{CodeChannelOK, CodeProcessMissing, CodeProcessOK, CodeUnitActive} {
		if _, ok := got[c]; ok {
			t.Errorf("not live but got %s", c)
		}
	}
	if got[CodeExecBlocked].Status != runner.Pass || got[CodeHookScriptIgnored].Status != runner.Warn {
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
			if f.Code == CodeInstalled {
				got = f.Detail["confdir"]
			}
		}
		root.Close()
		if got != tc.want {
			t.Errorf("%s %q: confdir %q, want %q", tc.path, tc.release, got, tc.want)
		}
	}
}
