package seal

import (
	"context"
	"path"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
)

var opTemplateRecord = Operation{
	ID:      "template-record",
	Default: true,
	Summary: "write " + sealrecord.Path + ": fingerprints of the host keys and a hash of the machine ID, so guestcheck can name clones that kept them",
	Doc: Doc{
		What: "writes `/var/lib/sealprep/template.json` (mode 0644) before `ssh-host-keys` and " +
			"`machine-id` run: the SHA-256 fingerprints of `/etc/ssh/ssh_host_*` and the hash of " +
			"`/etc/machine-id` that reports give as `machine_id_hash`, with the seal time and sealprep version; see [The template " +
			"record](#the-template-record)",
		Why: "guestcheck's `ssh` and `network-identity` checks then name a clone that still has the " +
			"template's host keys or machine ID, and the seal that left them",
	},
	Plan: planTemplateRecord,
}

const templateRecordReason = "guestcheck's ssh and network-identity checks name a clone that still has the template's host keys or machine ID from this record, and verify reads the operations and machine-id mode to check from it; it holds fingerprints and a hash, no secret"

// templateRecordTidy is why the record's actions are never identity left
// in the image: verify reports a missing or stale record as a warning.
const templateRecordTidy = "sealprep's own record of the seal"

// planTemplateRecord plans the record of what the template's identity
// was. It runs before ssh-host-keys and machine-id, and reads what they
// are about to clear. Once they have, nothing is left to read: the
// recorded values are carried over, so a re-plan (verify) after apply
// plans nothing, while a key or ID present in the image that the record
// does not hold is planned as a new record. It also records what the seal
// keeps by choice: the default operations --ops dropped and the refusals
// --force passed (MakePlan plans it last, so that all are known).
func planTemplateRecord(ctx context.Context, p *Planner) ([]Action, error) {
	keys, err := p.templateHostKeys()
	if err != nil {
		return nil, err
	}
	mid := p.templateMachineIDHash()

	// The directory is sealprep's own: a symlink or other file in its
	// place is left for a person to look at, never written through.
	dirActs, ok, err := p.mkdirAll(path.Dir(sealrecord.Path), "holds sealprep's template record")
	if err != nil || !ok {
		return nil, err
	}
	e, exists, err := p.lstat(sealrecord.Path)
	if err != nil {
		return nil, err
	}
	var old []byte
	var rec *sealrecord.Record
	if exists {
		if e.Kind != fs.KindRegular {
			p.Note(sealrecord.Path, "is a %s, not a regular file", kindNoun(e.Kind))
			return nil, nil
		}
		t := identity.ReadTemplate(p.Root)
		if err := readFailed(t.ReadErr); err != nil {
			return nil, err
		}
		old, rec = t.Raw, t.Record
		if t.ParseErr != nil {
			p.Note(sealrecord.Path, "not a valid record, replaced: %v", t.ParseErr)
		}
	}
	want := sealrecord.Record{HostKeys: keys, MachineIDHash: mid,
		Operations: p.opIDs, MachineIDMode: string(p.Opts.MachineIDMode), Kept: p.Opts.kept, Forced: p.forced}
	if rec != nil {
		if len(keys) == 0 {
			want.HostKeys = rec.HostKeys
		}
		if mid == "" {
			// Either form: a version 1 record's hash cannot be made anew.
			want.MachineIDHash, want.MachineIDSHA256 = rec.MachineIDHash, rec.MachineIDSHA256
		}
		want.Forced = p.carryForced(rec.Forced)
	}
	want.HostKeysRemoved = len(keys) == 0 || p.selected[opSSHHostKeys.ID]
	want.MachineIDCleared = mid == "" || p.selected[opMachineID.ID]
	if p.Opts.verify && rec != nil {
		// Verify asks whether the record is true of the root, not what
		// an apply with verify's --ops would write: the choices are
		// apply's, and the outcome is what the root shows.
		want.Operations, want.MachineIDMode, want.Kept, want.Forced = rec.Operations, rec.MachineIDMode, rec.Kept, rec.Forced
		want.HostKeysRemoved, want.MachineIDCleared = len(keys) == 0, mid == ""
	}
	if len(want.HostKeys) == 0 && !want.HasMachineID() && len(want.Kept)+len(want.Forced) == 0 {
		if exists && rec == nil {
			return []Action{{Kind: Remove, Path: sealrecord.Path, Kinds: regular,
				Reason: "a malformed record misleads guestcheck, and nothing is left in the image to write a good one from"}}, nil
		}
		if !exists {
			p.Note(sealrecord.Path, "not written: the image has no host keys and no machine ID left to record")
		}
		return nil, nil
	}
	if rec != nil && rec.SameIdentity(want) {
		return nil, nil
	}
	want.SealedAt = p.Opts.Now
	if want.SealedAt.IsZero() {
		want.SealedAt = time.Now()
	}
	want.SealprepVersion = p.Opts.Version
	tidy := recordTidy(exists, rec, want)
	for i := range dirActs {
		dirActs[i].Tidy = tidy
	}
	return append(dirActs, Action{Kind: WriteFile, Path: sealrecord.Path, Mode: 0o644, Content: string(want.Marshal()),
		Expect: fs.SHA256(old), Links: links(e), Reason: templateRecordReason, Tidy: tidy}), nil
}

// recordTidy is the Tidy of a record write: the record is sealprep's own,
// never identity, so a missing one, or one that records other operations,
// another machine-id mode or other choices kept, is only a warning for
// verify. One that
// records other keys, another machine ID or another outcome, or does not
// parse, misleads guestcheck on every clone: that is not tidy.
func recordTidy(exists bool, rec *sealrecord.Record, want sealrecord.Record) string {
	if exists && rec == nil {
		return ""
	}
	if rec != nil {
		want.Operations, want.MachineIDMode = rec.Operations, rec.MachineIDMode
		want.Kept, want.Forced = rec.Kept, rec.Forced
		if !rec.SameIdentity(want) {
			return ""
		}
	}
	return templateRecordTidy
}

// templateHostKeys fingerprints /etc/ssh/ssh_host_*, one entry per key,
// as identity.HostKey.Identity gives it. Key bodies are never read here.
func (p *Planner) templateHostKeys() ([]sealrecord.HostKey, error) {
	ents, err := p.readDir("/etc/ssh")
	if err != nil {
		return nil, err
	}
	var out []sealrecord.HostKey
	seen := map[string]bool{}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name, "ssh_host_") || (e.Kind != fs.KindRegular && e.Kind != fs.KindSymlink) {
			continue
		}
		base := path.Join("/etc/ssh", strings.TrimSuffix(e.Name, ".pub"))
		if seen[base] {
			continue
		}
		seen[base] = true
		typ, fp, ok := identity.ReadHostKey(p.Root, base).Identity()
		if !ok {
			p.Note(base, "not in the template record: neither the key nor its .pub parses")
			continue
		}
		out = append(out, sealrecord.HostKey{File: base, Type: typ, Fingerprint: fp})
	}
	return out, nil
}

// templateMachineIDHash is the hashed ID in /etc/machine-id, or "" when
// it holds none (empty, "uninitialized", missing).
func (p *Planner) templateMachineIDHash() string {
	f := identity.ReadFile(p.Root, identity.MachineIDPath)
	if !f.Found || !f.Kind.HoldsID() {
		return ""
	}
	return sealrecord.HashMachineID(string(f.Content))
}

// mkdirAll plans the missing directories of dir, outermost first; false
// (noted) when a component is not a directory.
func (p *Planner) mkdirAll(dir, reason string) ([]Action, bool, error) {
	var missing []string
	for d := dir; d != "/" && d != "."; d = path.Dir(d) {
		e, ok, err := p.lstat(d)
		if err != nil {
			return nil, false, err
		}
		if ok {
			if e.Kind != fs.KindDir {
				p.Note(d, "is a %s, not a directory; %s not written", kindNoun(e.Kind), sealrecord.Path)
				return nil, false, nil
			}
			break
		}
		missing = append(missing, d)
	}
	var out []Action
	for i := len(missing) - 1; i >= 0; i-- {
		out = append(out, Action{Kind: Mkdir, Path: missing[i], Mode: 0o755, Reason: reason})
	}
	return out, true, nil
}
