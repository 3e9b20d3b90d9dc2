package seal

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

var recordTime = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)

// realKeyNodes replaces the fixture's placeholder host keys with keys that
// ssh-keygen generated, and returns ssh-keygen -lf's fingerprint of each.
func realKeyNodes(t *testing.T, nodes []node) ([]node, map[string]string) {
	t.Helper()
	testenv.Tool(t, "ssh-keygen", "openssh-client")
	tmp := t.TempDir()
	var out []node
	for _, n := range nodes {
		if !strings.HasPrefix(n.Path, "/etc/ssh/ssh_host_") {
			out = append(out, n)
		}
	}
	fps := map[string]string{}
	for _, typ := range []string{"ed25519", "ecdsa", "rsa"} {
		k := filepath.Join(tmp, "ssh_host_"+typ+"_key")
		if b, err := exec.Command("ssh-keygen", "-q", "-t", typ, "-N", "", "-C", "", "-f", k).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen -t %s: %v: %s", typ, err, b)
		}
		priv, _ := os.ReadFile(k)
		pub, _ := os.ReadFile(k + ".pub")
		name := "/etc/ssh/ssh_host_" + typ + "_key"
		out = append(out, fm(name, string(priv), 0o600), f(name+".pub", string(pub)))
		lf, err := exec.Command("ssh-keygen", "-lf", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		// "256 SHA256:... comment (ED25519)"
		fps[name] = strings.Fields(string(lf))[1]
	}
	return out, fps
}

func readRecord(t *testing.T, dir string) (sealrecord.Record, []byte) {
	t.Helper()
	p := filepath.Join(dir, sealrecord.Path)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("record mode %04o, want 0644", st.Mode().Perm())
	}
	r, err := sealrecord.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return r, b
}

func checkRecordedKeys(t *testing.T, r sealrecord.Record, want map[string]string) {
	t.Helper()
	if len(r.HostKeys) != len(want) {
		t.Fatalf("recorded %d keys, want %d: %+v", len(r.HostKeys), len(want), r.HostKeys)
	}
	for _, k := range r.HostKeys {
		if want[k.File] != k.Fingerprint {
			t.Errorf("%s: recorded %s, ssh-keygen -lf says %s", k.File, k.Fingerprint, want[k.File])
		}
	}
}

// noSecrets: neither a key body nor the raw machine ID is in the record.
func noSecrets(t *testing.T, b []byte, nodes []node) {
	t.Helper()
	s := string(b)
	if strings.Contains(strings.ToLower(s), strings.TrimSpace(oldMachineID)) {
		t.Error("the record holds the raw machine ID")
	}
	for _, n := range nodes {
		if strings.HasPrefix(n.Path, "/etc/ssh/ssh_host_") {
			body := strings.Fields(n.Data)
			for _, w := range body {
				if len(w) > 40 && strings.Contains(s, w) {
					t.Errorf("the record holds part of %s", n.Path)
				}
			}
		}
	}
}

func sealWith(t *testing.T, root *fs.Confined, spec string) Plan {
	t.Helper()
	ops, err := Select(All, spec)
	if err != nil {
		t.Fatal(err)
	}
	plan, res := applyAll(t, root, ops, Options{Force: true, Now: recordTime, Version: "v-test"})
	for _, r := range res {
		if r.Status == Failed {
			t.Errorf("%s %s: %s", r.Kind, r.Path, r.Error)
		}
	}
	return plan
}

func replan(t *testing.T, root View, spec string, now time.Time) Plan {
	t.Helper()
	ops, _ := Select(All, spec)
	return MakePlan(context.Background(), root, ops, Options{Force: true, Now: now, Version: "v-later"})
}

func TestTemplateRecordFullSeal(t *testing.T) {
	nodes, fps := realKeyNodes(t, debianNodes())
	dir, root := newRoot(t, nodes)
	plan := sealWith(t, root, "defaults")
	// Written before the first key is removed: an interrupted run still
	// leaves the record.
	rec, firstKey := -1, -1
	for i, a := range plan.Actions {
		if a.Path == sealrecord.Path && rec < 0 {
			rec = i
		}
		if a.Op == "ssh-host-keys" && a.Kind == Remove && firstKey < 0 {
			firstKey = i
		}
	}
	if rec < 0 || firstKey < 0 || rec > firstKey {
		t.Fatalf("record at %d, first key removal at %d", rec, firstKey)
	}
	r, b := readRecord(t, dir)
	checkRecordedKeys(t, r, fps)
	if !r.HostKeysRemoved || !r.MachineIDCleared {
		t.Errorf("removed %v cleared %v, want both", r.HostKeysRemoved, r.MachineIDCleared)
	}
	if r.MachineIDHash != sealrecord.HashMachineID(oldMachineID) {
		t.Errorf("machine_id_hmac %s", r.MachineIDHash)
	}
	if !r.SealedAt.Equal(recordTime) || r.SealprepVersion != "v-test" {
		t.Errorf("sealed_at %v version %q", r.SealedAt, r.SealprepVersion)
	}
	noSecrets(t, b, nodes)
	// Verify re-plans later with another clock and version: the keys and
	// the ID are gone, and the record still matches what was removed.
	if after := replan(t, root, "defaults", recordTime.Add(time.Hour)); len(after.Actions) != 0 {
		t.Fatalf("re-plan after seal: %+v", after.Actions)
	}
	if _, b2 := readRecord(t, dir); string(b2) != string(b) {
		t.Error("the record changed")
	}
}

func TestTemplateRecordPartialSeal(t *testing.T) {
	nodes, fps := realKeyNodes(t, debianNodes())
	dir, root := newRoot(t, nodes)
	sealWith(t, root, "-ssh-host-keys")
	r, b := readRecord(t, dir)
	checkRecordedKeys(t, r, fps)
	if r.HostKeysRemoved || !r.MachineIDCleared {
		t.Errorf("removed %v cleared %v, want keys kept and ID cleared", r.HostKeysRemoved, r.MachineIDCleared)
	}
	if r.MachineIDHash != sealrecord.HashMachineID(oldMachineID) {
		t.Error("the cleared machine ID is not recorded")
	}
	noSecrets(t, b, nodes)
	if after := replan(t, root, "-ssh-host-keys", recordTime.Add(time.Hour)); len(after.Actions) != 0 {
		t.Fatalf("re-plan after partial seal: %+v", after.Actions)
	}

	// Verify notices a record that does not match the keys left behind.
	forged := strings.Replace(string(b), fps["/etc/ssh/ssh_host_rsa_key"], "SHA256:"+strings.Repeat("A", 43), 1)
	if err := os.WriteFile(filepath.Join(dir, sealrecord.Path), []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	after := replan(t, root, "-ssh-host-keys", recordTime.Add(time.Hour))
	if len(after.Actions) != 1 || after.Actions[0].Path != sealrecord.Path || after.Actions[0].Expect == "" {
		t.Fatalf("re-plan with a forged record: %+v", after.Actions)
	}

	// Sealing fully afterwards keeps the fingerprints and says the keys
	// are gone now.
	later := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	ops, _ := Select(All, "defaults")
	_, res := applyAll(t, root, ops, Options{Force: true, Now: later, Version: "v2"})
	for _, x := range res {
		if x.Status == Failed {
			t.Errorf("%s %s: %s", x.Kind, x.Path, x.Error)
		}
	}
	r, _ = readRecord(t, dir)
	checkRecordedKeys(t, r, fps)
	if !r.HostKeysRemoved || !r.SealedAt.Equal(later) || r.SealprepVersion != "v2" {
		t.Errorf("after the full seal: %+v", r)
	}
	if after := replan(t, root, "defaults", later.Add(time.Hour)); len(after.Actions) != 0 {
		t.Fatalf("re-plan: %+v", after.Actions)
	}
}

func TestTemplateRecordNothingToRecord(t *testing.T) {
	_, root := newRoot(t, []node{f("/etc/os-release", "ID=debian\n"), f("/etc/machine-id", "")})
	p := replan(t, root, "template-record", recordTime)
	if len(p.Actions) != 0 || len(p.Notes) != 1 {
		t.Fatalf("plan %+v notes %+v", p.Actions, p.Notes)
	}
	// A malformed record with nothing left to rebuild it from goes.
	_, root = newRoot(t, []node{f("/etc/os-release", "ID=debian\n"), f(sealrecord.Path, "{\"schema\": 1,\n \"secret\": 2}\n")})
	p = replan(t, root, "template-record", recordTime)
	if len(p.Actions) != 1 || p.Actions[0].Kind != Remove || len(p.Notes) != 1 || !strings.Contains(p.Notes[0].Message, sealrecord.Path+":") {
		t.Fatalf("plan %+v notes %+v", p.Actions, p.Notes)
	}
	// A directory in its place is left alone.
	_, root = newRoot(t, []node{f("/etc/machine-id", oldMachineID), d(sealrecord.Path)})
	if p = replan(t, root, "template-record", recordTime); len(p.Actions) != 0 || len(p.Notes) != 1 {
		t.Fatalf("plan %+v notes %+v", p.Actions, p.Notes)
	}
}

// TestTemplateRecordNotThroughSymlink: a /var/lib/sealprep that is a
// symlink (here to /etc, in the root) is never written through.
func TestTemplateRecordNotThroughSymlink(t *testing.T) {
	for _, target := range []string{"/etc", "../../etc"} {
		dir, root := newRoot(t, []node{f("/etc/machine-id", oldMachineID), d("/var/lib"), l("/var/lib/sealprep", target),
			f("/etc/template.json", "{}")})
		p := replan(t, root, "template-record", recordTime)
		if len(p.Actions) != 0 || len(p.Notes) != 1 || !strings.Contains(p.Notes[0].Message, "symlink") {
			t.Fatalf("plan %+v notes %+v", p.Actions, p.Notes)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "etc/template.json")); string(b) != "{}" {
			t.Fatal("written through the symlink")
		}
	}
}

// TestVerifyOpsCountsIdentityLeft: verify --ops defaults on a template
// that apply sealed with --ops -ssh-host-keys counts the host keys still
// there, whether or not apply would refuse to remove them, and never the
// template record, which is sealprep's own and still true of the root.
func TestVerifyOpsCountsIdentityLeft(t *testing.T) {
	nodes, _ := realKeyNodes(t, debianNodes())
	for _, regen := range []bool{true, false} {
		var in []node
		for _, n := range nodes {
			// Without cloud-init's ssh module nor ssh-keygen, nothing
			// makes host keys at first boot: apply would refuse.
			if regen || (n.Path != "/etc/cloud/cloud.cfg" && n.Path != "/usr/bin/ssh-keygen") {
				in = append(in, n)
			}
		}
		dir, _ := newRoot(t, in)
		// --force passes the fixture's netplan MAC pin, which is not
		// what this test is about.
		if rep := runOn(t, dir, CommandApply, "-ssh-host-keys", func(r *Request) { r.Opts.Force = true }); rep.Status != StatusSealed {
			t.Fatalf("regen %v: apply --ops -ssh-host-keys: %s\n%s", regen, rep.Status, text(t, rep))
		}
		rep := runOn(t, dir, CommandVerify, "defaults", func(r *Request) { r.OpsGiven = true })
		keys := 0
		for _, a := range rep.Actions {
			switch {
			case a.Op == opSSHHostKeys.ID && a.Kind == Remove:
				keys++
				if a.Status != Planned {
					t.Errorf("regen %v: %s %s is %s, want planned (identity left)", regen, a.Kind, a.Path, a.Status)
				}
			case a.Op == opTemplateRecord.ID:
				t.Errorf("regen %v: the record, true of the root, is planned: %s %s (%s)", regen, a.Kind, a.Path, a.Status)
			}
		}
		if keys != 6 || rep.Summary.Left != keys || rep.Status != StatusNotSealed {
			t.Errorf("regen %v: %d keys planned, %d identity items left, %s; want 6, 6, not-sealed\n%s", regen, keys, rep.Summary.Left, rep.Status, text(t, rep))
		}
		if !regen && (len(rep.Refusals) != 1 || !strings.Contains(text(t, rep), "NOT-SEALED: 6 identity items left, 1 refusal")) {
			t.Errorf("no regenerator: refusals %+v\n%s", rep.Refusals, text(t, rep))
		}
		// As apply recorded it, the same root is sealed, keys kept by choice.
		if rep := runOn(t, dir, CommandVerify, "defaults", nil); rep.Status != StatusSealed || len(rep.Kept) != 2 {
			t.Errorf("regen %v: verify as recorded: %s, kept %+v\n%s", regen, rep.Status, rep.Kept, text(t, rep))
		}
	}
}

// TestVersion1RecordStillVerifies: a template sealed by an older
// sealprep, whose record has "schema": 1 and a plain SHA-256 of the
// machine ID, verifies sealed as that record says, with nothing to
// rewrite.
func TestVersion1RecordStillVerifies(t *testing.T) {
	nodes, _ := realKeyNodes(t, debianNodes())
	dir, _ := newRoot(t, nodes)
	if rep := runOn(t, dir, CommandApply, "defaults", func(r *Request) { r.Opts.Force = true }); rep.Status != StatusSealed {
		t.Fatalf("apply: %s\n%s", rep.Status, text(t, rep))
	}
	rec, b := readRecord(t, dir)
	if rec.MachineIDHash != sealrecord.HashMachineID(oldMachineID) {
		t.Fatalf("record: %s", b)
	}
	v1 := strings.Replace(string(b), `"schema_version": 2`, `"schema": 1`, 1)
	v1 = strings.Replace(v1, `"machine_id_hmac": "`+rec.MachineIDHash+`"`, `"machine_id_sha256": "`+sealrecord.LegacyHashMachineID(oldMachineID)+`"`, 1)
	if err := os.WriteFile(filepath.Join(dir, sealrecord.Path), []byte(v1), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := runOn(t, dir, CommandVerify, "defaults", nil)
	if rep.Status != StatusSealed || rep.Selection == nil || rep.Selection.Operations != FromRecord || len(rep.Actions) != 0 {
		t.Errorf("verify on a version 1 record: %s, %+v\n%s", rep.Status, rep.Selection, text(t, rep))
	}
}
