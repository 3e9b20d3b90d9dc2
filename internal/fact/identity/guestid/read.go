package guestid

import (
	"encoding/hex"
	"errors"
	iofs "io/fs"
	"path"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/hostnamefile"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/appid"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/parse/sshdconfig"
)

// Machine-id states besides identity.Kind's names.
const (
	StateMissing    = "missing"
	StateUnreadable = "unreadable"
)

// Bounds on what Read takes from a guest file: a lease file keeps its
// history, everything else is a line or two.
const (
	maxSmallFile = 64 << 10
	maxLeaseFile = 1 << 20
	maxNameLen   = 255
)

// Read reads the guest's identity items through r. live says r is the
// running system's root: then the hostname is the kernel's and
// systemd-networkd's leases under /run count. Interfaces are left empty:
// they come from the kernel, which the caller reads (netstate).
//
// Read never fails: what it cannot read goes to Unread, and a reader that
// can only read and stat files (the guest agent's) still gives every item
// found at a known path.
func Read(r fs.Reader, live bool) Identity {
	id, _ := ReadWithRecordHash(r, live)
	return id
}

// ReadWithRecordHash is Read that also returns the machine-id in the
// forms sealprep's template records hash it (sealrecord.HashID), zero
// when the file holds no ID systemd keeps: sealprep prove compares it
// with the template's ID before the seal. It is a separate return, never
// a field of Identity, so that no report serializing an Identity can
// carry it.
func ReadWithRecordHash(r fs.Reader, live bool) (Identity, sealrecord.IDHash) {
	rd := &reader{r: r}
	id := rd.machineID()
	rd.machineIDFrom(id, live)
	rd.otherMachineIDs()
	rd.hostKeys()
	rd.instanceID()
	rd.hostname(live)
	facts := netconf.ReadFacts(r)
	rd.macBindings(facts)
	rd.dhcpClients(facts, id, live)
	return rd.id, rd.recordHash
}

// reader fills one Identity.
type reader struct {
	r  fs.Reader
	id Identity
	// recordHash is the machine-id as sealrecord hashes it.
	recordHash sealrecord.IDHash
}

func (rd *reader) unread(it Item, msg string) {
	rd.id.Unread = append(rd.id.Unread, string(it)+": "+msg)
}

// readFile reads p up to limit bytes. A missing file is not there (ok
// false, nothing noted); any other error is noted under it.
func (rd *reader) readFile(it Item, p string, limit int64) ([]byte, bool) {
	b, err := rd.r.ReadFileLimit(p, limit)
	switch {
	case err == nil:
		return b, true
	case !errors.Is(err, iofs.ErrNotExist):
		rd.unread(it, fs.ErrorText(p, err))
	}
	return nil, false
}

// listDir lists directory p; a missing one is empty, any other error is
// noted under it (a guest-agent reader lists nothing).
func (rd *reader) listDir(it Item, p string) []fs.Entry {
	es, err := rd.r.ReadDir(p)
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		rd.unread(it, "cannot list "+fs.ErrorText(p, err))
	}
	return es
}

// machineID fills the machine-id state and hashes (the record's under
// the rule sealprep records by: any ID systemd keeps, all zeros too), and
// returns the ID itself (for the DUID systemd-networkd derives from it),
// "" when the file holds none. The ID never leaves this package.
func (rd *reader) machineID() string {
	f := identity.ReadFile(rd.r, identity.MachineIDPath)
	switch {
	case f.Err != nil:
		rd.id.MachineIDState = StateUnreadable
		rd.unread(ItemMachineID, fs.ErrorText(f.Path, f.Err))
		return ""
	case !f.Found:
		rd.id.MachineIDState = StateMissing
		return ""
	}
	rd.id.MachineIDState = f.Kind.String()
	if f.Kind.HoldsID() {
		rd.recordHash = sealrecord.HashID(f.ID())
	}
	if f.Kind != identity.Valid {
		return ""
	}
	h, ok := MachineIDHash(f.ID())
	if !ok {
		return ""
	}
	rd.id.MachineIDHash = h
	return f.ID()
}

// machineIDFrom marks a machine-id that is the VM's firmware UUID, on
// the running system only: an image's root holds no SMBIOS.
func (rd *reader) machineIDFrom(id string, live bool) {
	if !live || id == "" {
		return
	}
	b, err := rd.r.ReadFileLimit(identity.ProductUUIDPath, 128)
	if err != nil {
		return // missing off a VM with SMBIOS; root only
	}
	if slices.Contains(identity.FirmwareMachineIDs(string(b)), strings.ToLower(id)) {
		rd.id.MachineIDFrom = MachineIDFromFirmware
	}
}

// HideUUIDInstanceID moves a UUID-shaped InstanceID into InstanceIDHash,
// as Read records one: for an Identity read from a report of a
// guestcheck that gave the UUID as it is.
func HideUUIDInstanceID(id *Identity) {
	if h, ok := appid.UUIDHash(id.InstanceID); ok {
		id.InstanceID, id.InstanceIDHash = "", h
	}
}

// MachineIDFromFirmware is Identity.MachineIDFrom for a machine-id that
// is the VM's firmware UUID.
const MachineIDFromFirmware = "firmware"

// otherMachineIDs fills the machine IDs held besides /etc/machine-id:
// the D-Bus copy when it is a regular file (libdbus reads it before
// /etc/machine-id; a symlink to it is the same ID), and the IDs the image
// hands systemd at boot (identity.ReadMachineIDPins). Each is hashed as
// /etc/machine-id is, and one equal to it, or listed already, is left
// out.
func (rd *reader) otherMachineIDs() {
	add := func(raw, source string) {
		// systemd also takes an ID in UUID form (sd_id128_from_string).
		if len(raw) == 36 && strings.Count(raw, "-") == 4 {
			raw = strings.ReplaceAll(raw, "-", "")
		}
		h, ok := MachineIDHash(raw)
		if !ok || h == rd.id.MachineIDHash || slices.ContainsFunc(rd.id.OtherMachineIDs, func(c MachineIDCopy) bool { return c.Hash == h }) {
			return
		}
		rd.id.OtherMachineIDs = append(rd.id.OtherMachineIDs, MachineIDCopy{Hash: h, Source: source})
	}
	if f := identity.ReadFile(rd.r, identity.DBusMachineIDPath); f.Err == nil && f.Regular() && f.Kind == identity.Valid {
		add(f.ID(), f.Path)
	}
	for _, p := range identity.ReadMachineIDPins(rd.r) {
		switch {
		case p.ID != "":
			add(p.ID, p.Path)
		case p.Opaque != "":
			// An encrypted or base64 ID: clones holding the same bytes
			// get the same ID, so its bytes are compared, hashed alike.
			add(hex.EncodeToString(appSpecific([]byte(p.Opaque), AppID)), p.Path)
		}
	}
}

// hostKeys fills the fingerprints of the host keys sshd loads, each from
// its .pub when that parses (no private key is read then), else from the
// private key. A key that is not there is no identity; one that cannot be
// read is noted.
func (rd *reader) hostKeys() {
	c := sshdconfig.Load(sshdconfig.DefaultPath, identity.SSHDSource(rd.r))
	paths, _ := identity.SSHDHostKeys(c)
	for _, p := range paths {
		typ, fp, pubErr := identity.ReadPublicKey(rd.r, p+".pub")
		if pubErr == nil {
			rd.id.HostKeys = append(rd.id.HostKeys, HostKey{Type: typ, Fingerprint: fp, Path: p})
			continue
		}
		k := identity.ReadHostKey(rd.r, p)
		if typ, fp, ok := k.Identity(); ok {
			rd.id.HostKeys = append(rd.id.HostKeys, HostKey{Type: typ, Fingerprint: fp, Path: p})
			continue
		}
		switch {
		case k.Err != nil && !errors.Is(k.Err, iofs.ErrNotExist):
			rd.unread(ItemHostKey, fs.ErrorText(p, k.Err))
		case k.ParseErr != nil:
			rd.unread(ItemHostKey, p+": "+oneLine(k.ParseErr.Error()))
		case !errors.Is(pubErr, iofs.ErrNotExist):
			rd.unread(ItemHostKey, fs.ErrorText(p+".pub", pubErr))
		}
	}
}

// instanceID fills cloud-init's current instance-id: the first line of
// its file, which cloud-init writes with a newline.
func (rd *reader) instanceID() {
	b, ok := rd.readFile(ItemInstanceID, identity.InstanceIDPath, maxSmallFile)
	if !ok {
		rd.setInstanceID(rd.instanceDir())
		return
	}
	v, _, _ := strings.Cut(string(b), "\n")
	v = strings.TrimSpace(v)
	if !printable(v) || len(v) > maxNameLen {
		rd.unread(ItemInstanceID, identity.InstanceIDPath+": not one printable line of at most 255 bytes")
		return
	}
	rd.setInstanceID(v)
}

// setInstanceID records an instance-id, as its hash when it is a UUID:
// it may be the machine-id itself (Identity.InstanceIDHash).
func (rd *reader) setInstanceID(v string) {
	rd.id.InstanceID = v
	HideUUIDInstanceID(&rd.id)
}

// instanceDir names the instance cloud-init's state holds when its
// instance-id cache is not there: cloud-init names each instance's
// directory after its instance-id (with "/" as "_"), and links
// /var/lib/cloud/instance to the current one. Without the link, the one
// directory under instances/ is; "" when it cannot tell (none, several, or a reader
// that cannot list, such as the guest agent's).
func (rd *reader) instanceDir() string {
	name := ""
	if t, err := rd.r.Readlink(identity.CloudInstancePath); err == nil && path.Dir(path.Clean(t)) == identity.CloudInstancesDir {
		name = path.Base(t)
	} else if es, err := rd.r.ReadDir(identity.CloudInstancesDir); err == nil {
		var dirs []string
		for _, e := range es {
			if e.Kind == fs.KindDir {
				dirs = append(dirs, e.Name)
			}
		}
		if len(dirs) == 1 {
			name = dirs[0]
		}
	}
	if !printable(name) || len(name) > maxNameLen {
		return ""
	}
	return name
}

// hostname fills the kernel hostname on the running system, the first
// name of /etc/hostname under an image root.
func (rd *reader) hostname(live bool) {
	if live {
		n, err := hostnamefile.ReadKernel(rd.r)
		if err != nil {
			rd.unread(ItemHostname, fs.ErrorText(hostnamefile.KernelPath, err))
			return
		}
		rd.id.Hostname = n
		return
	}
	s := hostnamefile.ReadStatic(rd.r)
	if s.ReadErr != nil {
		rd.unread(ItemHostname, fs.ErrorText(s.File(), s.ReadErr))
		return
	}
	if !printable(s.First) || len(s.First) > maxNameLen {
		rd.unread(ItemHostname, s.File()+": not a host name")
		return
	}
	rd.id.Hostname = s.First
}

// macBindings fills the MAC-bound network configuration, by netconf's one
// reader of it. Files that could not be read are noted: a binding in one
// would be missed.
func (rd *reader) macBindings(f netconf.Facts) {
	for _, b := range netconf.MACBindings(f) {
		rd.id.MACBindings = append(rd.id.MACBindings, MACBinding{MAC: b.MAC.String(), At: b.At, Kind: b.Kind})
	}
	var unreadable []string
	for _, n := range f.Netplan {
		n.Use(&unreadable)
	}
	for _, u := range append(append([]netconf.Unit(nil), f.Networkd...), f.NM...) {
		u.Use(&unreadable)
	}
	for _, i := range f.Ifcfg {
		i.Use(&unreadable)
	}
	f.PersistentNet.Use(&unreadable)
	for _, u := range unreadable {
		rd.unread(ItemMACBinding, u)
	}
	// netconf lists its directories quietly; a reader that cannot list
	// any (the guest agent's) would find no binding at all.
	if _, err := rd.r.ReadDir("/etc"); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		rd.unread(ItemMACBinding, "network configuration directories cannot be listed: "+fs.ErrorText("/etc", err))
	}
}

// printable reports whether s holds no control character: a name or an
// ID is one line of text.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}

// oneLine folds a library's message to one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
