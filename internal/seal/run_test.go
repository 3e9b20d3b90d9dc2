package seal

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/seal/sealtest"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// sealTree is a scratch copy of the tree cmd/sealprep's tests seal.
func sealTree(t *testing.T, nLogs, nTmp int) string {
	t.Helper()
	dir := scratchDir(t)
	sealtest.MakeTree(t, dir, nLogs, nTmp)
	return dir
}

// runOn runs command on dir with the operations of spec; edit, when not
// nil, fills in the rest of the request.
func runOn(t *testing.T, dir, command, spec string, edit func(*Request)) Report {
	t.Helper()
	ops, err := Select(All, spec)
	if err != nil {
		t.Fatal(err)
	}
	r := Request{Command: command, Ops: ops, Opts: Options{Version: "test-version"},
		HostRead: func(string) ([]byte, error) { return nil, os.ErrNotExist }}
	if edit != nil {
		edit(&r)
	}
	rep, err := Run(context.Background(), openRoot(t, dir), r)
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	return rep
}

func text(t *testing.T, r Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// hooks notes which of a request's hooks Run called, and when.
type hooks struct {
	calls   []string
	confirm error // what Confirm answers
	asked   Report
	begun   int // actions Progress.Begin was given
}

func (c *hooks) hook(r *Request) {
	r.Confirm = func(plan Report) error {
		c.calls = append(c.calls, "confirm")
		c.asked = plan
		return c.confirm
	}
	r.Interrupt = func(ctx context.Context) (context.Context, context.CancelFunc) {
		c.calls = append(c.calls, "interrupt")
		return context.WithCancel(ctx)
	}
	r.Trim = func() []TrimResult {
		c.calls = append(c.calls, "trim")
		return []TrimResult{{Path: "/", Bytes: 4096}}
	}
	r.Progress = c
}

func (c *hooks) Begin(acts []Action) { c.calls = append(c.calls, "begin"); c.begun = len(acts) }
func (c *hooks) Start(int, Action)   {}
func (c *hooks) Finish(int, Result)  {}
func (c *hooks) End(ApplyEnd)        {}

// TestRunSequence is the sequence cmd/sealprep runs on one offline root:
// plan and verify change nothing and ask nothing; a declined apply is a
// refusal that changes nothing; apply asks, then runs under the interrupt
// context, then trims, and its re-plan says sealed; after it verify says
// sealed, plan has nothing to do, and apply asks nothing.
func TestRunSequence(t *testing.T) {
	dir := sealTree(t, 20, 10)
	before := hashTree(t, dir, true)
	for _, c := range []struct {
		command string
		status  Status
		code    int
	}{{CommandPlan, StatusPlanned, ExitOK}, {CommandVerify, StatusNotSealed, ExitProblem}} {
		rec := &hooks{}
		r := runOn(t, dir, c.command, "defaults", rec.hook)
		if r.Status != c.status || ExitCode(r) != c.code || len(r.Actions) == 0 || r.Live || r.Tool != "sealprep" ||
			r.Version != "test-version" || r.Command != c.command || r.Root != dir || len(rec.calls) > 0 {
			t.Errorf("%s: %s (exit %d), %d actions, hooks %v", c.command, r.Status, ExitCode(r), len(r.Actions), rec.calls)
		}
	}
	planned := len(runOn(t, dir, CommandPlan, "defaults", nil).Actions)

	declined := &hooks{confirm: errors.New("not confirmed")}
	r := runOn(t, dir, CommandApply, "defaults", declined.hook)
	if r.Status != StatusRefused || ExitCode(r) != ExitUsage || !strings.Contains(text(t, r), "not confirmed") ||
		strings.Join(declined.calls, ",") != "confirm" {
		t.Errorf("declined apply: %s, hooks %v\n%s", r.Status, declined.calls, text(t, r))
	}
	if a := declined.asked; a.Status != StatusPlanned || len(a.Actions) != planned || a.Root != dir || a.Command != CommandApply {
		t.Errorf("asked with %s, %d actions (planned %d), root %s", a.Status, len(a.Actions), planned, a.Root)
	}
	if hashTree(t, dir, true) != before {
		t.Fatal("plan, verify or a declined apply changed the root")
	}

	rec := &hooks{}
	r = runOn(t, dir, CommandApply, "defaults", rec.hook)
	if r.Status != StatusSealed || ExitCode(r) != ExitOK || r.Summary.Done != planned || len(r.Left) != 0 {
		t.Fatalf("apply: %s, %+v\n%s", r.Status, r.Summary, text(t, r))
	}
	if strings.Join(rec.calls, ",") != "confirm,interrupt,begin,trim" || rec.begun != planned {
		t.Errorf("apply called %v (Begin with %d actions), want confirm, interrupt, begin, trim", rec.calls, rec.begun)
	}
	if len(r.Trim) != 1 || r.Trim[0].Bytes != 4096 {
		t.Errorf("trim not reported: %+v", r.Trim)
	}
	if r := runOn(t, dir, CommandVerify, "defaults", nil); r.Status != StatusSealed || ExitCode(r) != ExitOK {
		t.Errorf("verify after apply: %s\n%s", r.Status, text(t, r))
	}
	if r := runOn(t, dir, CommandPlan, "defaults", nil); len(r.Actions) != 0 || !strings.Contains(text(t, r), "Nothing to do.") {
		t.Errorf("plan after apply:\n%s", text(t, r))
	}
	again := &hooks{}
	if r := runOn(t, dir, CommandApply, "defaults", again.hook); r.Status != StatusSealed || strings.Contains(strings.Join(again.calls, ","), "confirm") {
		t.Errorf("apply with nothing to do: %s, hooks %v", r.Status, again.calls)
	}
}

// TestRunRefusalDanglingOSRelease: an /etc/os-release symlink whose
// target is not in the root (a separate /usr not mounted) is told as
// such, with where it points, not as a missing file.
func TestRunRefusalDanglingOSRelease(t *testing.T) {
	dir := sealTree(t, 1, 1)
	if err := os.Remove(filepath.Join(dir, "usr/lib/os-release")); err != nil {
		t.Fatal(err)
	}
	r := runOn(t, dir, CommandApply, "defaults", nil)
	want := "\n  [preflight] /etc/os-release is a dangling symlink to ../usr/lib/os-release, which is not in this root, so this does not look like an operating system root\n" +
		"      fix: mount the filesystem that holds ../usr/lib/os-release (such as a separate /usr) inside the root first; else point --root at the mounted root filesystem, or add --force to seal it anyway\n"
	if out := text(t, r); ExitCode(r) != ExitUsage || !strings.Contains(out, want) {
		t.Errorf("dangling os-release: exit %d\n%s", ExitCode(r), out)
	}
	// A target that is not printable is quoted.
	if err := os.Remove(filepath.Join(dir, "etc/os-release")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("\x1b[31mred", filepath.Join(dir, "etc/os-release")); err != nil {
		t.Fatal(err)
	}
	if out := text(t, runOn(t, dir, CommandApply, "defaults", nil)); !strings.Contains(out, `dangling symlink to "\x1b[31mred"`) {
		t.Errorf("escape in the target not quoted:\n%s", out)
	}
}

// TestRunRefusals: a root that is not an OS root is refused (forcibly),
// before anything is asked or changed; --force seals it.
func TestRunRefusals(t *testing.T) {
	dir := sealTree(t, 1, 1)
	if err := os.Remove(filepath.Join(dir, "etc/os-release")); err != nil {
		t.Fatal(err)
	}
	rec := &hooks{}
	r := runOn(t, dir, CommandApply, "defaults", rec.hook)
	if out := text(t, r); ExitCode(r) != ExitUsage || !strings.Contains(out, "\n  [preflight] /etc/os-release is missing, so this is not an operating system root\n      fix: point --root at the mounted root filesystem, or add --force to seal it anyway\n") {
		t.Errorf("no os-release: exit %d\n%s", ExitCode(r), out)
	}
	if len(rec.calls) > 0 || r.Trim != nil {
		t.Errorf("a refused apply called %v", rec.calls)
	}
	r = runOn(t, dir, CommandApply, "defaults", func(r *Request) { r.Opts.Force = true })
	if ExitCode(r) != ExitOK {
		t.Errorf("forced apply: exit %d\n%s", ExitCode(r), text(t, r))
	}
}

// TestRunPowerOffNotBooted: a power-off is refused up front on a root
// that is not the running system, which is not asked whether it booted.
func TestRunPowerOffNotBooted(t *testing.T) {
	dir := sealTree(t, 1, 1)
	before := hashTree(t, dir, true)
	asked := false
	_, err := Run(context.Background(), openRoot(t, dir), Request{Command: CommandApply, Ops: All,
		Opts: Options{PowerOff: true}, HostBooted: func() bool { asked = true; return true }})
	if !errors.Is(err, ErrPowerOffNotBooted) || asked {
		t.Errorf("offline power-off: %v (booted asked: %v)", err, asked)
	}
	if hashTree(t, dir, true) != before {
		t.Error("a refused power-off changed the root")
	}
}

// TestRunSELinuxRelabelCount: on an image with SELinux enforcing and no
// file contexts to label new files with, the report says a relabel is
// needed and how many files it walks, counted on the root's directory.
func TestRunSELinuxRelabelCount(t *testing.T) {
	dir := sealTree(t, 1, 1)
	if err := os.MkdirAll(filepath.Join(dir, "etc/selinux"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etc/selinux/config"), []byte("SELINUX=enforcing\nSELINUXTYPE=targeted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var counted string
	r := runOn(t, dir, CommandPlan, "defaults", func(r *Request) {
		r.RelabelFiles = func(d string) uint64 { counted = d; return 1234 }
	})
	if se := r.SELinux; se == nil || !se.Relabel || se.RelabelFiles != 1234 || counted != dir {
		t.Errorf("SELinux %+v, counted on %q", se, counted)
	}
}

// TestRunVerifyMachineIDSemantics: verify judges /etc/machine-id by
// machine-id(5). An empty or "uninitialized" file is sealed whatever its
// mode (another mode is a warning), under either machine-id mode; a
// missing one is sealed only on a root that is writable at boot.
func TestRunVerifyMachineIDSemantics(t *testing.T) {
	for _, tc := range []struct {
		name, content string // content "-": missing
		perm          os.FileMode
		cmdline       string // /etc/kernel/cmdline; "" for none
		mode          MachineIDMode
		code          int
		out           string
	}{
		{"empty 0644", "", 0o644, "", MachineIDEmpty, ExitOK, "warn: truncate /etc/machine-id (mode 0444)"},
		{"uninitialized, default mode", "uninitialized\n", 0o444, "", MachineIDEmpty, ExitOK, "SEALED: 0 identity items left"},
		{"uninitialized 0644", "uninitialized\n", 0o644, "", MachineIDEmpty, ExitOK, ", 1 warning"},
		{"empty, mode uninitialized", "", 0o444, "", MachineIDUninitialized, ExitOK, "already empty: systemd generates a new ID at boot"},
		{"missing, rw at boot", "-", 0, "root=/dev/vda1 rw\n", MachineIDEmpty, ExitOK, "systemd creates a new ID at boot"},
		{"missing, ro at boot", "-", 0, "root=/dev/vda1 ro\n", MachineIDEmpty, ExitProblem, "systemd cannot create the file and refuses to boot"},
		{"missing, no command line", "-", 0, "", MachineIDEmpty, ExitProblem, "no kernel command line in the image"},
		{"valid ID 0644", sealtest.MachineID + "\n", 0o644, "", MachineIDEmpty, ExitProblem, "NOT-SEALED: 1 identity item left"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := sealTree(t, 0, 0)
			mid := filepath.Join(dir, "etc/machine-id")
			must(t, os.Remove(filepath.Join(dir, "var/lib/dbus/machine-id")))
			must(t, os.Remove(mid))
			if tc.content != "-" {
				must(t, os.WriteFile(mid, []byte(tc.content), 0o600))
				must(t, os.Chmod(mid, tc.perm))
			}
			if tc.cmdline != "" {
				must(t, os.MkdirAll(filepath.Join(dir, "etc/kernel"), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, "etc/kernel/cmdline"), []byte(tc.cmdline), 0o644))
			}
			r := runOn(t, dir, CommandVerify, "machine-id", func(r *Request) { r.Opts.MachineIDMode = tc.mode })
			out := text(t, r)
			if ExitCode(r) != tc.code || !strings.Contains(strings.Join(strings.Fields(out), " "), tc.out) {
				t.Errorf("verify: exit %d (want %d), want %q in:\n%s", ExitCode(r), tc.code, tc.out, out)
			}
		})
	}
}

// TestRunPartialSealRecord: an apply without ssh-host-keys leaves the keys
// and records their fingerprints with the version the request names;
// verify with the same operations says sealed, and says not sealed once
// the record no longer matches the keys left in the image.
func TestRunPartialSealRecord(t *testing.T) {
	testenv.Tool(t, "ssh-keygen", "openssh-client")
	dir := sealTree(t, 2, 2)
	key := filepath.Join(dir, "etc/ssh/ssh_host_ed25519_key")
	os.Remove(key)
	os.Remove(key + ".pub")
	os.Remove(filepath.Join(dir, "etc/ssh/ssh_host_rsa_key"))
	if b, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, b)
	}
	lf, err := exec.Command("ssh-keygen", "-lf", key).Output()
	if err != nil {
		t.Fatal(err)
	}
	fp := strings.Fields(string(lf))[1]

	if r := runOn(t, dir, CommandApply, "-ssh-host-keys", nil); ExitCode(r) != ExitOK {
		t.Fatalf("apply: exit %d\n%s", ExitCode(r), text(t, r))
	}
	b, err := os.ReadFile(filepath.Join(dir, sealrecord.Path))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sealrecord.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.HostKeys) != 1 || rec.HostKeys[0].Fingerprint != fp || rec.HostKeysRemoved || !rec.MachineIDCleared ||
		rec.SealprepVersion != "test-version" || rec.MachineIDHash != sealrecord.HashMachineID(sealtest.MachineID) {
		t.Fatalf("record %s", b)
	}
	if _, err := os.Stat(key); err != nil {
		t.Fatalf("the key was removed: %v", err)
	}
	if r := runOn(t, dir, CommandVerify, "-ssh-host-keys", nil); ExitCode(r) != ExitOK {
		t.Fatalf("verify after a partial seal: exit %d\n%s", ExitCode(r), text(t, r))
	}
	forged := strings.Replace(string(b), fp, "SHA256:"+strings.Repeat("A", 43), 1)
	must(t, os.WriteFile(filepath.Join(dir, sealrecord.Path), []byte(forged), 0o644))
	if r := runOn(t, dir, CommandVerify, "-ssh-host-keys", nil); ExitCode(r) != ExitProblem || !strings.Contains(text(t, r), sealrecord.Path) {
		t.Fatalf("verify with a record that does not match the keys: exit %d\n%s", ExitCode(r), text(t, r))
	}
}

// TestRunLeavesHardLinkedOutsideFiles is the report that started the
// hard-link rule: `ln /outside/mid ROOT/etc/machine-id; sealprep apply
// --yes --root ROOT --ops machine-id` emptied /outside/mid and made it
// 0444; --ops logfiles did the same to a hard-linked log.
func TestRunLeavesHardLinkedOutsideFiles(t *testing.T) {
	dir := sealTree(t, 4, 0)
	outside := scratchDir(t) // the same tmpfs as dir: hard links need one filesystem
	pairs := map[string]string{
		"mid":     "etc/machine-id",
		"app.log": "var/log/app00/service00000.log",
	}
	for out, in := range pairs {
		o := filepath.Join(outside, out)
		must(t, os.WriteFile(o, []byte(sealtest.MachineID+"\n"), 0o644))
		must(t, os.Remove(filepath.Join(dir, in)))
		must(t, os.Link(o, filepath.Join(dir, in)))
	}
	r := runOn(t, dir, CommandPlan, "machine-id,logfiles", nil)
	if out := text(t, r); ExitCode(r) != ExitOK || strings.Count(out, "hard link (2 names): replaced by a new file") != 2 {
		t.Errorf("plan (exit %d) does not say that both files are hard links replaced by new files:\n%s", ExitCode(r), out)
	}
	for _, ops := range []string{"machine-id", "logfiles"} {
		if r := runOn(t, dir, CommandApply, ops, nil); ExitCode(r) != ExitOK {
			t.Fatalf("apply --ops %s: exit %d\n%s", ops, ExitCode(r), text(t, r))
		}
	}
	for out, in := range pairs {
		st, err := os.Stat(filepath.Join(outside, out))
		b, _ := os.ReadFile(filepath.Join(outside, out))
		if err != nil || st.Mode().Perm() != 0o644 || string(b) != sealtest.MachineID+"\n" {
			t.Errorf("outside %s (linked as %s) changed: mode %v, content %q, %v", out, in, st.Mode(), b, err)
		}
		if st, err := os.Stat(filepath.Join(dir, in)); err != nil || st.Size() != 0 {
			t.Errorf("%s not emptied: %v", in, err)
		}
	}
	if r := runOn(t, dir, CommandVerify, "machine-id,logfiles", nil); ExitCode(r) != ExitOK {
		t.Errorf("verify: exit %d\n%s", ExitCode(r), text(t, r))
	}
}
