package seal

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
)

// issueDefaults are default operations the issues require: each must stay
// one (an operation's own file says whether it is; these may not lose it).
var issueDefaults = []string{"machine-id", "ssh-host-keys", "cloud-init", "random-seed", "systemd-credential-secret",
	"hostname", "dhcp-leases", "nm-identity", "net-mac-pins", "journal", "login-records", "logfiles",
	"shell-history", "tmp", "crash-data", "passwd-backups", "host-credentials", "lvm-devices-file", "package-cache",
	// The machine-id leak paths (the --image issue).
	"machine-id-cmdline", "machine-id-credential",
	// The access-baseline issue: the record clones are judged against.
	"template-record"}

func TestRegistry(t *testing.T) {
	idx := func(id string) int {
		for i, op := range All {
			if op.ID == id {
				return i
			}
		}
		return -1
	}
	kebab := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	defaults := map[string]bool{}
	for _, op := range All {
		if !kebab.MatchString(op.ID) || seen[op.ID] {
			t.Errorf("bad or duplicate ID %q", op.ID)
		}
		seen[op.ID] = true
		if op.Default {
			defaults[op.ID] = true
		}
		if op.Summary == "" || op.Plan == nil || op.Doc.What == "" || op.Doc.Why == "" {
			t.Errorf("%s: no summary, plan or Doc", op.ID)
		}
		// What --ops drops is told in the operation's own words; only a
		// default operation can be dropped, and without template-record
		// there is no record to tell it.
		if wantKept := op.Default && op.ID != opTemplateRecord.ID; wantKept != (op.Kept.What != "") {
			t.Errorf("%s: Kept %q; a default operation other than template-record says what clones keep, no other does", op.ID, op.Kept.What)
		}
		// One file per operation, named after its ID.
		file := strings.ReplaceAll(op.ID, "-", "") + ".go"
		if _, err := os.Stat(file); err != nil {
			t.Errorf("%s: no file %s", op.ID, file)
		}
	}
	for _, id := range issueDefaults {
		if !defaults[id] {
			t.Errorf("%s must be a default operation", id)
		}
	}
	if idx("template-record") > idx("ssh-host-keys") {
		t.Error("template-record must run before ssh-host-keys: it records the keys that ssh-host-keys removes")
	}
	if All[len(All)-1].ID != "machine-id" {
		t.Error("machine-id must run last")
	}
}

func TestSelect(t *testing.T) {
	ids := func(ops []Operation) string {
		var s []string
		for _, o := range ops {
			s = append(s, o.ID)
		}
		return strings.Join(s, ",")
	}
	nDefault := 0
	for _, op := range All {
		if op.Default {
			nDefault++
		}
	}
	tests := []struct {
		spec    string
		n       int
		has     string
		hasNot  string
		wantErr bool
	}{
		{"defaults", nDefault, "tmp", "resolv-conf", false},
		{"-tmp", nDefault - 1, "machine-id", "tmp", false},
		{"+resolv-conf", nDefault + 1, "resolv-conf", "", false},
		{"defaults,-tmp,+resolv-conf", nDefault, "resolv-conf", "tmp", false},
		{"machine-id,ssh-host-keys", 2, "ssh-host-keys", "tmp", false},
		{"all,-tmp", len(All) - 1, "resolv-conf", "tmp", false},
		{"nope", 0, "", "", true},
		{"-nope", 0, "", "", true},
		{" , ", 0, "", "", true},
	}
	for _, tc := range tests {
		got, err := Select(All, tc.spec)
		if (err != nil) != tc.wantErr {
			t.Errorf("Select(%q) err = %v", tc.spec, err)
			continue
		}
		if tc.wantErr {
			continue
		}
		s := "," + ids(got) + ","
		if len(got) != tc.n || (tc.has != "" && !strings.Contains(s, ","+tc.has+",")) || (tc.hasNot != "" && strings.Contains(s, ","+tc.hasNot+",")) {
			t.Errorf("Select(%q) = %s", tc.spec, ids(got))
		}
	}
	// Order follows All, whatever the spec's order.
	got, _ := Select(All, "machine-id,cloud-init")
	if ids(got) != "cloud-init,machine-id" {
		t.Errorf("order = %s", ids(got))
	}
}

func TestDetectContainer(t *testing.T) {
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if v, ok := m[p]; ok {
				return []byte(v), nil
			}
			return nil, os.ErrNotExist
		}
	}
	tests := []struct {
		m    map[string]string
		want string
	}{
		{map[string]string{}, ""},
		{map[string]string{"/proc/1/environ": "PATH=/bin\x00HOME=/", "/proc/self/cgroup": "0::/init.scope\n"}, ""},
		{map[string]string{"/run/.containerenv": ""}, "podman"},
		{map[string]string{"/.dockerenv": ""}, "docker"},
		{map[string]string{"/run/systemd/container": "lxc\n"}, "lxc"},
		{map[string]string{"/proc/1/environ": "PATH=/bin\x00container=podman\x00"}, "container=podman"},
		{map[string]string{"/proc/self/cgroup": "0::/kubepods/besteffort/pod1\n"}, "kubepods"},
	}
	for _, tc := range tests {
		got := DetectContainer(files(tc.m))
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("DetectContainer(%v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}

func TestPreflight(t *testing.T) {
	_, bare := newRoot(t, []node{f("/etc/hostname", "x\n")})
	refs, _ := Preflight(bare, Options{}, true, nil)
	if len(refs) != 1 || !refs[0].Forcible || !strings.Contains(refs[0].Message, "os-release") {
		t.Errorf("no os-release: %+v", refs)
	}
	refs, notes := Preflight(bare, Options{Force: true}, true, nil)
	if len(refs) != 0 || len(notes) != 1 {
		t.Errorf("forced: refusals %+v notes %+v", refs, notes)
	}
	_, ok := newRoot(t, debianNodes())
	container := func(p string) ([]byte, error) {
		if p == "/.dockerenv" {
			return nil, nil
		}
		return nil, os.ErrNotExist
	}
	if refs, _ := Preflight(ok, Options{Live: true}, true, container); len(refs) != 1 || !strings.Contains(refs[0].Message, "container") {
		t.Errorf("live in a container: %+v", refs)
	}
	if refs, _ := Preflight(ok, Options{}, true, container); len(refs) != 0 {
		t.Errorf("offline roots ignore the host's container hints: %+v", refs)
	}
}

// TestNoRegeneratorRefused: sshd without cloud-init, keygen units, systemd
// or ssh-keygen: removing the keys is refused unless forced.
func TestNoRegeneratorRefused(t *testing.T) {
	nodes := []node{f("/etc/os-release", "ID=alpine\n"), f("/usr/sbin/sshd", "ELF"),
		fm("/etc/ssh/ssh_host_ed25519_key", "K", 0o600), f("/etc/passwd", passwd)}
	_, root := newRoot(t, nodes)
	p := MakePlan(context.Background(), root, []Operation{opSSHHostKeys}, Options{})
	if len(p.Refusals) != 1 || len(p.Actions) != 0 {
		t.Fatalf("refusals %+v actions %+v", p.Refusals, p.Actions)
	}
	p = MakePlan(context.Background(), root, []Operation{opSSHHostKeys}, Options{Force: true})
	if len(p.Refusals) != 0 || len(p.Actions) != 1 {
		t.Fatalf("forced: refusals %+v actions %+v", p.Refusals, p.Actions)
	}
}

// TestLiveActions: live-only actions go through the injected Live, in
// plan order, and fail without one (or on an image root).
func TestLiveActions(t *testing.T) {
	dir, root := newRoot(t, debianNodes())
	plan := MakePlan(context.Background(), root, allOps(t), Options{Live: true, Booted: true, Force: true})
	var kinds []string
	for _, a := range plan.Actions {
		switch a.Kind {
		case StopUnit, RelinquishVar, RunHook:
			kinds = append(kinds, string(a.Kind))
		}
	}
	if strings.Join(kinds, ",") != "run-hook,stop-unit,relinquish-var" {
		t.Errorf("live actions = %v", kinds)
	}
	// On an image root the executor refuses them even with a Live.
	live := &fakeLive{}
	x := &Executor{Root: root, Live: live}
	for _, r := range x.Apply(context.Background(), plan.Actions) {
		live := r.Kind == StopUnit || r.Kind == RelinquishVar || r.Kind == RunHook
		if live && (r.Status != Failed || !strings.Contains(r.Error, errNotLive.Error())) {
			t.Errorf("%s on an image root: %s %s", r.Kind, r.Status, r.Error)
		}
	}
	if len(live.calls) != 0 {
		t.Errorf("live calls on an image root: %v", live.calls)
	}
	_ = dir
}

func TestExitCodes(t *testing.T) {
	for st, want := range map[Status]int{StatusPlanned: 0, StatusSealed: 0, StatusAppliedLive: 0,
		StatusNotSealed: 1, StatusFailed: 1, StatusRefused: 3, Status(""): 1} {
		if got := ExitCode(Report{Status: st}); got != want {
			t.Errorf("ExitCode(%q) = %d, want %d", st, got, want)
		}
	}
}

func TestApplyInterruptedByContext(t *testing.T) {
	_, root := newRoot(t, debianNodes())
	plan := MakePlan(context.Background(), root, allOps(t), Options{Force: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := (&Executor{Root: root}).Apply(ctx, plan.Actions)
	for _, r := range res {
		if r.Status != Failed || !strings.Contains(r.Error, context.Canceled.Error()) {
			t.Fatalf("%s: %s %s", r.Path, r.Status, r.Error)
		}
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatal("context not cancelled")
	}
}

// TestUninitializedOnOldSystemd notes a systemd too old to treat
// "uninitialized" as a first boot.
func TestUninitializedOnOldSystemd(t *testing.T) {
	_, root := newRoot(t, []node{f("/etc/os-release", "ID=x\n"), f("/usr/lib/systemd/systemd", "ELF"),
		f("/usr/lib/systemd/libsystemd-shared-245.so", "ELF"), f("/etc/machine-id", oldMachineID)})
	p := MakePlan(context.Background(), root, []Operation{opMachineID}, Options{MachineIDMode: MachineIDUninitialized})
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0].Message, "systemd 245") {
		t.Errorf("notes %+v", p.Notes)
	}
	if len(p.Actions) != 1 || p.Actions[0].Content != "uninitialized\n" {
		t.Errorf("actions %+v", p.Actions)
	}
}
