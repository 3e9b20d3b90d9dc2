package seal

import (
	"context"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fs"
)

var opSSHHostKeys = Operation{
	ID:      "ssh-host-keys",
	Default: true,
	Summary: "remove /etc/ssh/ssh_host_*; install a first-boot ssh-keygen unit when nothing else regenerates them",
	Plan:    planSSHHostKeys,
}

// keygenUnit is the unit sealprep installs when the template has sshd and
// systemd but nothing that regenerates host keys (Debian or Ubuntu
// without cloud-init). ssh-keygen -A only creates missing keys, so it is
// a no-op on every later boot.
const (
	keygenUnitName = "sealprep-ssh-keygen.service"
	keygenUnitPath = "/etc/systemd/system/" + keygenUnitName
	keygenWantsDir = "/etc/systemd/system/multi-user.target.wants"
	keygenUnit     = `# Installed by sealprep: this template's SSH host keys were removed and
# nothing else on it regenerates them. ssh-keygen -A creates only the
# missing keys, so this is a no-op once they exist.
[Unit]
Description=Generate missing SSH host keys (installed by sealprep)
Before=ssh.service sshd.service

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -A

[Install]
WantedBy=multi-user.target
`
)

var unitDirs = []string{"/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"}

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
		case sshd && p.exists("/usr/bin/ssh-keygen") && p.systemdPresent():
			acts, err := p.keygenUnitActions()
			if err != nil {
				return nil, err
			}
			out = append(out, acts...)
		case len(keys) > 0:
			if !p.Refuse("/etc/ssh", true, "nothing on this image regenerates SSH host keys at first boot (no cloud-init ssh module, no sshd-keygen unit, and no systemd and ssh-keygen for sealprep's own unit); sshd would not start on clones. Drop the operation with --ops -ssh-host-keys, or --force") {
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
		p.Note(name, "left alone: is a %s", e.Kind)
		return nil
	}
	return []Action{{Kind: Remove, Path: name, Kinds: kinds, Reason: reason}}
}

// sshRegenerator names what regenerates host keys at first boot, or "".
func (p *Planner) sshRegenerator() (string, error) {
	if p.cloudInitEnabled() {
		cc, err := p.cloudConfig()
		if err != nil {
			p.Note("/etc/cloud/cloud.cfg", "cannot read cloud-init configuration: %v", err)
		} else if cc.SSHModule && cc.KeyTypes {
			return "cloud-init's ssh module (cc_ssh)", nil
		}
	}
	for _, d := range unitDirs {
		ents, err := p.Root.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := path.Join(d, e.Name)
			if e.Kind != fs.KindRegular && e.Kind != fs.KindSymlink {
				continue
			}
			if p.unitMasked(e.Name) {
				continue
			}
			switch {
			case e.Name == "sshd-keygen@.service" || e.Name == "sshd-keygen.target" || e.Name == "sshd-keygen.service":
				return "the " + e.Name + " unit", nil
			case e.Name == keygenUnitName:
				if p.keygenUnitInstalled() {
					return "sealprep's " + keygenUnitName, nil
				}
			case strings.HasPrefix(e.Name, "ssh") && strings.HasSuffix(e.Name, ".service"):
				b, ok, err := p.readFile(name)
				if err != nil || !ok {
					continue
				}
				if s := string(b); strings.Contains(s, "ssh-keygen -A") || strings.Contains(s, "sshd-gen-keys-start") {
					return e.Name + " (runs ssh-keygen -A)", nil
				}
			}
		}
	}
	return "", nil
}

// unitMasked reports whether /etc/systemd/system/name links to /dev/null.
func (p *Planner) unitMasked(name string) bool {
	t, err := p.Root.Readlink("/etc/systemd/system/" + name)
	return err == nil && t == "/dev/null"
}

func (p *Planner) keygenUnitInstalled() bool {
	b, ok, _ := p.readFile(keygenUnitPath)
	if !ok || string(b) != keygenUnit {
		return false
	}
	t, err := p.Root.Readlink(keygenWantsDir + "/" + keygenUnitName)
	return err == nil && t == keygenUnitPath
}

// keygenUnitActions plans installing and enabling sealprep's unit, each
// piece only when it is not already in place.
func (p *Planner) keygenUnitActions() ([]Action, error) {
	const why = "nothing else regenerates the removed host keys at first boot; sshd would not start without them"
	var out []Action
	e, ok, err := p.lstat(keygenUnitPath)
	if err != nil {
		return nil, err
	}
	switch {
	case !ok:
		out = append(out, Action{Kind: WriteFile, Path: keygenUnitPath, Mode: 0o644, Content: keygenUnit, Expect: fs.SHA256(nil), Reason: why})
	case e.Kind == fs.KindRegular:
		b, _, err := p.readFile(keygenUnitPath)
		if err != nil {
			return nil, err
		}
		if string(b) != keygenUnit {
			out = append(out, Action{Kind: WriteFile, Path: keygenUnitPath, Mode: 0o644, Content: keygenUnit, Expect: fs.SHA256(b), Reason: why})
		}
	default:
		p.Refuse(keygenUnitPath, false, "cannot install the host-key unit: %s is a %s", keygenUnitPath, e.Kind)
		return nil, nil
	}
	w, ok, err := p.lstat(keygenWantsDir)
	if err != nil {
		return nil, err
	}
	if !ok {
		out = append(out, Action{Kind: Mkdir, Path: keygenWantsDir, Mode: 0o755, Reason: "to enable " + keygenUnitName})
	} else if w.Kind != fs.KindDir {
		p.Refuse(keygenWantsDir, false, "cannot enable the host-key unit: %s is a %s", keygenWantsDir, w.Kind)
		return nil, nil
	}
	link := keygenWantsDir + "/" + keygenUnitName
	if t, err := p.Root.Readlink(link); err != nil || t != keygenUnitPath {
		out = append(out, Action{Kind: Symlink, Path: link, Target: keygenUnitPath, Kinds: fs.KindsOf(fs.KindSymlink), Reason: "enables " + keygenUnitName})
	}
	return out, nil
}
