package seal

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
)

// TestSpec: the --ops a report names selects the same operations again.
func TestSpec(t *testing.T) {
	for _, spec := range []string{"defaults", "-ssh-host-keys", "-tmp,+resolv-conf", "machine-id", "machine-id,ssh-host-keys", "all"} {
		ops, err := Select(All, spec)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Select(All, Spec(All, ops))
		if err != nil || len(again) != len(ops) {
			t.Errorf("Spec(%s) = %q selects %d operations, want %d (%v)", spec, Spec(All, ops), len(again), len(ops), err)
		}
	}
	if got := Spec(All, mustSelect(t, "-ssh-host-keys")); got != "-ssh-host-keys" {
		t.Errorf("Spec = %q", got)
	}
}

func mustSelect(t *testing.T, spec string) []Operation {
	t.Helper()
	ops, err := Select(All, spec)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// TestVerifySelection: verify takes each of the operations and the mode
// from the record unless the command line gave it, and the defaults
// (said) without a record; unknown recorded IDs are named.
func TestVerifySelection(t *testing.T) {
	dir := sealTree(t, 1, 1)
	root := openRoot(t, dir)
	req := Request{Command: CommandVerify, Ops: mustSelect(t, "defaults")}
	ops, mode, sel := verifySelection(root, req)
	if len(ops) != len(req.Ops) || mode != MachineIDEmpty || sel.Operations != FromDefault || sel.MachineIDMode != FromDefault {
		t.Errorf("no record: %d ops, %s, %+v", len(ops), mode, sel)
	}
	rec := sealrecord.Record{SealedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), SealprepVersion: "v",
		Operations: []string{"template-record", "machine-id", "from-the-future"}, MachineIDMode: "uninitialized"}
	p := filepath.Join(dir, sealrecord.Path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, rec.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	ops, mode, sel = verifySelection(root, req)
	if Spec(All, ops) != "template-record,machine-id" || mode != MachineIDUninitialized || sel.Operations != FromRecord || sel.MachineIDMode != FromRecord {
		t.Errorf("record: %s, %s, %+v", Spec(All, ops), mode, sel)
	}
	want := "verifying --ops template-record,machine-id and --machine-id-mode uninitialized, as apply recorded them in /var/lib/sealprep/template.json (sealed 2026-12-01T10:00:00Z); the record also names from-the-future, which this sealprep does not have"
	if sel.Note != want {
		t.Errorf("note\n%s\nwant\n%s", sel.Note, want)
	}
	req.ModeGiven, req.Opts.MachineIDMode = true, MachineIDEmpty
	if _, mode, sel = verifySelection(root, req); mode != MachineIDEmpty || sel.MachineIDMode != FromOptions || sel.Operations != FromRecord {
		t.Errorf("--machine-id-mode given: %s, %+v", mode, sel)
	}
}
