package ssh

import (
	"context"
	"errors"
	iofs "io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity"

	"github.com/google/go-cmp/cmp"

	"github.com/guestcheck/guestcheck/internal/fact/passwords"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/parse/sshdconfig"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// imageRoot is a Debian-like guest whose drop-in turns password login on,
// with one good host key and one of each defect.
func imageRoot(t *testing.T, cloudConfig string) string {
	t.Helper()
	files := map[string]string{
		"/usr/sbin/sshd":  "ELF",
		"/etc/os-release": "ID=debian\nVERSION_ID=\"12\"\n",
		"/etc/group":      "root:x:0:\nssh_keys:x:101:\n",
		"/etc/ssh/sshd_config": "Include /etc/ssh/sshd_config.d/*.conf\nKbdInteractiveAuthentication no\nPasswordAuthentication no\n" +
			"HostKey /etc/ssh/ssh_host_ed25519_key\nHostKey /etc/ssh/ssh_host_bad_key\nHostKey /etc/ssh/ssh_host_open_key\n" +
			"HostKey /etc/ssh/ssh_host_mismatch_key\nHostKey /etc/ssh/ssh_host_missing_key\n" +
			"Match User backup\n  PermitRootLogin yes\n",
		"/etc/ssh/sshd_config.d/50-cloud-init.conf":     "PasswordAuthentication yes\n",
		"/etc/ssh/ssh_host_bad_key":                     "not a key\n",
		"/var/lib/cloud/data/instance-id":               "iid-1\n",
		"/var/lib/cloud/instances/iid-1/sem/config_ssh": "",
	}
	if cloudConfig != "" {
		files[CloudConfigPath] = cloudConfig
	}
	dir := tree(t, files)
	if err := os.Chmod(filepath.Join(dir, "/etc/ssh/ssh_host_bad_key"), 0o600); err != nil {
		t.Fatal(err)
	}
	sem := filepath.Join(dir, "/var/lib/cloud/instances/iid-1/sem/config_ssh")
	if err := os.Chtimes(sem, t0, t0); err != nil {
		t.Fatal(err)
	}
	writeKey(t, dir, "/etc/ssh/ssh_host_ed25519_key", 0o600, t0.Add(time.Minute), "")
	writeKey(t, dir, "/etc/ssh/ssh_host_open_key", 0o644, t0.Add(-24*time.Hour), "")
	_, otherPub := keyPair(t)
	writeKey(t, dir, "/etc/ssh/ssh_host_mismatch_key", 0o600, t0.Add(time.Minute), otherPub)
	return dir
}

// gatherAsRoot gathers under an image root and, when the test does not
// run as root, gives the files root's ownership in the facts: ownership
// itself is judged in TestJudgeHostKeyOwner.
func gatherAsRoot(t *testing.T, dir string, cfg *config.Config) Facts {
	t.Helper()
	if cfg == nil {
		cfg = config.Default()
	}
	env := &runner.Env{Root: openRoot(t, dir), Config: cfg, IsRoot: true, Now: func() time.Time { return t0.Add(time.Hour) }}
	f := Gather(context.Background(), env)
	uid := uint32(os.Geteuid())
	for i := range f.HostKeys {
		if f.HostKeys[i].UID == uid {
			f.HostKeys[i].UID = 0
		}
		if f.HostKeys[i].PubUID == uid {
			f.HostKeys[i].PubUID = 0
		}
	}
	return f
}

func TestImageRoot(t *testing.T) {
	dir := imageRoot(t, "")
	f := gatherAsRoot(t, dir, nil)
	out := Judge(f)
	validate(t, out)
	want(t, out, CodeInstalled, runner.Pass, "/usr/sbin/sshd")
	want(t, out, CodeNotLive, runner.Skip, "needs the running system")
	want(t, out, CodeUnitDisabled, runner.Warn, "no ssh or sshd unit is enabled in the image")
	want(t, out, CodeHostKeyInvalid, runner.Fail, "ssh_host_bad_key")
	want(t, out, CodeHostKeyPerms, runner.Fail, "ssh_host_open_key has mode 0644")
	want(t, out, CodeHostKeyMismatch, runner.Fail, "ssh_host_mismatch_key.pub is not the public half")
	want(t, out, CodeHostKeyMissing, runner.Warn, "ssh_host_missing_key")
	ok := want(t, out, CodeHostKeyOK, runner.Pass, "1 host key(s)")
	if !strings.Contains(ok.Detail["keys"], "ssh_host_ed25519_key ssh-ed25519 SHA256:") {
		t.Errorf("keys detail = %q", ok.Detail["keys"])
	}
	kept := want(t, out, CodeHostKeyKept, runner.Fail, "predate instance iid-1")
	if !strings.Contains(kept.Detail["older_keys"], "ssh_host_open_key") || strings.Contains(kept.Detail["older_keys"], "ed25519") {
		t.Errorf("older_keys = %q", kept.Detail["older_keys"])
	}
	pa := want(t, out, CodeAuthBaseline, runner.Fail, "PasswordAuthentication is yes", "50-cloud-init.conf:1", "allows no")
	if pa.Detail["expected_from"] != "default baseline" {
		t.Errorf("expected_from = %q", pa.Detail["expected_from"])
	}
	want(t, out, CodeAuthConditional, runner.Warn, "Match User backup", "PermitRootLogin yes")
	if len(find(out, CodeConfigInvalid)) != 0 || len(find(out, CodeAuthOK)) != 0 {
		t.Errorf("unexpected findings:\n%s", dumpFindings(out))
	}
}

func TestPwAuthOverridesBaseline(t *testing.T) {
	// ssh_pwauth: true asks for password login: the drop-in is right.
	f := gatherAsRoot(t, imageRoot(t, "#cloud-config\nssh_pwauth: true\n"), nil)
	out := JudgeAuth(f)
	validate(t, out)
	if len(find(out, CodeAuthBaseline)) != 0 {
		t.Errorf("ssh_pwauth true: %s", dumpFindings(out))
	}
	// ssh_pwauth: no beats an ssh.baseline that allows passwords.
	cfg := config.Default()
	settings.Set(cfg, Settings{Baseline: Accepted{PasswordAuthentication: []string{"yes", "no"}}})
	f = gatherAsRoot(t, imageRoot(t, "#cloud-config\nssh_pwauth: no\n"), cfg)
	out = JudgeAuth(f)
	pa := want(t, out, CodeAuthBaseline, runner.Fail, "PasswordAuthentication is yes")
	if !strings.HasPrefix(pa.Detail["expected_from"], "cloud-init ssh_pwauth: no") {
		t.Errorf("expected_from = %q", pa.Detail["expected_from"])
	}
	// "unchanged" leaves the configured baseline in force.
	f = gatherAsRoot(t, imageRoot(t, "#cloud-config\nssh_pwauth: unchanged\n"), cfg)
	if out := JudgeAuth(f); len(find(out, CodeAuthBaseline)) != 0 {
		t.Errorf("unchanged with a baseline allowing yes: %s", dumpFindings(out))
	}
	// A broken cloud-config is an error, not a silent default.
	f = gatherAsRoot(t, imageRoot(t, "#cloud-config\nssh_pwauth: [\n"), nil)
	want(t, JudgeAuth(f), CodePwAuthUnread, runner.Error, "cannot read ssh_pwauth")
	// Not root: the file is 0600, so that part is skipped with the reason.
	f.PwAuth = PwAuth{Denied: true, Source: CloudConfigPath}
	want(t, JudgeAuth(f), CodePwAuthUnread, runner.Skip, "readable by root only")
}

// TestPasswordLoginByAccounts: PasswordAuthentication yes that nobody
// asked for (Debian's cloud.cfg leaves ssh_pwauth unset) is judged by the
// accounts /etc/shadow opens to it, named and never with their hashes.
func TestPasswordLoginByAccounts(t *testing.T) {
	const locked = "root:*:19000:0:99999:7:::\ndebian:!:19000:0:99999:7:::\nops:!$6$salt$LOCKEDHASH:19000:0:99999:7:::\nsvc:!!:19000:0:99999:7:::\n"
	for _, tc := range []struct {
		name, shadow string
		cfg          func(*config.Config)
		st           runner.Status
		msg          []string
		accounts     string
	}{
		{"every account locked", locked, nil, runner.Warn,
			[]string{"PasswordAuthentication is yes (", "50-cloud-init.conf:1), but no account has a usable password in ", "/etc/shadow: a password set later would be reachable over ssh; the baseline allows no"},
			"none with a usable password"},
		{"a usable hash", locked + "admin:$6$salt$USABLEHASH:19000:0:99999:7:::\n", nil, runner.Fail,
			[]string{"PasswordAuthentication is yes (", "50-cloud-init.conf:1) and 1 account(s) have a password it accepts: admin; the baseline allows no"},
			"admin"},
		{"an empty field", locked + "guest::19000:0:99999:7:::\nadmin:$y$j9T$USABLEHASH:19000:0:99999:7:::\n", nil, runner.Fail,
			[]string{"2 account(s) have a password it accepts: guest (empty password), admin;"},
			"guest (empty password), admin"},
		{"many accounts", "a:$6$H1:1::::::\nb:$6$H2:1::::::\nc:$6$H3:1::::::\nd:$6$H4:1::::::\ne:$6$H5:1::::::\nf:$6$H6:1::::::\n", nil, runner.Fail,
			[]string{"6 account(s) have a password it accepts: a, b, c, d, e and 1 more;"},
			"a, b, c, d, e, f"},
		{"a line that does not parse", locked + "broken:$6$salt$BROKENHASH\n", nil, runner.Fail,
			[]string{"the baseline allows no (whether an account has a password is unknown: 1 line(s) of ", "/etc/shadow:5: 2 fields, want 9)"},
			""},
		{"no shadow file", "", nil, runner.Fail,
			[]string{"the baseline allows no (whether an account has a password is unknown: ", "no such file or directory)"},
			""},
		{"ssh.baseline asks for no", locked, func(c *config.Config) {
			settings.Set(c, Settings{Baseline: Accepted{PasswordAuthentication: []string{"no"}}})
		}, runner.Fail,
			[]string{"PasswordAuthentication is yes (", "50-cloud-init.conf:1); the baseline allows no"},
			""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := imageRoot(t, "")
			if tc.shadow != "" {
				if err := os.WriteFile(filepath.Join(dir, "etc", "shadow"), []byte(tc.shadow), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			cfg := config.Default()
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			out := JudgeAuth(gatherAsRoot(t, dir, cfg))
			validate(t, out)
			var pa []runner.Finding
			for _, f := range find(out, CodeAuthBaseline) {
				if f.Detail["setting"] == "PasswordAuthentication" {
					pa = append(pa, f)
				}
			}
			if len(pa) != 1 {
				t.Fatalf("PasswordAuthentication findings:\n%s", dumpFindings(out))
			}
			f := pa[0]
			if f.Status != tc.st {
				t.Errorf("status %s, want %s: %s", f.Status, tc.st, f.Message)
			}
			for _, m := range tc.msg {
				if !strings.Contains(f.Message, m) {
					t.Errorf("message %q lacks %q", f.Message, m)
				}
			}
			if tc.accounts != "" && f.Detail["accounts"] != tc.accounts {
				t.Errorf("accounts %q, want %q", f.Detail["accounts"], tc.accounts)
			}
			if !strings.Contains(f.Remediation, "Set `PasswordAuthentication no` at ") {
				t.Errorf("fix %q", f.Remediation)
			}
			for _, g := range out {
				for k, v := range g.Detail {
					if strings.Contains(g.Message+v, "HASH") || strings.Contains(g.Message+v, "$6$") {
						t.Errorf("%s: a password hash in the report (%s): %q", g.Code, k, g.Message+" "+v)
					}
				}
			}
		})
	}

	// Not root on the running system: /etc/shadow is 0640 root:shadow, so
	// whether an account has a password is unknown, and it says so.
	f := gatherAsRoot(t, imageRoot(t, ""), nil)
	f.IsRoot, f.Logins = false, passwords.Logins{File: "/etc/shadow", Err: &iofs.PathError{Op: "open", Path: "/etc/shadow", Err: iofs.ErrPermission}}
	out := JudgeAuth(f)
	validate(t, out)
	sk := want(t, out, CodeAuthBaseline, runner.Skip, "PasswordAuthentication is yes (", "): not judged: whether an account has a password is unknown, /etc/shadow is readable by root only")
	if !strings.HasPrefix(sk.Remediation, "Run guestcheck as root to have `/etc/shadow` read") {
		t.Errorf("skip fix %q", sk.Remediation)
	}
	// As root, a denied read is no reason to pass or skip: it fails.
	f.IsRoot = true
	want(t, JudgeAuth(f), CodeAuthBaseline, runner.Fail, "whether an account has a password is unknown: /etc/shadow: permission denied")
}

func TestCleanConfigPasses(t *testing.T) {
	dir := tree(t, map[string]string{
		"/usr/sbin/sshd":       "ELF",
		"/etc/ssh/sshd_config": "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin without-password\n",
	})
	writeKey(t, dir, "/etc/ssh/ssh_host_ed25519_key", 0o600, t0, "")
	f := gatherAsRoot(t, dir, nil)
	out := Judge(f)
	validate(t, out)
	ok := want(t, out, CodeAuthOK, runner.Pass)
	if ok.Detail["permit_root_login"] != "without-password (/etc/ssh/sshd_config:3)" && !strings.HasPrefix(ok.Detail["permit_root_login"], "without-password (") {
		t.Errorf("detail = %v", ok.Detail)
	}
	if !strings.HasSuffix(ok.Detail["pubkey_authentication"], "(sshd default)") {
		t.Errorf("pubkey detail = %q", ok.Detail["pubkey_authentication"])
	}
	// Only the default ed25519 key exists: the missing rsa and ecdsa
	// defaults are not findings, as sshd skips them.
	want(t, out, CodeHostKeyOK, runner.Pass, "1 host key(s)")
	if len(find(out, CodeHostKeyMissing)) != 0 {
		t.Errorf("missing default keys reported: %s", dumpFindings(out))
	}
	want(t, out, CodeHostKeyUndated, runner.Skip, "no cloud-init instance record")
}

func TestImageUnitFiles(t *testing.T) {
	dir := imageRoot(t, "")
	if err := os.MkdirAll(filepath.Join(dir, "etc/systemd/system/multi-user.target.wants"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/lib/systemd/system/ssh.service", filepath.Join(dir, "etc/systemd/system/multi-user.target.wants/ssh.service")); err != nil {
		t.Fatal(err)
	}
	out := Judge(gatherAsRoot(t, dir, nil))
	validate(t, out)
	want(t, out, CodeUnitEnabled, runner.Pass, "ssh.service is enabled in the image")
	if err := os.Symlink("/dev/null", filepath.Join(dir, "etc/systemd/system/ssh.service")); err != nil {
		t.Fatal(err)
	}
	f := want(t, Judge(gatherAsRoot(t, dir, nil)), CodeUnitMasked, runner.Fail, "ssh.service is masked in the image")
	// The fix names the --root that was given, not an example path.
	if w := "`systemctl --root=" + runner.ShellWord(dir) + " unmask ssh.service`"; !strings.Contains(f.Remediation, w) {
		t.Errorf("fix %q does not say %s", f.Remediation, w)
	}
}

func TestNotInstalled(t *testing.T) {
	f := gatherAsRoot(t, tree(t, map[string]string{"/etc/os-release": "ID=debian\n"}), nil)
	out := Judge(f)
	validate(t, out)
	want(t, out, CodeNotInstalled, runner.Fail, "not installed")
	if len(out) != 1 {
		t.Errorf("an image without sshd gave more than the install finding:\n%s", dumpFindings(out))
	}
}

func TestConfigInvalid(t *testing.T) {
	dir := tree(t, map[string]string{
		"/usr/sbin/sshd":       "ELF",
		"/etc/ssh/sshd_config": "PasswordAuthentication\nPermitRootLogin sometimes\nBanner \"x\n",
	})
	writeKey(t, dir, "/etc/ssh/ssh_host_ed25519_key", 0o600, t0, "")
	out := JudgeConfig(gatherAsRoot(t, dir, nil))
	validate(t, out)
	f := want(t, out, CodeConfigInvalid, runner.Fail, "sshd_config:1: no argument")
	for _, s := range []string{"sshd_config:2: unsupported PermitRootLogin value \"sometimes\"", "sshd_config:3: invalid quotes"} {
		if !strings.Contains(f.Detail["problems"], s) {
			t.Errorf("problems %q lack %q", f.Detail["problems"], s)
		}
	}
}

func TestConfigUnreadable(t *testing.T) {
	// RHEL ships sshd_config 0600: as another user nothing that depends
	// on it may be judged from sshd's defaults.
	f := Facts{Binary: "/usr/sbin/sshd", Config: sshdconfig.Config{Denied: []problem.Problem{{File: sshdconfig.DefaultPath, Msg: "permission denied"}}}}
	out := Judge(f)
	validate(t, out)
	want(t, out, CodeConfigUnread, runner.Skip, "readable by root only")
	if len(find(out, CodeAuthBaseline))+len(find(out, CodeAuthOK))+len(find(out, CodeConfigInvalid)) != 0 {
		t.Errorf("judged an unread configuration:\n%s", dumpFindings(out))
	}
	f.IsRoot = true
	want(t, Judge(f), CodeConfigUnread, runner.Error, "cannot read sshd's configuration")
}

func TestJudgeHostKeyOwner(t *testing.T) {
	base := HostKey{Path: "/etc/ssh/ssh_host_ed25519_key", At: "default", Mode: 0o600, Type: "ssh-ed25519", Fingerprint: "SHA256:x", PubFingerprint: "SHA256:x", PubMode: 0o644}
	for _, tc := range []struct {
		name   string
		k      HostKey
		redHat bool
		code   runner.Code
		st     runner.Status
		msg    string
	}{
		{"ok", base, false, CodeHostKeyOK, runner.Pass, "1 host key"},
		{"owner", func() HostKey { k := base; k.UID = 1000; return k }(), false, CodeHostKeyPerms, runner.Fail, "owned by uid 1000"},
		{"0640 ssh_keys on RHEL", func() HostKey { k := base; k.Mode = 0o640; k.Group = "ssh_keys"; return k }(), true, CodeHostKeyOK, runner.Pass, "1 host key"},
		{"0640 ssh_keys on Debian", func() HostKey { k := base; k.Mode = 0o640; k.Group = "ssh_keys"; return k }(), false, CodeHostKeyPerms, runner.Fail, "wants 0600"},
		{"0640 root group on RHEL", func() HostKey { k := base; k.Mode = 0o640; k.Group = "root"; return k }(), true, CodeHostKeyPerms, runner.Fail, "0640 with group ssh_keys"},
		{"pub writable", func() HostKey { k := base; k.PubMode = 0o666; return k }(), false, CodeHostKeyPerms, runner.Warn, "writable by others"},
		{"no pub", func() HostKey { k := base; k.PubErr = iofs.ErrNotExist; return k }(), false, CodeHostKeyNoPub, runner.Warn, "has no ssh_host_ed25519_key.pub"},
		{"unreadable pub", func() HostKey { k := base; k.PubErr = errors.New("ssh: no key found"); return k }(), false, CodeHostKeyMismatch, runner.Fail, "does not parse"},
		{"unreadable as root", func() HostKey { k := base; k.Err = errors.New("input/output error"); return k }(), false, CodeHostKeyUnread, runner.Error, "cannot read host key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := JudgeHostKeys(Facts{IsRoot: true, RedHat: tc.redHat, HostKeys: []HostKey{tc.k}, DefaultHostKeys: true})
			validate(t, out)
			want(t, out, tc.code, tc.st, tc.msg)
		})
	}
	// Not root: an unreadable key is not judged, and not called missing.
	out := JudgeHostKeys(Facts{HostKeys: []HostKey{{Path: "/etc/ssh/k", At: "x", Err: iofs.ErrPermission}}})
	validate(t, out)
	want(t, out, CodeHostKeyUnread, runner.Skip, "needs root")
	// No key at all: sshd exits at start.
	out = JudgeHostKeys(Facts{DefaultHostKeys: true, HostKeys: []HostKey{{Path: "/etc/ssh/ssh_host_rsa_key", At: "default", Err: iofs.ErrNotExist}}})
	want(t, out, CodeHostKeyNone, runner.Fail, "no usable host key")
}

func TestJudgeKeyAge(t *testing.T) {
	key := []HostKey{{Path: "/etc/ssh/ssh_host_ed25519_key", ModTime: t0.Add(-time.Hour)}}
	// A clone: the instance changed on this boot and the keys are older.
	ev := identity.CloneEvidence{InstanceID: "iid-new", PreviousID: "iid-old", BootTime: t0}
	out := JudgeKeyAge(Facts{HostKeys: key, Instance: ev})
	validate(t, out)
	f := want(t, out, CodeHostKeyKept, runner.Fail, "predate instance iid-new")
	if !strings.Contains(f.Detail["instance_started"], "changed from iid-old") {
		t.Errorf("instance_started = %q", f.Detail["instance_started"])
	}
	// Keys written a minute before the boot timestamp are within the slack.
	key[0].ModTime = t0.Add(-time.Minute)
	want(t, JudgeKeyAge(Facts{HostKeys: key, Instance: ev}), CodeHostKeyFresh, runner.Pass, "iid-new")
	// No record of when the instance started.
	want(t, JudgeKeyAge(Facts{HostKeys: key, Instance: identity.CloneEvidence{InstanceID: "iid-1"}}), CodeHostKeyUndated, runner.Skip)
}

func active(name, sub, file string) systemd.UnitState {
	return systemd.UnitState{Name: name, LoadState: "loaded", ActiveState: "active", SubState: sub, UnitFileState: file}
}

func notFound(name string) systemd.UnitState {
	return systemd.UnitState{Name: name, LoadState: "not-found", ActiveState: "inactive", SubState: "dead"}
}

func TestJudgeUnits(t *testing.T) {
	for _, tc := range []struct {
		name  string
		units []systemd.UnitState
		err   error
		code  runner.Code
		st    runner.Status
		msg   string
	}{
		{"active", []systemd.UnitState{active("ssh.service", "running", "enabled"), notFound("sshd.service")}, nil, CodeUnitActive, runner.Pass, "ssh.service is active"},
		{"rhel name", []systemd.UnitState{notFound("ssh.service"), active("sshd.service", "running", "enabled")}, nil, CodeUnitActive, runner.Pass, "sshd.service is active"},
		{"socket", []systemd.UnitState{{Name: "ssh.service", LoadState: "loaded", ActiveState: "inactive", SubState: "dead", UnitFileState: "disabled"}, active("ssh.socket", "listening", "enabled")}, nil, CodeUnitActive, runner.Pass, "ssh.socket is active"},
		{"inactive", []systemd.UnitState{{Name: "ssh.service", LoadState: "loaded", ActiveState: "failed", SubState: "failed", UnitFileState: "enabled"}}, nil, CodeUnitInactive, runner.Fail, "ssh.service is failed"},
		{"none", []systemd.UnitState{notFound("ssh.service"), notFound("sshd.service")}, nil, CodeUnitInactive, runner.Fail, "no ssh.service"},
		{"masked", []systemd.UnitState{{Name: "ssh.service", LoadState: "masked", ActiveState: "inactive", SubState: "dead", UnitFileState: "masked"}}, nil, CodeUnitMasked, runner.Fail, "masked"},
		{"disabled", []systemd.UnitState{active("ssh.service", "running", "disabled")}, nil, CodeUnitDisabled, runner.Warn, "will not start at the next boot"},
		{"no systemd", nil, systemd.ErrNotRunning, CodeNoSystemd, runner.Skip, "systemd is not running"},
		{"bus error", nil, errors.New("access denied"), CodeUnreadable, runner.Error, "cannot read sshd's unit state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := JudgeUnits(Facts{Units: tc.units, UnitsErr: tc.err})
			validate(t, out)
			want(t, out, tc.code, tc.st, tc.msg)
		})
	}
}

func cfgOf(t *testing.T, s string) sshdconfig.Config {
	t.Helper()
	r := openRoot(t, tree(t, map[string]string{"/etc/ssh/sshd_config": s}))
	return sshdconfig.Load(sshdconfig.DefaultPath, identity.SSHDSource(r))
}

func TestEndpoints(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{"", "0.0.0.0:22 [::]:22"},
		{"Port 2222\nPort 22\n", "0.0.0.0:2222 [::]:2222 0.0.0.0:22 [::]:22"},
		{"AddressFamily inet\n", "0.0.0.0:22"},
		{"Port 2200\nListenAddress 192.0.2.10\nListenAddress [2001:db8::5]:2022\nListenAddress 198.51.100.1:23\n", "192.0.2.10:2200 [2001:db8::5]:2022 198.51.100.1:23"},
		{"ListenAddress 2001:db8::7\n", "[2001:db8::7]:22"},
		{"ListenAddress bastion.example.org\n", "bastion.example.org:22"},
	} {
		var got []string
		for _, e := range Endpoints(cfgOf(t, tc.cfg)) {
			got = append(got, e.String())
		}
		if diff := cmp.Diff(tc.want, strings.Join(got, " ")); diff != "" {
			t.Errorf("Endpoints(%q) (-want +got):\n%s", tc.cfg, diff)
		}
	}
}

func lst(addr string, pid int, comm string) Listener {
	return Listener{Addr: netip.MustParseAddrPort(addr), PID: pid, Comm: comm}
}

func TestJudgeListening(t *testing.T) {
	sshdUnit := []systemd.UnitState{active("ssh.service", "running", "enabled")}
	sock := []systemd.UnitState{active("ssh.socket", "listening", "enabled")}
	for _, tc := range []struct {
		name  string
		cfg   string
		ls    []Listener
		units []systemd.UnitState
		known bool
		err   error
		code  runner.Code
		st    runner.Status
		msg   string
	}{
		{"ok", "", []Listener{lst("0.0.0.0:22", 612, "sshd"), lst("[::]:22", 612, "sshd")}, sshdUnit, true, nil, CodeListening, runner.Pass, "0.0.0.0:22 by sshd[612]"},
		{"socket activated", "", []Listener{lst("0.0.0.0:22", 1, "systemd"), lst("[::]:22", 1, "systemd")}, sock, true, nil, CodeListening, runner.Pass, "by systemd[1]"},
		{"systemd without socket unit", "", []Listener{lst("0.0.0.0:22", 1, "systemd"), lst("[::]:22", 1, "systemd")}, sshdUnit, true, nil, CodePortOther, runner.Fail, "systemd[1]"},
		{"wrong port", "Port 2222\n", []Listener{lst("0.0.0.0:22", 612, "sshd"), lst("[::]:22", 612, "sshd")}, sshdUnit, true, nil, CodeNotListening, runner.Fail, "0.0.0.0:2222 (/etc/ssh/sshd_config:1)"},
		{"other process", "ListenAddress 192.0.2.10\n", []Listener{lst("192.0.2.10:22", 900, "dropbear")}, sshdUnit, true, nil, CodePortOther, runner.Fail, "dropbear[900]"},
		{"unverified", "ListenAddress 192.0.2.10\n", []Listener{lst("192.0.2.10:22", 0, "")}, sshdUnit, false, nil, CodeListening, runner.Pass, "unverified process (not root)"},
		{"unread", "", nil, sshdUnit, false, errors.New("open /proc/net/tcp: no such file"), CodeUnreadable, runner.Error, "cannot read the listening sockets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := JudgeListening(Facts{Config: cfgOf(t, tc.cfg), Listeners: tc.ls, Units: tc.units, OwnersKnown: tc.known, ListenErr: tc.err})
			validate(t, out)
			want(t, out, tc.code, tc.st, tc.msg)
		})
	}
}

func TestLiveWithFakes(t *testing.T) {
	// A live run over a fake root: the systemd answer comes from a fake;
	// /proc is absent, which must be an error, not a pass.
	dir := imageRoot(t, "")
	env := &runner.Env{Root: openRoot(t, dir), Live: true, Config: config.Default(), IsRoot: true,
		Systemd: fakeUnits{active("ssh.service", "running", "enabled")}, Now: time.Now}
	out := Run(context.Background(), env)
	validate(t, out)
	want(t, out, CodeUnitActive, runner.Pass, "ssh.service")
	want(t, out, CodeUnreadable, runner.Error, "listening sockets")
}

type fakeUnits []systemd.UnitState

func (f fakeUnits) Units(ctx context.Context, names ...string) ([]systemd.UnitState, error) {
	var out []systemd.UnitState
	for _, n := range names {
		u := notFound(n)
		for _, x := range f {
			if x.Name == n {
				u = x
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// TestOSFamily reads os-release through internal/parse/osrelease: the
// /usr/lib/os-release fallback of os-release(5) counts, and a release
// like RHEL is recognised from ID_LIKE.
func TestOSFamily(t *testing.T) {
	for _, tc := range []struct {
		files  map[string]string
		id     string
		redHat bool
	}{
		{map[string]string{"/usr/lib/os-release": "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n"}, "rocky", true},
		{map[string]string{"/etc/os-release": "ID=debian\n", "/usr/lib/os-release": "ID=rhel\n"}, "debian", false},
		{map[string]string{"/etc/os-release": "bad line\nID=almalinux\nID_LIKE='rhel'\n"}, "almalinux", true},
		{map[string]string{}, "", false},
	} {
		f := gatherAsRoot(t, tree(t, tc.files), nil)
		if f.OSID != tc.id || f.RedHat != tc.redHat {
			t.Errorf("%v: OSID=%q RedHat=%v, want %q %v", tc.files, f.OSID, f.RedHat, tc.id, tc.redHat)
		}
	}
}
