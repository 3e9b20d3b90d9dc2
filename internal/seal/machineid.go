package seal

import (
	"context"
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fs"
)

var opMachineID = Operation{
	ID:      "machine-id",
	Default: true,
	Summary: "empty /etc/machine-id in place (0444); make a regular /var/lib/dbus/machine-id a symlink to it",
	Plan:    planMachineID,
}

const machineIDReason = "every clone must generate its own machine ID at first boot: DHCP DUIDs, journal directories and IPv6 addresses derive from it"

func planMachineID(ctx context.Context, p *Planner) ([]Action, error) {
	var out []Action
	// The D-Bus copy first: systemd falls back to a regular
	// /var/lib/dbus/machine-id when /etc/machine-id is empty, which would
	// resurrect the old ID. A symlink is what Debian and kiwi install.
	const dbus = "/var/lib/dbus/machine-id"
	e, ok, err := p.lstat(dbus)
	if err != nil {
		return nil, err
	}
	if ok {
		switch e.Kind {
		case fs.KindRegular:
			out = append(out, Action{Kind: Symlink, Path: dbus, Target: "/etc/machine-id", Kinds: regular, Links: links(e),
				Reason: "a regular copy of the old ID is what systemd falls back to when /etc/machine-id is empty"})
		case fs.KindSymlink:
			// Already a link (Debian's default): it follows /etc/machine-id.
		default:
			p.Note(dbus, "left alone: is a %s", e.Kind)
		}
	}

	const etc = "/etc/machine-id"
	e, ok, err = p.lstat(etc)
	if err != nil {
		return nil, err
	}
	mode := p.Opts.MachineIDMode
	if mode == MachineIDUninitialized {
		if v := p.systemdMajor(); v != 0 && v < 247 {
			p.Note(etc, "systemd %d predates 247, which first treats \"uninitialized\" as a first boot; it will still generate a new ID", v)
		}
	}
	switch {
	case !ok:
		if !p.systemdPresent() {
			return out, nil
		}
		// Missing means first boot with presets on every systemd, and a
		// fatal error on a read-only /etc; an empty file is the safe state.
		content := ""
		if mode == MachineIDUninitialized {
			content = "uninitialized\n"
		}
		out = append(out, Action{Kind: WriteFile, Path: etc, Mode: 0o444, Content: content, Expect: fs.SHA256(nil),
			Reason: "a missing machine-id triggers first-boot presets and is fatal with a read-only /etc"})
	case e.Kind == fs.KindSymlink:
		p.Note(etc, "left alone: a symlink (its target is managed elsewhere)")
	case e.Kind != fs.KindRegular:
		p.Note(etc, "left alone: is a %s, not a regular file", e.Kind)
	case mode == MachineIDUninitialized:
		b, _, err := p.readFile(etc)
		if err != nil {
			return nil, err
		}
		if string(b) != "uninitialized\n" || e.Perm != 0o444 {
			out = append(out, Action{Kind: Rewrite, Path: etc, Mode: 0o444, Content: "uninitialized\n", Links: links(e),
				Expect: fs.SHA256(b), Reason: machineIDReason + "; \"uninitialized\" also marks the first boot"})
		}
	case mode == MachineIDEmpty:
		out = append(out, p.truncateEntry(etc, e, 0o444, machineIDReason)...)
	default:
		return nil, fmt.Errorf("unknown machine-id mode %q", mode)
	}
	return out, nil
}

// systemdMajor is the target's systemd version, or 0 when unknown. It is
// read from the name of systemd's private library, wherever the
// distribution puts it (Debian: /usr/lib/<triplet>/systemd).
func (p *Planner) systemdMajor() int {
	dirs := []string{"/usr/lib/systemd", "/usr/lib64/systemd", "/lib/systemd"}
	if ents, err := p.Root.ReadDir("/usr/lib"); err == nil {
		for _, e := range ents {
			if e.Kind == fs.KindDir && strings.Contains(e.Name, "-linux") {
				dirs = append(dirs, "/usr/lib/"+e.Name+"/systemd")
			}
		}
	}
	var names []string
	for _, d := range dirs {
		ents, err := p.Root.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			names = append(names, e.Name)
		}
	}
	return systemdVersion(names)
}
