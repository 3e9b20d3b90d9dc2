package sealrecord

import (
	"strings"
	"testing"
	"time"
)

func sample() Record {
	return Record{SealedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), SealprepVersion: "v1",
		HostKeys: []HostKey{
			{File: "/etc/ssh/ssh_host_rsa_key", Type: "ssh-rsa", Fingerprint: "SHA256:" + strings.Repeat("b", 43)},
			{File: "/etc/ssh/ssh_host_ed25519_key", Type: "ssh-ed25519", Fingerprint: "SHA256:" + strings.Repeat("a", 43)},
		},
		MachineIDSHA256: HashMachineID("4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b"), MachineIDCleared: true}
}

func TestRoundTrip(t *testing.T) {
	r := sample()
	b := r.Marshal()
	got, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !got.SameIdentity(r) || !got.SealedAt.Equal(r.SealedAt) || got.SealprepVersion != "v1" {
		t.Fatalf("round trip: %+v", got)
	}
	if got.HostKeys[0].Type != "ssh-ed25519" {
		t.Error("keys are not sorted by file")
	}
	o := r
	o.SealedAt, o.SealprepVersion = time.Now(), "v2"
	if !o.SameIdentity(r) {
		t.Error("time and version count as identity")
	}
	o.HostKeysRemoved = true
	if o.SameIdentity(r) {
		t.Error("the outcome does not count")
	}
}

// TestSelectionRoundTrip: the operations and machine-id mode apply ran
// with survive the file, count as the record's identity (a verify with
// other operations plans a new record), and an older record without them
// still parses.
func TestSelectionRoundTrip(t *testing.T) {
	r := sample()
	r.Operations, r.MachineIDMode = []string{"template-record", "machine-id"}, "uninitialized"
	got, err := Parse(r.Marshal())
	if err != nil || strings.Join(got.Operations, ",") != "template-record,machine-id" || got.MachineIDMode != "uninitialized" {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if o := got; o.SameIdentity(sample()) {
		t.Error("the operations and mode do not count")
	}
	if old, err := Parse(sample().Marshal()); err != nil || old.Operations != nil || old.MachineIDMode != "" {
		t.Errorf("a record without them: %+v, %v", old, err)
	}
}

func TestHashMachineID(t *testing.T) {
	// sha256("sealprep-machine-id:4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b"), as
	// `printf %s ... | sha256sum` prints it.
	const want = "a36aa94c9fe1462aefb5ff91a2dbd5d55cee20ca54f11875a4470c4d56c1759f"
	for _, id := range []string{"4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b", "4F6B1C0E9A2D4E7F8A1B2C3D4E5F6A7B\n"} {
		if got := HashMachineID(id); got != want {
			t.Errorf("HashMachineID(%q) = %s", id, got)
		}
	}
}

func TestParseErrors(t *testing.T) {
	good := string(sample().Marshal())
	for _, tc := range []struct{ in, want string }{
		{"{\n\"schema\": 1,\n\"sealed_at\": \"2026-12-01T10:00:00Z\",\n,}", Path + ":4:"},
		{strings.Replace(good, `"machine_id_cleared"`, `"key": "AAAA", "machine_id_cleared"`, 1), "unknown field"},
		{strings.Replace(good, `"schema": 1`, `"schema": 2`, 1), "schema 2"},
		{strings.Replace(good, "SHA256:aaaa", "MD5:aaaa", 1), "fingerprint"},
		{strings.Replace(good, `"machine_id_sha256": "a`, `"machine_id_sha256": "Z`, 1), "machine_id_sha256"},
		{good + "{}", "data after"},
		{`{"schema": 1}`, "no sealed_at"},
		{strings.Replace(good, `"machine_id_cleared": true`, `"machine_id_cleared": true, "operations": ["Machine ID"]`, 1), "not an operation ID"},
		{strings.Replace(good, `"machine_id_cleared": true`, `"machine_id_cleared": true, "machine_id_mode": "remove"`, 1), "neither empty nor uninitialized"},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%.40q) = %v, want one line with %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample().Marshal())
	f.Add([]byte(`{"schema":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Parse(b)
		if err != nil {
			return
		}
		// What parses survives its own marshalling.
		r2, err := Parse(r.Marshal())
		if err != nil || !r2.SameIdentity(r) {
			t.Fatalf("re-parse: %v", err)
		}
	})
}
