package seal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/netconf"
)

var opMachineID = Operation{
	ID:      "machine-id",
	Default: true,
	Summary: "empty /etc/machine-id in place (0444); make a regular /var/lib/dbus/machine-id a symlink to it; drop DUIDRawData= from networkd.conf and its drop-ins",
	Kept:    keptOne("the machine ID"),
	Doc: Doc{
		Tag: "runs last",
		What: "`/etc/machine-id`: emptied in place, mode 0444 (`--machine-id-mode empty`), or " +
			"`uninitialized\\n` with mode 0444 (`--machine-id-mode uninitialized`); an `uninitialized` " +
			"file is kept under `empty`; created if missing on a systemd image. A regular " +
			"`/var/lib/dbus/machine-id` becomes a symlink to `/etc/machine-id` (an existing link is " +
			"left alone). A symlinked `/etc/machine-id` is judged by the file it ends at: one in the " +
			"image is sealed in place like the regular file (the link stays); a link to `/run` that " +
			"the image does not hold is left alone (systemd writes a new ID there at every boot); a " +
			"link to a missing file elsewhere is refused (systemd can create it only on a writable " +
			"file system)",
		Why: "every clone must generate its own ID at boot: DHCP DUIDs, journal directories and IPv6 " +
			"addresses derive from it. systemd falls back to a regular D-Bus copy, which would " +
			"resurrect the old ID",
	},
	Plan: planMachineID,
}

const machineIDReason = "every clone must generate its own machine ID at first boot: DHCP DUIDs, journal directories and IPv6 addresses derive from it"

func planMachineID(ctx context.Context, p *Planner) ([]Action, error) {
	out, err := planMachineIDFiles(p)
	if err != nil {
		return nil, err
	}
	raw, err := p.networkdRawDUID()
	return append(out, raw...), err
}

// networkdRawDUID drops DUIDRawData= from networkd.conf and its drop-ins
// (the catalogue's networkd-duid item): the DUID networkd presents is
// otherwise derived from the machine ID, which this operation renews,
// but a raw one pinned there is every clone's.
func (p *Planner) networkdRawDUID() ([]Action, error) {
	var out []Action
	for _, u := range netconf.ReadFacts(p.Root).NetworkdConf {
		if !u.OK || !slices.ContainsFunc(u.INI.Entries, isRawDUID) {
			continue
		}
		acts, err := p.rewritePath(u.Path, "a DUIDRawData= pinned in the template makes every clone present one DHCP DUID", func(b []byte) []byte {
			return stripUnitEntries(b, isRawDUID)
		})
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	return out, nil
}

// isRawDUID is a DUIDRawData= of the DHCP client's sections ([DHCP] is
// [DHCPv4]'s old name).
func isRawDUID(e netconf.INIEntry) bool {
	return e.Key == "DUIDRawData" && (e.Section == "DHCPv4" || e.Section == "DHCPv6" || e.Section == "DHCP")
}

// planMachineIDFiles plans /etc/machine-id and its D-Bus copy.
func planMachineIDFiles(p *Planner) ([]Action, error) {
	var out []Action
	mid := identity.ReadMachineID(p.Root)
	// The D-Bus copy first: systemd falls back to a regular
	// /var/lib/dbus/machine-id when /etc/machine-id is empty, which would
	// resurrect the old ID. A symlink is what Debian and kiwi install.
	dbus := identity.DBusMachineIDPath
	e, ok, err := p.lstat(dbus)
	if err != nil {
		return nil, err
	}
	if ok {
		switch e.Kind {
		case fs.KindRegular:
			if err := readFailed(mid.DBus.Err); err != nil {
				return nil, err
			}
			a := Action{Kind: Symlink, Path: dbus, Target: identity.MachineIDPath, Kinds: regular, Links: links(e),
				Reason: "a regular copy of the old ID is what systemd falls back to when /etc/machine-id is empty"}
			if !identity.Classify(mid.DBus.Content).HoldsID() {
				// Both systemd and libdbus skip a copy that is not an ID.
				a.Tidy = "it holds no machine ID, so neither systemd nor D-Bus uses it"
				a.Reason = "systemd and D-Bus read a regular copy before or instead of /etc/machine-id; a link keeps the two in step"
			}
			out = append(out, a)
		case fs.KindSymlink:
			// Already a link (Debian's default): it follows /etc/machine-id.
		default:
			p.Note(dbus, "is a %s", kindNoun(e.Kind))
		}
	}

	etc := identity.MachineIDPath
	e, ok, err = p.lstat(etc)
	if err != nil {
		return nil, err
	}
	mode := p.Opts.MachineIDMode
	want := ""
	switch mode {
	case MachineIDEmpty:
	case MachineIDUninitialized:
		want = "uninitialized\n"
		if v := p.systemdMajor(); v != 0 && v < 247 {
			p.Note(etc, "systemd %d predates 247, which first treats \"uninitialized\" as a first boot; it will still generate a new ID", v)
		}
	default:
		return nil, fmt.Errorf("unknown machine-id mode %q", mode)
	}
	switch {
	case !ok:
		if !identity.SystemdPresent(p.Root) {
			return out, nil
		}
		return append(out, missingMachineID(identity.ReadRootMode(p.Root), want)), nil
	case e.Kind == fs.KindSymlink:
		return p.planMachineIDLink(out, mid.Etc, want)
	case e.Kind != fs.KindRegular:
		p.Note(etc, "is a %s, not a regular file", kindNoun(e.Kind))
	default:
		if err := readFailed(mid.Etc.Err); err != nil {
			return nil, err
		}
		out = append(out, p.planMachineIDFile(etc, e, mid.Etc.Content, want)...)
	}
	return out, nil
}

// planMachineIDLink plans a symlinked /etc/machine-id. systemd reads
// the file the link ends at, so that file is what clones would share: one
// in the image is sealed in place as a regular /etc/machine-id is (the
// link stays, being the image's layout). A link to /run is left alone:
// the tmpfs is empty at every boot, so each boot gets a new ID. A link to
// a missing file elsewhere is refused: systemd can create it only if its
// file system is writable at boot.
func (p *Planner) planMachineIDLink(out []Action, f identity.File, want string) ([]Action, error) {
	etc := identity.MachineIDPath
	switch {
	case f.Target == "":
		p.Note(etc, "a symlink that cannot be resolved")
	case f.Transient():
		p.Note(etc, "links to %s, outside the image, where systemd writes a new ID at every boot", f.Target)
	case !f.Found && f.Err == nil:
		if !p.RefuseFix(etc, true, fmt.Sprintf("%s links to %s, which is missing: systemd can create it at boot only on a writable file system", etc, f.Target),
			fmt.Sprintf("replace the link with an empty file (: > %s)", etc)) {
			return out, nil
		}
	default:
		if err := readFailed(f.Err); err != nil {
			return nil, err
		}
		te, ok, err := p.lstat(f.Target)
		if err != nil {
			return nil, err
		}
		if !ok || te.Kind != fs.KindRegular {
			p.Note(etc, "links to %s, which is not a regular file", f.Target)
			return out, nil
		}
		p.Note(etc, "a symlink to %s: that file is sealed in its place", f.Target)
		out = append(out, p.planMachineIDFile(f.Target, te, f.Content, want)...)
	}
	return out, nil
}

// missingMachineID plans writing a missing /etc/machine-id. systemd
// creates a missing file at boot only when the root is writable then;
// with a read-only root it stops the boot.
func missingMachineID(boot identity.RootMode, want string) Action {
	a := Action{Kind: WriteFile, Path: identity.MachineIDPath, Mode: 0o444, Content: want, Expect: fs.SHA256(nil)}
	if boot.MissingMachineIDFatal() {
		a.Reason = "/etc/machine-id is missing and the root is read-only when systemd starts (" + boot.Why +
			"): systemd cannot create the file and refuses to boot"
	} else {
		a.Reason = "a missing /etc/machine-id is fatal if the image ever boots with a read-only root; the file is written so that it is not"
		a.Tidy = "missing, and " + boot.Why + ": systemd creates a new ID at boot, and it is a first boot"
	}
	return a
}

// readFailed is err when it stops the plan: absence, an unresolvable
// path and a file of another kind are what lstat already reported.
func readFailed(err error) error {
	if err == nil || absent(err) || unresolvable(err) || errors.Is(err, fs.ErrKind) {
		return nil
	}
	return err
}

// planMachineIDFile plans the regular /etc/machine-id holding b toward
// want ("" or "uninitialized\n"), with mode 0444. Only a valid ID is
// identity; every other change is tidy.
func (p *Planner) planMachineIDFile(etc string, e fs.Entry, b []byte, want string) []Action {
	modeTidy := fmt.Sprintf("only the mode (%04o) differs, and systemd does not look at it", e.Perm)
	const modeReason = "systemd creates /etc/machine-id with mode 0444, as a sign that it is not to be edited"
	content := identity.Classify(b)
	if content == identity.Uninitialized && want == "" {
		// Sealed already, and more: a first boot. The default mode does
		// not take that away.
		p.Note(etc, "holds \"uninitialized\": every clone generates a new ID at a first boot; kept, although --machine-id-mode is empty")
		want = string(b)
	}
	var tidy, reason string
	switch {
	case content.HoldsID():
		reason = machineIDReason
		if want != "" {
			reason += "; \"uninitialized\" also marks the first boot"
		}
	case content == identity.Invalid:
		reason = "not a machine ID; it is made to hold what --machine-id-mode asks for"
		tidy = "the content is not a machine ID, so systemd ignores it and writes a new ID at boot"
	case string(b) == want:
		if e.Perm == uint32(identity.MachineIDMode) {
			return nil
		}
		reason, tidy = modeReason, modeTidy
	case content == identity.Empty:
		reason = "--machine-id-mode uninitialized: \"uninitialized\" also marks the first boot"
		tidy = "already empty: systemd generates a new ID at boot"
	default: // "uninitialized" without its newline
		reason = "--machine-id-mode uninitialized: the file is written the way systemd writes it"
		tidy = "already \"uninitialized\": systemd generates a new ID at boot"
	}
	var acts []Action
	if want == "" {
		acts = p.truncateEntry(etc, e, 0o444, reason)
	} else {
		acts = []Action{{Kind: Rewrite, Path: etc, Mode: 0o444, Content: want, Links: links(e),
			Expect: fs.SHA256(b), Reason: reason}}
	}
	for i := range acts {
		acts[i].Tidy = tidy
	}
	return acts
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
