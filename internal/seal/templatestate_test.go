package seal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// verifyOps is verify's report on nodes with ops.
func verifyOps(t *testing.T, nodes []node, ops ...Operation) (string, *fs.Confined, Plan, Report) {
	t.Helper()
	dir, root := newRoot(t, nodes)
	plan := MakePlan(context.Background(), root, ops, Options{MachineIDMode: MachineIDEmpty})
	return dir, root, plan, PlanReport(Meta{Command: "verify"}, plan, nil, nil)
}

// TestMachineIDSymlink: systemd reads the file a symlinked
// /etc/machine-id ends at. One in the image is sealed in place, the link
// kept; a link to /run is left alone (a new ID at every boot); a link to
// a missing file elsewhere is refused.
func TestMachineIDSymlink(t *testing.T) {
	base := []node{f("/etc/os-release", "ID=debian\n"), f("/usr/lib/systemd/systemd", "ELF"),
		f("/etc/kernel/cmdline", "root=/dev/vda1 ro\n"), d("/run")}

	dir, root, plan, rep := verifyOps(t, append(base, fm("/etc/machine-id.real", validID+"\n", 0o444), l("/etc/machine-id", "machine-id.real")), opMachineID)
	if rep.Status == StatusSealed || len(plan.Actions) != 1 || plan.Actions[0].Path != "/etc/machine-id.real" || plan.Actions[0].Tidy != "" {
		t.Fatalf("a link to an ID in the image: %s, actions %+v", rep.Status, plan.Actions)
	}
	for _, r := range (&Executor{Root: root}).Apply(context.Background(), plan.Actions) {
		if r.Status == Failed {
			t.Fatalf("%s %s: %s", r.Kind, r.Path, r.Error)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "etc/machine-id.real")); err != nil || len(b) != 0 {
		t.Errorf("target after apply: %q %v", b, err)
	}
	if tgt, err := os.Readlink(filepath.Join(dir, "etc/machine-id")); err != nil || tgt != "machine-id.real" {
		t.Errorf("link after apply: %q %v", tgt, err)
	}

	_, _, plan, rep = verifyOps(t, append(base, fm("/etc/machine-id.real", "", 0o666), l("/etc/machine-id", "machine-id.real")), opMachineID)
	if len(plan.Actions) != 1 || plan.Actions[0].Tidy == "" {
		t.Errorf("a link to an empty 0666 file: %s, actions %+v", rep.Status, plan.Actions)
	}

	_, _, plan, rep = verifyOps(t, append(base, l("/etc/machine-id", "/run/machine-id")), opMachineID)
	if rep.Status != StatusSealed || len(plan.Actions) != 0 || !strings.Contains(notesText(rep), "outside the image") {
		t.Errorf("a link to /run: %s, actions %+v, notes %+v", rep.Status, plan.Actions, rep.Notes)
	}

	_, _, _, rep = verifyOps(t, append(base, l("/etc/machine-id", "/var/lib/machine-id")), opMachineID)
	if len(rep.Refusals) != 1 || !strings.Contains(rep.Refusals[0].Message, "links to /var/lib/machine-id, which is missing") {
		t.Errorf("a dangling link: refusals %+v", rep.Refusals)
	}
}

func notesText(rep Report) string {
	var s []string
	for _, n := range rep.Notes {
		s = append(s, n.Message)
	}
	return strings.Join(s, "\n")
}

// TestHostnameBlankLine: a hostname file of blank lines names no host,
// so emptying it is tidy, not identity.
func TestHostnameBlankLine(t *testing.T) {
	base := []node{f("/etc/os-release", "ID=debian\n")}
	_, _, plan, _ := verifyOps(t, append(base, f("/etc/hostname", "\n")), opHostname)
	if len(plan.Actions) != 1 || plan.Actions[0].Tidy == "" {
		t.Errorf("blank line: actions %+v", plan.Actions)
	}
	_, _, plan, _ = verifyOps(t, append(base, f("/etc/hostname", "web1\n")), opHostname)
	if len(plan.Actions) != 1 || plan.Actions[0].Tidy != "" {
		t.Errorf("a name: actions %+v", plan.Actions)
	}
}

// TestSSHHostKeysNoRegenerator: sshd with no keys and nothing that would
// generate them (no cloud-init, no sshd-keygen, no ssh-keygen for
// sealprep's unit) is refused, as it is with keys: clones boot an sshd
// that cannot start.
func TestSSHHostKeysNoRegenerator(t *testing.T) {
	base := []node{f("/etc/os-release", "ID=debian\n"), f("/usr/sbin/sshd", "ELF"), d("/etc/ssh")}
	_, _, _, rep := verifyOps(t, base, opSSHHostKeys)
	if rep.Status == StatusSealed || len(rep.Refusals) != 1 || !strings.Contains(rep.Refusals[0].Message, "nothing makes SSH host keys at first boot") {
		t.Errorf("no keys, no regenerator: %s, refusals %+v", rep.Status, rep.Refusals)
	}
	_, _, _, rep = verifyOps(t, append(base, f("/usr/lib/systemd/system/sshd-keygen@.service", "[Unit]\n")), opSSHHostKeys)
	if rep.Status != StatusSealed {
		t.Errorf("no keys, sshd-keygen: %s, refusals %+v", rep.Status, rep.Refusals)
	}
}
