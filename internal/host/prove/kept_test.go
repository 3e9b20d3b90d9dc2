package prove

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
)

// keptReport is two clones of a template sealed with --ops
// -ssh-host-keys: they share the template's host key, by choice.
func keptReport() Report {
	rec := sealrecord.Record{SealedAt: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC), Kept: []string{"ssh-host-keys"}}
	return baseReport([]CloneResult{
		clone(1, mid1, keyT, "prove-1", "prove-abc-1", "52:54:00:00:00:01", "192.0.2.8/28"),
		clone(2, mid2, keyT, "prove-2", "prove-abc-2", "52:54:00:00:00:02", "192.0.2.24/28"),
	}, TemplateIdentity{Read: true, Record: true, SealedAt: "2026-12-05T10:00:00Z", Operations: []string{"template-record", "machine-id"},
		Kept: rec.KeptItems(),
		Identity: &guestid.Identity{MachineIDState: "empty",
			HostKeys: []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: keyT, Path: "/etc/ssh/ssh_host_ed25519_key"}}}})
}

// TestKeptByChoice: host keys a template kept by choice are still shared
// by its clones, so prove still fails; its template line and the failure
// name them as kept by choice, in the record's one wording.
func TestKeptByChoice(t *testing.T) {
	r := keptReport()
	want := "ssh host keys kept by choice (sealprep apply --ops -ssh-host-keys at 2026-12-05T10:00:00Z): every clone will share them; seal with ssh-host-keys to give each clone its own"
	if r.Proven {
		t.Fatal("clones sharing host keys kept by choice are proven")
	}
	var keyFail *Failure
	for i, f := range r.Failures {
		if f.Item == guestid.ItemHostKey {
			keyFail = &r.Failures[i]
		}
	}
	if keyFail == nil || !strings.HasSuffix(keyFail.Message, ": "+want) {
		t.Errorf("host key failure: %+v, want it to end with the kept item", keyFail)
	}
	for _, f := range r.Failures {
		if f.Item != guestid.ItemHostKey && strings.Contains(f.Message, "kept by choice") {
			t.Errorf("failure of %s names the kept host keys: %s", f.Item, f.Message)
		}
	}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\ntemplate: "+want+"\n") {
		t.Errorf("text has no template line for the kept keys:\n%s", b.String())
	}
}
