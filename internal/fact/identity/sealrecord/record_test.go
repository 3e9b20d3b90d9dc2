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
		MachineIDHash: HashMachineID("4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b"), MachineIDCleared: true}
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
	// HMAC-SHA256 keyed with the ID's 16 bytes over guestcheck's
	// application ID, its first 16 bytes with the version 4 UUID bits,
	// as Python's hmac module computes it: the reports' machine_id_hash.
	const want = "b44a65e328704633b5cd5c1f53b21b88"
	// sha256("sealprep-machine-id:4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b"), as
	// `printf %s ... | sha256sum` prints it: version 1 records.
	const legacy = "a36aa94c9fe1462aefb5ff91a2dbd5d55cee20ca54f11875a4470c4d56c1759f"
	for _, id := range []string{"4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b", "4F6B1C0E9A2D4E7F8A1B2C3D4E5F6A7B\n"} {
		if got := HashMachineID(id); got != want {
			t.Errorf("HashMachineID(%q) = %s, want %s", id, got, want)
		}
		if got := LegacyHashMachineID(id); got != legacy {
			t.Errorf("LegacyHashMachineID(%q) = %s", id, got)
		}
	}
	if got := HashMachineID("uninitialized"); got != "" {
		t.Errorf("HashMachineID(uninitialized) = %q, want none", got)
	}
}

// TestVersion1Record: a record an older sealprep wrote ("schema": 1, a
// plain SHA-256 of the machine ID) still reads and names the template's
// ID; written again it is version 2, under schema_version, and still
// names it.
func TestVersion1Record(t *testing.T) {
	const id = "4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b"
	v1 := `{
  "schema": 1,
  "sealed_at": "2026-11-02T09:00:00Z",
  "sealprep_version": "v0.9",
  "ssh_host_keys": [],
  "ssh_host_keys_removed": true,
  "machine_id_sha256": "a36aa94c9fe1462aefb5ff91a2dbd5d55cee20ca54f11875a4470c4d56c1759f",
  "machine_id_cleared": true
}
`
	r, err := Parse([]byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	if !r.HasMachineID() || !r.MachineIDIs(HashID(id)) || r.MachineIDIs(HashID("0123456789abcdef0123456789abcdef")) {
		t.Errorf("version 1: %+v does not name its ID alone", r)
	}
	b := r.Marshal()
	if !strings.Contains(string(b), `"schema_version": 2,`) || strings.Contains(string(b), `"schema":`) {
		t.Errorf("rewritten:\n%s", b)
	}
	again, err := Parse(b)
	if err != nil || !again.MachineIDIs(HashID(id)) || !again.SameIdentity(r) {
		t.Errorf("rewritten version 1: %+v, %v", again, err)
	}
	// A new record holds the reports' hash, under the reports' keys.
	n := string(sample().Marshal())
	for _, want := range []string{`"schema_version": 2,`, `"machine_id_hmac": "b44a65e328704633b5cd5c1f53b21b88"`} {
		if !strings.Contains(n, want) {
			t.Errorf("new record lacks %s:\n%s", want, n)
		}
	}
	if strings.Contains(n, `"schema":`) || strings.Contains(n, "machine_id_sha256") {
		t.Errorf("new record has a version 1 key:\n%s", n)
	}
}

func TestParseErrors(t *testing.T) {
	good := string(sample().Marshal())
	for _, tc := range []struct{ in, want string }{
		{"{\n\"schema_version\": 2,\n\"sealed_at\": \"2026-12-01T10:00:00Z\",\n,}", Path + ":4:"},
		{strings.Replace(good, `"machine_id_cleared"`, `"key": "AAAA", "machine_id_cleared"`, 1), "unknown field"},
		{strings.Replace(good, `"schema_version": 2`, `"schema_version": 3`, 1), "schema_version 3, this build reads 2"},
		{strings.Replace(good, `"schema_version": 2`, `"schema": 2`, 1), "schema 2, this build reads schema 1 and schema_version 2"},
		{strings.Replace(good, `"schema_version": 2`, `"schema": 1`, 1), "schema 1 with machine_id_hmac"},
		{strings.Replace(good, "SHA256:aaaa", "MD5:aaaa", 1), "fingerprint"},
		{strings.Replace(good, `"machine_id_hmac": "b`, `"machine_id_hmac": "Z`, 1), "machine_id_hmac"},
		{strings.Replace(good, `"machine_id_hmac": "b`, `"machine_id_sha256": "b`, 1), "machine_id_sha256"},
		{good + "{}", "data after"},
		{`{"schema_version": 2}`, "no sealed_at"},
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
	f.Add([]byte(`{"schema_version":2}`))
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
