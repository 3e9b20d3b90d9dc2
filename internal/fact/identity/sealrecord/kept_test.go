package sealrecord

import (
	"strings"
	"testing"
)

// TestKeptItems: an operation --ops dropped and a refusal --force passed
// survive the file and read as one line each, in the one wording; a
// record without them (an older sealprep's) still parses and keeps
// nothing.
func TestKeptItems(t *testing.T) {
	r := sample()
	r.Kept = []string{"ssh-host-keys", "machine-id", "some-new-op"}
	r.Forced = []Forced{NewForced("ssh-host-keys", "/etc/ssh", "nothing regenerates SSH host keys; sshd would not start on clones")}
	got, err := Parse(r.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, it := range got.KeptItems() {
		lines = append(lines, it.Message)
	}
	want := []string{
		"ssh host keys kept by choice (sealprep apply --ops -ssh-host-keys at 2026-12-01T10:00:00Z): every clone will share them; seal with ssh-host-keys to give each clone its own",
		"the machine ID kept by choice (sealprep apply --ops -machine-id at 2026-12-01T10:00:00Z): every clone will share it; seal with machine-id to give each clone its own",
		"what some-new-op clears kept by choice (sealprep apply --ops -some-new-op at 2026-12-01T10:00:00Z): every clone will share it; seal with some-new-op to give each clone its own",
		"ssh-host-keys refusal passed by choice (sealprep apply --force at 2026-12-01T10:00:00Z): /etc/ssh: nothing regenerates SSH host keys; sshd would not start on clones",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("KeptItems:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if it, ok := got.KeptItem("ssh-host-keys", true); !ok || it.Path != "/etc/ssh" {
		t.Errorf("KeptItem(ssh-host-keys, forced) = %+v, %v", it, ok)
	}
	if got.SameIdentity(sample()) {
		t.Error("kept and forced do not count")
	}
	if old, err := Parse(sample().Marshal()); err != nil || len(old.KeptItems()) != 0 {
		t.Errorf("a record without them: %+v, %v", old, err)
	}
}

// TestKeptParseErrors: entries a sealprep would not write are rejected.
func TestKeptParseErrors(t *testing.T) {
	for _, r := range []Record{
		func() Record { r := sample(); r.Kept = []string{"Not An Op"}; return r }(),
		func() Record { r := sample(); r.Forced = []Forced{{Op: "x", Reason: "two\nlines"}}; return r }(),
		func() Record { r := sample(); r.Forced = []Forced{{Op: "x"}}; return r }(),
		func() Record { r := sample(); r.Forced = []Forced{{Op: "", Reason: "r"}}; return r }(),
	} {
		if _, err := Parse(r.Marshal()); err == nil {
			t.Errorf("Parse accepted kept %q forced %+v", r.Kept, r.Forced)
		}
	}
	if f := NewForced("x", "/p\n", strings.Repeat("é", 800)); len(f.Reason) > maxReason || strings.Contains(f.Path, "\n") {
		t.Errorf("NewForced: %+v", f)
	}
}
