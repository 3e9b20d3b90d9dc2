package ssh

import (
	"context"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// sealRecordOnly runs sealprep's template-record operation on dir, with
// ssh-host-keys additionally selected when removed: what
// `sealprep apply --ops -ssh-host-keys` leaves is the record alone.
func sealRecordOnly(t *testing.T, dir string, spec string) {
	t.Helper()
	c, err := fs.OpenConfined(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ops, err := seal.Select(seal.All, spec)
	if err != nil {
		t.Fatal(err)
	}
	plan := seal.MakePlan(context.Background(), c, ops, seal.Options{Force: true,
		Now: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC), Version: "v9.9"})
	for _, r := range (&seal.Executor{Root: c}).Apply(context.Background(), plan.Actions) {
		if r.Status == seal.Failed {
			t.Fatalf("%s %s: %s", r.Kind, r.Path, r.Error)
		}
	}
}

func templateRoot(t *testing.T) string {
	dir := tree(t, map[string]string{
		"/usr/sbin/sshd":       "ELF",
		"/etc/os-release":      "ID=debian\n",
		"/etc/ssh/sshd_config": "PasswordAuthentication no\nKbdInteractiveAuthentication no\n",
		"/etc/machine-id":      "4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b\n",
	})
	writeKey(t, dir, "/etc/ssh/ssh_host_ed25519_key", 0o600, t0, "")
	return dir
}

func TestTemplateKeysPartialSeal(t *testing.T) {
	dir := templateRoot(t)
	sealRecordOnly(t, dir, "template-record")
	out := Judge(gatherAsRoot(t, dir, nil))
	validate(t, out)
	f := want(t, out, CodeHostKeyTemplate, runner.Fail, "1 host key(s) are the template's keys",
		"sealed at 2026-12-01T09:30:00Z by sealprep v9.9", "sealed at 2026-12-01T09:30:00Z by sealprep v9.9 without its ssh-host-keys operation)")
	if !strings.HasSuffix(f.Detail["record"], sealrecord.Path) || f.Detail["sealprep_version"] != "v9.9" {
		t.Errorf("detail %v", f.Detail)
	}

	// A clone that generated its own key is not the template's.
	writeKey(t, dir, "/etc/ssh/ssh_host_ed25519_key", 0o600, t0, "")
	out = Judge(gatherAsRoot(t, dir, nil))
	if n := len(find(out, CodeHostKeyTemplate)); n != 0 {
		t.Fatalf("own key judged the template's:\n%s", dumpFindings(out))
	}
}

func TestTemplateKeysRestored(t *testing.T) {
	dir := templateRoot(t)
	priv, _ := os.ReadFile(filepath.Join(dir, "etc/ssh/ssh_host_ed25519_key"))
	pub, _ := os.ReadFile(filepath.Join(dir, "etc/ssh/ssh_host_ed25519_key.pub"))
	// ssh-host-keys is selected, so the record says the keys were removed
	// (sshd here has nothing to regenerate them: --force removes anyway).
	sealRecordOnly(t, dir, "template-record,ssh-host-keys")
	if _, err := os.Stat(filepath.Join(dir, "etc/ssh/ssh_host_ed25519_key")); !os.IsNotExist(err) {
		t.Fatalf("key not removed: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "etc/ssh/ssh_host_ed25519_key"), priv, 0o600)
	os.WriteFile(filepath.Join(dir, "etc/ssh/ssh_host_ed25519_key.pub"), pub, 0o644)
	out := Judge(gatherAsRoot(t, dir, nil))
	validate(t, out)
	want(t, out, CodeHostKeyTemplate, runner.Fail, "by sealprep v9.9, whose ssh-host-keys operation removed them; they were put back since)")
}

func TestTemplateRecordUnparsedIgnored(t *testing.T) {
	dir := templateRoot(t)
	if err := os.MkdirAll(filepath.Join(dir, "var/lib/sealprep"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, sealrecord.Path), []byte("{not json"), 0o644)
	if f := gatherAsRoot(t, dir, nil); f.Template != nil {
		t.Fatalf("a malformed record was read: %+v", f.Template)
	}
}

// TestJudgeTemplateHostKeys judges a sealed template's host keys on Facts
// values: none with a regenerator passes, none without one fails, any key
// left fails.
func TestJudgeTemplateHostKeys(t *testing.T) {
	tpl := identity.TemplateState{Is: true, Why: "looks sealed; /etc/machine-id is empty"}
	missing := HostKey{Path: "/etc/ssh/ssh_host_ed25519_key", At: "default", Err: iofs.ErrNotExist}
	base := Facts{Binary: "/usr/sbin/sshd", DefaultHostKeys: true, HostKeys: []HostKey{missing}, State: tpl}

	f := base
	f.Regenerator = "the sshd-keygen@.service unit"
	out := JudgeHostKeys(f)
	validate(t, out)
	p := want(t, out, CodeHostKeyTemplateNone, runner.Pass, "no host keys, as in a sealed template: the sshd-keygen@.service unit generates them")
	if p.Detail["template"] != tpl.Why || p.Detail["regenerator"] != f.Regenerator {
		t.Errorf("detail %v", p.Detail)
	}

	out = JudgeHostKeys(base)
	validate(t, out)
	fl := want(t, out, CodeHostKeyNone, runner.Fail, "nothing generates them at first boot")
	if strings.Contains(fl.Remediation, "systemctl") || !strings.Contains(fl.Remediation, "re-seal") {
		t.Errorf("remediation %q", fl.Remediation)
	}

	f = base
	f.Regenerator = "cloud-init's ssh module (cc_ssh)"
	f.KeyFiles = []string{"/etc/ssh/ssh_host_rsa_key"}
	out = JudgeHostKeys(f)
	validate(t, out)
	fl = want(t, out, CodeHostKeyInTemplate, runner.Fail, "1 host key file(s) left in a sealed template")
	if fl.Detail["keys"] != "/etc/ssh/ssh_host_rsa_key" {
		t.Errorf("detail %v", fl.Detail)
	}

	// On a first boot, keys may be this boot's: judged as a guest's.
	f = base
	f.Live = true
	f.HostKeys = []HostKey{{Path: "/etc/ssh/ssh_host_ed25519_key", At: "default", Err: iofs.ErrPermission}}
	if got := find(JudgeHostKeys(f), CodeHostKeyInTemplate); len(got) != 0 {
		t.Errorf("live first boot with keys judged as a template: %+v", got)
	}

	// A guest without keys still fails as before.
	f = base
	f.State = identity.TemplateState{}
	f.Regenerator = "ignored"
	want(t, JudgeHostKeys(f), CodeHostKeyNone, runner.Fail, "sshd has no usable host key")
}

// TestTemplateRootGathered reads a sealed template's root: cloud-init's
// ssh module is found through cloud.cfg as sealprep finds it.
func TestTemplateRootGathered(t *testing.T) {
	dir := tree(t, map[string]string{
		"/usr/sbin/sshd":       "ELF",
		"/etc/os-release":      "ID=debian\n",
		"/etc/ssh/sshd_config": "PasswordAuthentication no\nKbdInteractiveAuthentication no\n",
		"/etc/machine-id":      "",
		"/usr/bin/cloud-init":  "",
		"/etc/cloud/cloud.cfg": "cloud_init_modules: [migrator, ssh]\n",
	})
	out := Judge(gatherAsRoot(t, dir, nil))
	validate(t, out)
	want(t, out, CodeHostKeyTemplateNone, runner.Pass, "cloud-init's ssh module (cc_ssh) generates them at first boot")

	if err := os.WriteFile(filepath.Join(dir, "etc/cloud/cloud.cfg"), []byte("cloud_init_modules: [migrator, ssh]\nssh_genkeytypes: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = Judge(gatherAsRoot(t, dir, nil))
	want(t, out, CodeHostKeyNone, runner.Fail, "no host keys in the template")
}
