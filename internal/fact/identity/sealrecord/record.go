// Package sealrecord is the template record that sealprep writes into a
// sealed image and guestcheck reads on its clones: the SHA-256
// fingerprints of the template's SSH host keys and the application-keyed
// hash of the machine ID it cleared (the form the reports give), never a
// key or the ID itself. With it, a clone
// that still carries the template's identity is named precisely.
package sealrecord

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/appid"
)

// Path is where the record lives in the image.
const Path = "/var/lib/sealprep/template.json"

// SchemaVersion is the record's format version, under the key every
// report uses. Version 1 records (sealprep before it) have the key
// "schema" and a plain SHA-256 of the machine ID; Parse reads both, and
// Marshal writes this version.
const SchemaVersion = 2

// legacySchema is the version of records with the key "schema".
const legacySchema = 1

// maxSize bounds what a reader accepts: a record is a few hundred bytes.
const maxSize = 64 << 10

// machineIDDomain separated version 1's plain SHA-256 of a machine ID
// from any other.
const machineIDDomain = "sealprep-machine-id:"

// HostKey is one host key of the template, by fingerprint.
type HostKey struct {
	File        string `json:"file"`        // /etc/ssh/ssh_host_ed25519_key
	Type        string `json:"type"`        // ssh-ed25519
	Fingerprint string `json:"fingerprint"` // SHA256:... as ssh-keygen -lf prints it
}

// Record is the content of Path.
type Record struct {
	SchemaVersion int `json:"schema_version,omitempty"`
	// Schema is version 1's key for the version, read and never written.
	Schema          int       `json:"schema,omitempty"`
	SealedAt        time.Time `json:"sealed_at"`
	SealprepVersion string    `json:"sealprep_version"`
	// HostKeys are the template's keys; HostKeysRemoved says whether
	// ssh-host-keys removed them (false: --ops -ssh-host-keys left them
	// in the image, and every clone has them).
	HostKeys        []HostKey `json:"ssh_host_keys"`
	HostKeysRemoved bool      `json:"ssh_host_keys_removed"`
	// MachineIDHash is HashMachineID of the template's ID, "" when it
	// had none; MachineIDSHA256 is what a version 1 record holds
	// instead (LegacyHashMachineID), never computed anew: kept only when
	// a record it was read from is rewritten after the ID is gone.
	// MachineIDCleared says whether machine-id emptied it.
	MachineIDHash    string `json:"machine_id_hmac,omitempty"`
	MachineIDSHA256  string `json:"machine_id_sha256,omitempty"`
	MachineIDCleared bool   `json:"machine_id_cleared"`
	// Operations are the IDs of the operations apply ran, in its order,
	// and MachineIDMode the --machine-id-mode it ran with: what a later
	// verify checks. Records of older sealprep versions have neither.
	Operations    []string `json:"operations,omitempty"`
	MachineIDMode string   `json:"machine_id_mode,omitempty"`
	// Kept are the default operations --ops dropped, and Forced the
	// refusals --force passed: what the template keeps by choice (see
	// KeptItems). Records of older sealprep versions have neither.
	Kept   []string `json:"kept,omitempty"`
	Forced []Forced `json:"forced,omitempty"`
}

// Forced is one refusal that --force passed when the record was written.
type Forced struct {
	// Op is the operation refused, or "preflight" for the root as a whole;
	// Path what it was about, when it named one.
	Op   string `json:"op"`
	Path string `json:"path,omitempty"`
	// Reason is the refusal's reason, which says what clones get from it.
	Reason string `json:"reason"`
}

// HashMachineID is the record's form of a machine ID: its
// application-specific ID (appid.MachineIDHash), as every report gives
// machine_id_hash (the record's key is machine_id_hmac: that one is the
// report's alone), so that a record and a report compare; "" when id is
// not a machine ID. The ID is 128 random bits, so the hash cannot be
// reversed by guessing; it only tells whether a clone's ID is the
// template's.
func HashMachineID(id string) string {
	h, _ := appid.MachineIDHash(id)
	return h
}

// LegacyHashMachineID is a version 1 record's form of a machine ID: the
// hex SHA-256 of a fixed prefix and the lowercase ID.
func LegacyHashMachineID(id string) string {
	s := sha256.Sum256([]byte(machineIDDomain + strings.ToLower(strings.TrimSpace(id))))
	return hex.EncodeToString(s[:])
}

// IDHash is a machine ID in both forms a record may hold it in, so that
// it can be compared with a record of either version without keeping
// the ID itself.
type IDHash struct{ Hash, LegacySHA256 string }

// HashID is id in both forms; zero when id is empty.
func HashID(id string) IDHash {
	if strings.TrimSpace(id) == "" {
		return IDHash{}
	}
	return IDHash{Hash: HashMachineID(id), LegacySHA256: LegacyHashMachineID(id)}
}

// HasMachineID reports whether the record holds the template's machine
// ID, in either form.
func (r Record) HasMachineID() bool { return r.MachineIDHash != "" || r.MachineIDSHA256 != "" }

// MachineIDIs reports whether h is the template's machine ID as the
// record holds it, in the form its version wrote.
func (r Record) MachineIDIs(h IDHash) bool {
	switch {
	case r.MachineIDHash != "":
		return h.Hash == r.MachineIDHash
	case r.MachineIDSHA256 != "":
		return h.LegacySHA256 == r.MachineIDSHA256
	}
	return false
}

var (
	fpRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^SHA256:[A-Za-z0-9+/]{43}$`) })
	hashRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{32}$`) })
	shaRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })
	opRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`) })
)

// Parse reads a record, rejecting anything that is not one: unknown
// fields, a future schema, malformed fingerprints or hashes. Errors name
// the path and, for JSON syntax, the line.
func Parse(b []byte) (Record, error) {
	var r Record
	if len(b) > maxSize {
		return r, fmt.Errorf("%s: %d bytes, more than a record can be", Path, len(b))
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		line := 1
		if se, ok := err.(*json.SyntaxError); ok {
			line += bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n"))
		}
		return Record{}, fmt.Errorf("%s:%d: %v", Path, line, err)
	}
	if d.More() {
		return Record{}, fmt.Errorf("%s: data after the record", Path)
	}
	switch {
	case r.SchemaVersion == 0 && r.Schema == legacySchema:
		// Written by sealprep before schema_version 2: its hash is the
		// plain SHA-256, and nothing else differs.
		if r.MachineIDHash != "" {
			return Record{}, fmt.Errorf("%s: schema 1 with machine_id_hmac, which only schema_version 2 has", Path)
		}
	case r.Schema != 0:
		return Record{}, fmt.Errorf("%s: schema %d, this build reads schema 1 and schema_version %d", Path, r.Schema, SchemaVersion)
	case r.SchemaVersion != SchemaVersion:
		return Record{}, fmt.Errorf("%s: schema_version %d, this build reads %d", Path, r.SchemaVersion, SchemaVersion)
	}
	// A version 2 record may still hold machine_id_sha256: rewritten
	// from a version 1 record after the ID was cleared, nothing is left
	// to hash anew.
	if r.SealedAt.IsZero() {
		return Record{}, fmt.Errorf("%s: no sealed_at", Path)
	}
	for _, k := range r.HostKeys {
		if !fpRE().MatchString(k.Fingerprint) {
			return Record{}, fmt.Errorf("%s: host key %q: fingerprint %q is not SHA256:<base64>", Path, k.File, k.Fingerprint)
		}
	}
	if r.MachineIDSHA256 != "" && !shaRE().MatchString(r.MachineIDSHA256) {
		return Record{}, fmt.Errorf("%s: machine_id_sha256 is not 64 lowercase hex digits", Path)
	}
	if r.MachineIDHash != "" && !hashRE().MatchString(r.MachineIDHash) {
		return Record{}, fmt.Errorf("%s: machine_id_hmac is not 32 lowercase hex digits", Path)
	}
	for _, op := range r.Operations {
		if !opRE().MatchString(op) {
			return Record{}, fmt.Errorf("%s: operation %q is not an operation ID", Path, op)
		}
	}
	if m := r.MachineIDMode; m != "" && m != "empty" && m != "uninitialized" {
		return Record{}, fmt.Errorf("%s: machine_id_mode %q is neither empty nor uninitialized", Path, m)
	}
	if err := r.checkKept(); err != nil {
		return Record{}, fmt.Errorf("%s: %v", Path, err)
	}
	return r, nil
}

// Marshal is the file's content: indented JSON with the keys sorted by
// file, ending in a newline, in this version (a version 1 record's hash
// is kept as it is: the ID it hashed is gone).
func (r Record) Marshal() []byte {
	r.SchemaVersion, r.Schema = SchemaVersion, 0
	r.SealedAt = r.SealedAt.UTC().Truncate(time.Second)
	keys := append([]HostKey(nil), r.HostKeys...)
	sort.Slice(keys, func(i, j int) bool { return keys[i].File < keys[j].File })
	r.HostKeys = keys
	if r.HostKeys == nil {
		r.HostKeys = []HostKey{}
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return append(b, '\n')
}

// SameIdentity reports whether r and o record the same keys, ID and
// outcome, whatever their time and version.
func (r Record) SameIdentity(o Record) bool {
	r.SealedAt, o.SealedAt = time.Time{}, time.Time{}
	r.SealprepVersion, o.SealprepVersion = "", ""
	return bytes.Equal(r.Marshal(), o.Marshal())
}

// KeyByFingerprint returns the recorded key with fingerprint fp.
func (r Record) KeyByFingerprint(fp string) (HostKey, bool) {
	for _, k := range r.HostKeys {
		if k.Fingerprint == fp {
			return k, true
		}
	}
	return HostKey{}, false
}

// Describe is the record in a few words for findings: "sealed at
// 2026-12-01T10:00:00Z by sealprep v1.2".
func (r Record) Describe() string {
	return "sealed at " + r.SealedAt.UTC().Format(time.RFC3339) + " by sealprep " + r.SealprepVersion
}
