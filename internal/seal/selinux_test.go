package seal

import (
	"context"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

const testFileContexts = `# targeted, abridged
/.*	system_u:object_r:default_t:s0
/etc(/.*)?	system_u:object_r:etc_t:s0
/etc/machine-id	--	system_u:object_r:machineid_t:s0
/var/lib/dbus(/.*)?	system_u:object_r:system_dbusd_var_lib_t:s0
/etc/systemd/system(/.*)?	system_u:object_r:systemd_unit_file_t:s0
/etc/systemd/system/.*\.wants(/.*)?	-l	system_u:object_r:systemd_unit_file_t:s0
/proc(/.*)?	<<none>>
/(?!bad)x	system_u:object_r:bad_t:s0
/dev/null	-c	system_u:object_r:null_device_t:s0
`

func TestFileContextsLookup(t *testing.T) {
	fcs, bad := ParseFileContexts([]byte(testFileContexts))
	if len(bad) != 1 || bad[0].Line != 9 {
		t.Errorf("bad lines %v, want the lookahead on line 9", bad)
	}
	tests := []struct {
		path string
		kind fs.Kind
		want string
	}{
		{"/etc/machine-id", fs.KindRegular, "machineid_t"},
		{"/etc/machine-id", fs.KindSymlink, "etc_t"}, // the exact spec is for regular files only
		{"/etc/hostname", fs.KindRegular, "etc_t"},
		{"/var/lib/dbus/machine-id", fs.KindSymlink, "system_dbusd_var_lib_t"},
		{"/etc/systemd/system/multi-user.target.wants/x.service", fs.KindSymlink, "systemd_unit_file_t"},
		{"/usr/bin/x", fs.KindRegular, "default_t"},
		{"/dev/null", fs.KindCharDevice, "null_device_t"},
		{"/proc/1", fs.KindRegular, ""},
	}
	for _, tc := range tests {
		got, ok := fcs.Lookup(tc.path, tc.kind)
		if tc.want == "" {
			if ok {
				t.Errorf("%s: %q, want no label", tc.path, got)
			}
			continue
		}
		if !ok || !strings.Contains(got, ":"+tc.want+":") {
			t.Errorf("%s (%s): %q, want %s", tc.path, tc.kind, got, tc.want)
		}
	}
}

func FuzzParseFileContexts(f *testing.F) {
	f.Add([]byte(testFileContexts))
	f.Fuzz(func(t *testing.T, b []byte) {
		fcs, _ := ParseFileContexts(b)
		fcs.Lookup("/etc/machine-id", fs.KindRegular)
	})
}

func TestParseSELinuxConfig(t *testing.T) {
	m, p := ParseSELinuxConfig([]byte("# SELINUX=disabled\nSELINUX=Enforcing\nSELINUXTYPE=targeted\n"))
	if m != "enforcing" || p != "targeted" {
		t.Errorf("%q %q", m, p)
	}
}

func selinuxNodes(withContexts bool) []node {
	n := []node{
		f("/etc/os-release", "ID=fedora\n"),
		f("/usr/lib/systemd/systemd", "ELF"),
		f("/var/lib/dbus/machine-id", oldMachineID),
		f("/etc/selinux/config", "SELINUX=enforcing\nSELINUXTYPE=targeted\n"),
	}
	if withContexts {
		n = append(n, f("/etc/selinux/targeted/contexts/files/file_contexts", testFileContexts))
	}
	return n
}

// The files an offline seal creates (/etc/machine-id, which is missing,
// and the D-Bus symlink) get the labels the image's file_contexts gives.
func TestSELinuxLabelsCreatedFiles(t *testing.T) {
	testenv.RequireRoot(t, "sets security.selinux extended attributes")
	_, root := newRoot(t, selinuxNodes(true))
	ops := []Operation{opMachineID}
	plan := MakePlan(context.Background(), root, ops, Options{})
	se := PlanSELinux(root, plan, false)
	if se == nil || se.Created != 2 || se.Relabel || !strings.Contains(se.Message, "no relabel is needed") {
		t.Fatalf("plan: %+v", se)
	}
	x := &Executor{Root: root}
	se.LabelCreated(root, x.Apply(context.Background(), plan.Actions))
	for p, want := range map[string]string{
		"/etc/machine-id":          "system_u:object_r:machineid_t:s0",
		"/var/lib/dbus/machine-id": "system_u:object_r:system_dbusd_var_lib_t:s0",
	} {
		got, err := root.Label(p)
		if err != nil || got != want {
			t.Errorf("%s: label %q (%v), want %q", p, got, err, want)
		}
	}
	for _, l := range se.Labels {
		if !l.Done {
			t.Errorf("%s not labelled: %s", l.Path, l.Error)
		}
	}
	if PlanSELinux(root, plan, true) != nil {
		t.Error("a live system's own policy labels new files: nothing to report")
	}
}

// Without file_contexts, plan says a relabel is needed, and the opt-in
// selinux-autorelabel operation creates /.autorelabel.
func TestSELinuxRelabelFallback(t *testing.T) {
	_, root := newRoot(t, selinuxNodes(false))
	plan := MakePlan(context.Background(), root, []Operation{opMachineID, opSELinuxAutorelabel}, Options{})
	se := PlanSELinux(root, plan, false)
	if se == nil || !se.Relabel || !strings.Contains(se.Message, "--autorelabel") {
		t.Fatalf("%+v", se)
	}
	var relabel bool
	for _, a := range plan.Actions {
		relabel = relabel || a.Path == "/.autorelabel" && a.Kind == WriteFile
	}
	if !relabel {
		t.Errorf("no /.autorelabel in %+v", plan.Actions)
	}
	x := &Executor{Root: root}
	x.Apply(context.Background(), plan.Actions)
	if after := MakePlan(context.Background(), root, []Operation{opSELinuxAutorelabel}, Options{}); len(after.Actions) != 0 {
		t.Errorf("verify: %+v", after.Actions)
	}
	_, plain := newRoot(t, []node{f("/etc/selinux/config", "SELINUX=disabled\n")})
	if p := MakePlan(context.Background(), plain, []Operation{opSELinuxAutorelabel}, Options{}); len(p.Actions) != 0 || PlanSELinux(plain, p, false) != nil {
		t.Error("SELinux disabled: nothing to do")
	}
}
