package timesync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

func tree(t *testing.T, files map[string]string) *fs.Root {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(s, "->") {
			if err := os.Symlink(strings.TrimPrefix(s, "->"), full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

var synced = Timex{State: 0, Status: StaNano | 0x1, Offset: -120000, MaxError: 48000, EstError: 900}

func TestJudgeClock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		tx   Timex
		err  error
		code runner.Code
		st   runner.Status
		msg  string
	}{
		{"synced", synced, nil, CodeSynced, runner.Pass, "estimated error 900µs, maximum error 48ms"},
		{"unsynced", Timex{State: 5, Status: StaUnsync, MaxError: 16000000, EstError: 16000000}, nil, CodeUnsynced, runner.Warn, "NTPSynchronized=no"},
		// chrony sets STA_UNSYNC to keep the kernel off the RTC: systemd
		// ignores the flag and so does the check.
		{"unsync flag only", Timex{State: 5, Status: StaUnsync, MaxError: 2000, EstError: 100}, nil, CodeSynced, runner.Pass, "synchronised"},
		{"offset in µs", Timex{Status: 0, Offset: 1500000, MaxError: 3000000, EstError: 1000}, nil, CodeClockOff, runner.Fail, "off by about 1.501s"},
		{"estimated error", Timex{Status: StaNano, MaxError: 9000000, EstError: 2500000}, nil, CodeClockOff, runner.Fail, "estimated error 2.5s"},
		{"unreadable", Timex{}, errors.New("operation not permitted"), CodeClockUnreadable, runner.Error, "cannot read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := JudgeClock(Facts{Live: true, Timex: tc.tx, TimexErr: tc.err, MaxOffset: time.Second})
			validate(t, out)
			want(t, out, tc.code, tc.st, tc.msg)
		})
	}
}

func live(name, state, file string) systemd.UnitState {
	return systemd.UnitState{Name: name, LoadState: "loaded", ActiveState: state, SubState: "x", UnitFileState: file}
}

func TestJudgeDaemons(t *testing.T) {
	t.Parallel()
	ts := func(u systemd.UnitState) Daemon {
		return Daemon{Name: "systemd-timesyncd", Units: []string{"systemd-timesyncd.service"}, Installed: true, Unit: u, Fallback: true}
	}
	chrony := Daemon{Name: "chrony", Units: []string{"chrony.service", "chronyd.service"}, Installed: true,
		Unit: live("chronyd.service", "active", "enabled"), Servers: []Server{{Kind: "pool", Host: "2.rhel.pool.ntp.org", At: "/etc/chrony.conf:3"}}}
	for _, tc := range []struct {
		name string
		ds   []Daemon
		err  error
		code runner.Code
		st   runner.Status
		msg  string
	}{
		{"timesyncd", []Daemon{ts(live("systemd-timesyncd.service", "active", "enabled"))}, nil, CodeDaemonActive, runner.Pass, "systemd-timesyncd.service runs"},
		{"chrony", []Daemon{chrony}, nil, CodeDaemonActive, runner.Pass, "chronyd.service runs"},
		{"masked", []Daemon{ts(systemd.UnitState{Name: "systemd-timesyncd.service", LoadState: "masked", ActiveState: "inactive", UnitFileState: "masked"})}, nil,
			CodeNoDaemon, runner.Fail, "systemd-timesyncd (systemd-timesyncd.service) is masked"},
		{"disabled", []Daemon{ts(live("systemd-timesyncd.service", "active", "disabled"))}, nil, CodeDaemonDisabled, runner.Warn, "will not start at the next boot"},
		{"two", []Daemon{ts(live("systemd-timesyncd.service", "active", "enabled")), chrony}, nil, CodeMultiple, runner.Warn, "systemd-timesyncd.service, chronyd.service"},
		{"no systemd", nil, systemd.ErrNotRunning, CodeNoSystemd, runner.Skip, "not checked"},
		{"bus error", nil, errors.New("denied"), CodeUnitsUnreadable, runner.Error, "cannot read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := Judge(Facts{Live: true, Timex: synced, MaxOffset: time.Second, Daemons: tc.ds, UnitsErr: tc.err})
			validate(t, out)
			want(t, out, tc.code, tc.st, tc.msg)
		})
	}
}

func TestJudgeServers(t *testing.T) {
	t.Parallel()
	d := Daemon{Name: "chrony", Files: []string{"/etc/chrony.conf"}}
	want(t, JudgeServers(Facts{}, []Daemon{d}), CodeNoServers, runner.Warn, "chrony has no time servers")
	d.Fallback = true
	want(t, JudgeServers(Facts{}, []Daemon{d}), CodeServersOK, runner.Pass, "compiled-in fallback")
	bad := Daemon{Name: "ntpd", Problems: []string{"/etc/ntp.conf:4: server without a host"}}
	want(t, JudgeServers(Facts{Daemons: []Daemon{bad}}, nil), CodeConfigInvalid, runner.Warn, "/etc/ntp.conf:4")
}

// debian is a Debian 12 image with timesyncd enabled and a drop-in, and
// chrony's configuration left from a removed package.
func debianImage(t *testing.T, extra map[string]string) *fs.Root {
	files := map[string]string{
		"/lib/systemd/systemd-timesyncd":                                     "ELF",
		"/etc/systemd/system/sysinit.target.wants/systemd-timesyncd.service": "->/lib/systemd/system/systemd-timesyncd.service",
		"/etc/systemd/timesyncd.conf":                                        "[Time]\n#NTP=\nFallbackNTP=0.debian.pool.ntp.org 1.debian.pool.ntp.org\n",
		"/usr/lib/systemd/timesyncd.conf.d/10-vendor.conf":                   "[Time]\nNTP=vendor.example.org\n",
		"/etc/systemd/timesyncd.conf.d/10-vendor.conf":                       "[Time]\nNTP=time.example.org\n",
		"/run/systemd/timesyncd.conf.d/20-reset.conf":                        "[Time]\nNTP=\nNTP=ntp1.example.org ntp2.example.org\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	return tree(t, files)
}

func TestImageTimesyncd(t *testing.T) {
	t.Parallel()
	r := debianImage(t, nil)
	out := Run(context.Background(), &runner.Env{Root: r, Config: config.Default()})
	validate(t, out)
	want(t, out, CodeNotLive, runner.Skip)
	want(t, out, CodeDaemonActive, runner.Pass, "systemd-timesyncd.service is enabled")
	s := want(t, out, CodeServersOK, runner.Pass, "2 time source(s): ntp1.example.org")
	// /etc's 10-vendor.conf hides /usr/lib's, and 20-reset.conf's empty
	// NTP= dropped time.example.org.
	if !strings.Contains(s.Detail["servers"], "NTP ntp2.example.org ("+r.Display("/run/systemd/timesyncd.conf.d/20-reset.conf")+":3)") || strings.Contains(s.Detail["servers"], "vendor") || strings.Contains(s.Detail["servers"], "time.example.org") {
		t.Errorf("servers = %q", s.Detail["servers"])
	}
}

func TestImageTimesyncdFallbackAndMasked(t *testing.T) {
	t.Parallel()
	r := tree(t, map[string]string{
		"/lib/systemd/systemd-timesyncd":                                     "ELF",
		"/etc/systemd/system/sysinit.target.wants/systemd-timesyncd.service": "->/lib/systemd/system/systemd-timesyncd.service",
		"/etc/systemd/timesyncd.conf":                                        "[Time]\n#NTP=\n",
	})
	out := Run(context.Background(), &runner.Env{Root: r, Config: config.Default()})
	want(t, out, CodeServersOK, runner.Pass, "compiled-in fallback")

	r = tree(t, map[string]string{
		"/lib/systemd/systemd-timesyncd":                                     "ELF",
		"/etc/systemd/system/sysinit.target.wants/systemd-timesyncd.service": "->/lib/systemd/system/systemd-timesyncd.service",
		"/etc/systemd/system/systemd-timesyncd.service":                      "->/dev/null",
		"/etc/systemd/timesyncd.conf":                                        "[Time]\nFallbackNTP=\n",
	})
	out = Run(context.Background(), &runner.Env{Root: r, Config: config.Default()})
	validate(t, out)
	want(t, out, CodeNoDaemon, runner.Fail, "no time daemon is enabled in the image", "is masked")
}

func TestImageChrony(t *testing.T) {
	t.Parallel()
	r := tree(t, map[string]string{
		"/usr/sbin/chronyd": "ELF",
		"/etc/systemd/system/multi-user.target.wants/chrony.service": "->/lib/systemd/system/chrony.service",
		"/etc/chrony/chrony.conf":                                    "confdir /etc/chrony/conf.d\nsourcedir /run/chrony-dhcp\nsourcedir /etc/chrony/sources.d\ninclude /etc/chrony/extra/*.conf\n",
		"/etc/chrony/conf.d/site.conf":                               "server 192.0.2.123 iburst\nserver\n",
		"/etc/chrony/sources.d/local.sources":                        "pool pool.example.org\n# driftfile is not allowed here, but ignored\n",
		"/run/chrony-dhcp/enp1s0.sources":                            "server 198.51.100.7 iburst\n",
		"/etc/chrony/extra/ptp.conf":                                 "refclock PHC /dev/ptp0 poll 2\n",
		"/etc/chrony/sources.d/not-a-source.txt":                     "server 203.0.113.9\n",
	})
	out := Run(context.Background(), &runner.Env{Root: r, Config: config.Default()})
	validate(t, out)
	want(t, out, CodeDaemonActive, runner.Pass, "chrony.service is enabled")
	s := want(t, out, CodeServersOK, runner.Pass, "4 time source(s)")
	var hosts []string
	for _, l := range strings.Split(s.Detail["servers"], "\n") {
		hosts = append(hosts, strings.Fields(l)[1])
	}
	if diff := cmp.Diff([]string{"192.0.2.123", "198.51.100.7", "pool.example.org", "PHC"}, hosts); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	want(t, out, CodeConfigInvalid, runner.Warn, "site.conf:2: server without a host")
}

func TestImageNTPD(t *testing.T) {
	t.Parallel()
	r := tree(t, map[string]string{
		"/usr/sbin/ntpd": "ELF",
		"/etc/systemd/system/multi-user.target.wants/ntpsec.service": "->/lib/systemd/system/ntpsec.service",
		"/etc/ntpsec/ntp.conf":  "includefile /etc/ntpsec/site.conf\n",
		"/etc/ntpsec/site.conf": "# nothing\n",
	})
	out := Run(context.Background(), &runner.Env{Root: r, Config: config.Default()})
	validate(t, out)
	want(t, out, CodeDaemonActive, runner.Pass, "ntpsec.service is enabled")
	want(t, out, CodeNoServers, runner.Warn, "ntpd has no time servers")
}

type fakeUnits map[string]systemd.UnitState

func (f fakeUnits) Units(ctx context.Context, names ...string) ([]systemd.UnitState, error) {
	var out []systemd.UnitState
	for _, n := range names {
		u, ok := f[n]
		if !ok {
			u = systemd.UnitState{Name: n, LoadState: "not-found"}
		}
		out = append(out, u)
	}
	return out, nil
}

// TestLiveRealClock reads this kernel's clock through the production path
// and judges it with a fake systemd: only that the call works and its
// verdict is one of the clock codes is asserted, since the host's
// synchronisation is not the test's to choose.
func TestLiveRealClock(t *testing.T) {
	t.Parallel()
	testenv.RequireRoot(t, "reads the host kernel's clock state, which belongs to the privileged tier")
	tx, err := ReadTimex()
	if err != nil {
		t.Fatalf("adjtimex(modes=0): %v", err)
	}
	if tx.MaxError < 0 || tx.EstError < 0 || tx.State < 0 || tx.State > 5 {
		t.Errorf("implausible timex %+v", tx)
	}
	// Reading must not change anything: a second read agrees on the flags.
	tx2, err := ReadTimex()
	if err != nil || tx2.Status != tx.Status {
		t.Errorf("second read %+v, %v differs from %+v", tx2, err, tx)
	}
	r := debianImage(t, nil)
	env := &runner.Env{Root: r, Live: true, Config: config.Default(),
		Systemd: fakeUnits{"systemd-timesyncd.service": live("systemd-timesyncd.service", "active", "enabled")}}
	out := Run(context.Background(), env)
	validate(t, out)
	n := 0
	for _, f := range out {
		switch f.Code {
		case CodeSynced.ID, CodeUnsynced.ID, CodeClockOff.ID:
			n++
			t.Logf("%s %s: %s %v", f.Status, f.Code, f.Message, f.Detail)
		case CodeClockUnreadable.ID:
			t.Errorf("clock unreadable: %s", f.Message)
		}
	}
	if n != 1 {
		t.Errorf("%d clock verdicts, want 1", n)
	}
	want(t, out, CodeDaemonActive, runner.Pass, "systemd-timesyncd.service runs")
}

// validate and want are the assertions every area's tests share.
func validate(t *testing.T, fs []runner.Finding) {
	t.Helper()
	checktest.Conventions(t, fs, Codes)
}

func want(t *testing.T, fs []runner.Finding, code runner.Code, st runner.Status, subs ...string) runner.Finding {
	t.Helper()
	return checktest.Want(t, fs, code.ID, st, subs...)
}

// TestFixesOnEveryPath: the fixes of the daemon and server findings, on
// the running system and in an image, are their codes' own, filled in.
func TestFixesOnEveryPath(t *testing.T) {
	t.Parallel()
	for _, isLive := range []bool{true, false} {
		for _, name := range []string{"chrony", "systemd-timesyncd", "ntpd"} {
			d := Daemon{Name: name, Units: []string{name + ".service"}, Installed: true, Enablement: "enabled",
				Unit: live(name+".service", "active", "enabled")}
			out := JudgeServers(Facts{Live: isLive}, []Daemon{d})
			validate(t, out)
			f := want(t, out, CodeNoServers, runner.Warn)
			if strings.ContainsAny(f.Remediation, "{}") || strings.Contains(f.Remediation, "UNIT") {
				t.Errorf("%s, live %v: fix not filled in: %q", name, isLive, f.Remediation)
			}
		}
		masked := Daemon{Name: "chrony", Units: []string{"chrony.service"}, Installed: true, Enablement: "masked",
			Unit: systemd.UnitState{Name: "chrony.service", LoadState: "masked", UnitFileState: "masked"}}
		for _, ds := range [][]Daemon{nil, {masked}} {
			out := Judge(Facts{Live: isLive, Timex: synced, MaxOffset: time.Second, Daemons: ds})
			validate(t, out)
			f := want(t, out, CodeNoDaemon, runner.Fail)
			if len(ds) > 0 && !strings.Contains(f.Remediation, "chrony.service") {
				t.Errorf("live %v: the fix %q does not name the masked unit", isLive, f.Remediation)
			}
		}
		two := []Daemon{
			{Name: "chrony", Units: []string{"chrony.service"}, Installed: true, Enablement: "enabled", Unit: live("chrony.service", "active", "enabled")},
			{Name: "ntpd", Units: []string{"ntp.service"}, Installed: true, Enablement: "enabled", Unit: live("ntp.service", "active", "enabled")},
		}
		out := Judge(Facts{Live: isLive, Timex: synced, MaxOffset: time.Second, Daemons: two})
		validate(t, out)
		if f := want(t, out, CodeMultiple, runner.Warn); !strings.Contains(f.Remediation, "Keep chrony.service") || !strings.Contains(f.Remediation, "ntp.service") {
			t.Errorf("live %v: multiple fix %q", isLive, f.Remediation)
		}
	}
}

// TestEveryFixIsGiven: every wording a code declares is one some path
// gives, so that the reference lists no fix a report never carries.
func TestEveryFixIsGiven(t *testing.T) {
	t.Parallel()
	var all []runner.Finding
	for _, tx := range []Timex{{Status: StaUnsync, MaxError: 16000000}, {Offset: 1500000, MaxError: 3000000}} {
		all = append(all, JudgeClock(Facts{Live: true, Timex: tx, MaxOffset: time.Second})...)
	}
	all = append(all, JudgeClock(Facts{Live: true, TimexErr: errors.New("denied")})...)
	_, f := JudgeDaemons(Facts{Live: true, UnitsErr: errors.New("denied")})
	all = append(all, f...)
	disabled := Daemon{Name: "chrony", Units: []string{"chrony.service"}, Installed: true, Unit: live("chrony.service", "active", "disabled")}
	masked := Daemon{Name: "chrony", Units: []string{"chrony.service"}, Installed: true, Enablement: "masked",
		Unit: systemd.UnitState{Name: "chrony.service", LoadState: "masked", UnitFileState: "masked"}}
	bad := Daemon{Name: "ntpd", Problems: []string{"/etc/ntp.conf:4: server without a host"}}
	for _, isLive := range []bool{true, false} {
		for _, ds := range [][]Daemon{nil, {masked}, {disabled, bad}} {
			_, f := JudgeDaemons(Facts{Live: isLive, Daemons: ds})
			all = append(all, f...)
			all = append(all, JudgeServers(Facts{Live: isLive, Daemons: ds}, nil)...)
		}
		two := []Daemon{
			{Name: "chrony", Units: []string{"chrony.service"}, Installed: true, Enablement: "enabled", Unit: live("chrony.service", "active", "enabled")},
			{Name: "ntpd", Units: []string{"ntp.service"}, Installed: true, Enablement: "enabled", Unit: live("ntp.service", "active", "enabled")},
		}
		_, f := JudgeDaemons(Facts{Live: isLive, Daemons: two})
		all = append(all, f...)
		for _, name := range []string{"chrony", "systemd-timesyncd", "ntpd"} {
			all = append(all, JudgeServers(Facts{Live: isLive}, []Daemon{{Name: name, Units: []string{name + ".service"}}})...)
		}
	}
	validate(t, all)
	for _, c := range Codes {
		for _, tmpl := range c.Fixes() {
			one := runner.Code{ID: c.ID, Fix: tmpl}
			if !slices.ContainsFunc(all, func(f runner.Finding) bool { return f.Code == c.ID && one.Matches(f.Remediation) }) {
				t.Errorf("%s: no finding gives the fix %q", c.ID, tmpl)
			}
		}
	}
}
