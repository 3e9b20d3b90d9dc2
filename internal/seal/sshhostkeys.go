package seal

import (
	"context"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
)

var opSSHHostKeys = Operation{
	ID:      "ssh-host-keys",
	Default: true,
	Summary: "remove /etc/ssh/ssh_host_*; install a first-boot ssh-keygen unit when nothing else regenerates them",
	Kept:    keptMany("ssh host keys"),
	Doc: Doc{
		What: "removes `/etc/ssh/ssh_host_*` (regular files and symlinks) when something regenerates " +
			"them at first boot: cloud-init with its `ssh` module (and key types not emptied), an " +
			"`sshd-keygen@.service`/`sshd-keygen.target` unit (RHEL, Fedora), an ssh unit running " +
			"`ssh-keygen -A` or `sshd-gen-keys-start` (SUSE, Arch). Otherwise, with sshd, systemd and " +
			"`ssh-keygen` present (Debian, Ubuntu without cloud-init), it first installs and enables " +
			"`/etc/systemd/system/sealprep-ssh-keygen.service`, a oneshot `ssh-keygen -A` ordered " +
			"before `ssh.service`/`sshd.service`; it creates only missing keys, so it is a no-op on " +
			"later boots. Otherwise it refuses (see above)",
		Why: "shared host keys let clones impersonate each other; removing them with nothing to " +
			"regenerate them leaves sshd dead",
	},
	Plan: planSSHHostKeys,
}

func planSSHHostKeys(ctx context.Context, p *Planner) ([]Action, error) {
	var keys []fs.Entry
	ents, err := p.readDir("/etc/ssh")
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name, "ssh_host_") {
			keys = append(keys, e)
		}
	}
	sshd := p.exists("/usr/sbin/sshd")
	var out []Action
	if sshd || len(keys) > 0 {
		regen, err := p.sshRegenerator()
		if err != nil {
			return nil, err
		}
		switch {
		case regen != "":
			if len(keys) > 0 {
				p.Note("/etc/ssh", "host keys are regenerated at first boot by %s", regen)
			}
		case sshd && p.exists("/usr/bin/ssh-keygen") && identity.SystemdPresent(p.Root):
			acts, err := p.keygenUnitActions()
			if err != nil {
				return nil, err
			}
			out = append(out, acts...)
		default:
			// With keys or without: clones of this image boot an sshd
			// that has none and cannot start.
			if !p.RefuseFix("/etc/ssh", true, "sshd would not start on clones: nothing makes SSH host keys at first boot (no cloud-init ssh module, no sshd-keygen unit)",
				"install cloud-init, or ssh-keygen and systemd (sealprep then adds its own key unit), or drop the operation (--ops -ssh-host-keys), or --force") {
				return nil, nil
			}
		}
	}
	for _, e := range keys {
		out = append(out, p.removeEntryQuiet(path.Join("/etc/ssh", e.Name), e, regularLink,
			"host keys identify the machine: clones sharing them can impersonate each other")...)
	}
	return out, nil
}

// removeEntryQuiet is removeEntry for single files, where a kind mismatch
// is still worth a note.
func (p *Planner) removeEntryQuiet(name string, e fs.Entry, kinds fs.Kinds, reason string) []Action {
	if !kinds.Has(e.Kind) {
		p.Note(name, "is a %s", kindNoun(e.Kind))
		return nil
	}
	return []Action{{Kind: Remove, Path: name, Kinds: kinds, Reason: reason}}
}

// sshRegenerator names what regenerates host keys at first boot, or ""
// (identity.SSHRegenerator, as guestcheck's ssh check asks it), noting a
// cloud-init configuration that cannot be read.
func (p *Planner) sshRegenerator() (string, error) {
	cloudKeys := false
	if p.cloudInitEnabled() {
		cc, err := p.cloudConfig()
		if err != nil {
			p.Note("/etc/cloud/cloud.cfg", "cannot read cloud-init configuration: %v", err)
		} else {
			cloudKeys = cc.SSHModule && cc.KeyTypes
		}
	}
	return identity.SSHRegenerator(p.Root, cloudKeys), nil
}

// keygenUnitActions plans installing and enabling sealprep's unit, each
// piece only when it is not already in place.
func (p *Planner) keygenUnitActions() ([]Action, error) {
	const why = "nothing else regenerates the removed host keys at first boot; sshd would not start without them"
	var out []Action
	e, ok, err := p.lstat(identity.KeygenUnitPath)
	if err != nil {
		return nil, err
	}
	switch {
	case !ok:
		out = append(out, Action{Kind: WriteFile, Path: identity.KeygenUnitPath, Mode: 0o644, Content: identity.KeygenUnit, Expect: fs.SHA256(nil), Reason: why})
	case e.Kind == fs.KindRegular:
		b, _, err := p.readFile(identity.KeygenUnitPath)
		if err != nil {
			return nil, err
		}
		if string(b) != identity.KeygenUnit {
			out = append(out, Action{Kind: WriteFile, Path: identity.KeygenUnitPath, Mode: 0o644, Content: identity.KeygenUnit, Expect: fs.SHA256(b), Reason: why})
		}
	default:
		p.Refuse(identity.KeygenUnitPath, false, "cannot install the host-key unit: %s is a %s", identity.KeygenUnitPath, kindNoun(e.Kind))
		return nil, nil
	}
	w, ok, err := p.lstat(identity.KeygenWantsDir)
	if err != nil {
		return nil, err
	}
	if !ok {
		out = append(out, Action{Kind: Mkdir, Path: identity.KeygenWantsDir, Mode: 0o755, Reason: "to enable " + identity.KeygenUnitName})
	} else if w.Kind != fs.KindDir {
		p.Refuse(identity.KeygenWantsDir, false, "cannot enable the host-key unit: %s is a %s", identity.KeygenWantsDir, kindNoun(w.Kind))
		return nil, nil
	}
	link := identity.KeygenWantsDir + "/" + identity.KeygenUnitName
	if t, err := p.Root.Readlink(link); err != nil || t != identity.KeygenUnitPath {
		out = append(out, Action{Kind: Symlink, Path: link, Target: identity.KeygenUnitPath, Kinds: fs.KindsOf(fs.KindSymlink), Reason: "enables " + identity.KeygenUnitName})
	}
	return out, nil
}
