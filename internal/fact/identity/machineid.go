// Package identity is the per-instance identity of a guest, read and
// decided once for guestcheck and sealprep: the state of /etc/machine-id
// and its D-Bus copy, whether the root is read-only when systemd starts,
// the SSH host keys by fingerprint and what regenerates them, where an
// image hands systemd a machine ID (credentials, kernel command lines),
// sealprep's template record, and from all that whether the root is a
// sealed template (TemplateState, the one decision every identity check
// judges by). Both binaries call the same readers through fs.Reader, so
// they cannot disagree about the same tree.
package identity

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
)

// Guest paths of the machine ID, from the catalogue.
var (
	MachineIDPath = catalogue.Lookup(catalogue.MachineID).Files()[0]
	// DBusMachineIDPath is where systemd looks for an ID to reuse when
	// /etc/machine-id is empty or missing (unless it is a symlink).
	DBusMachineIDPath = catalogue.Lookup(catalogue.DBusMachineID).Files()[0]
)

// MachineIDMode is the mode systemd creates /etc/machine-id with, as a
// sign that it is not to be edited.
const MachineIDMode iofs.FileMode = 0o444

// Kind is what systemd makes of the bytes of a machine-id file.
type Kind int

// Kinds of machine-id content, after systemd's reader (id128_read_fd
// with ID128_FORMAT_PLAIN): 32 hexadecimal digits, either case, and at
// most one newline after them. Anything else it treats as no ID and
// replaces.
const (
	Valid         Kind = iota // kept by systemd
	Null                      // 32 zeros: systemd 252 keeps it, but it is no ID (machine-id(5))
	Empty                     // zero bytes: the sealed form for images
	Uninitialized             // "uninitialized": systemd's first-boot marker (247+)
	Invalid                   // anything else: systemd generates a new ID over it
)

// String names the kind for messages.
func (k Kind) String() string {
	return [...]string{"valid", "all zero", "empty", "uninitialized", "not a machine ID"}[k]
}

// HoldsID reports whether systemd keeps the content as the machine's ID
// (all zeros included): the identity a clone would share.
func (k Kind) HoldsID() bool { return k == Valid || k == Null }

// Unset reports whether the content makes systemd generate an ID: the
// sealed forms.
func (k Kind) Unset() bool { return k == Empty || k == Uninitialized }

// Classify says what systemd makes of b as machine-id content.
func Classify(b []byte) Kind {
	switch {
	case len(b) == 0:
		return Empty
	case string(b) == "uninitialized" || string(b) == "uninitialized\n":
		return Uninitialized
	}
	id, _ := bytes.CutSuffix(b, []byte("\n"))
	if !ValidFormat(string(id)) {
		return Invalid
	}
	if strings.Trim(string(id), "0") == "" {
		return Null
	}
	return Valid
}

// ValidFormat reports whether s is 32 hexadecimal digits.
func ValidFormat(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// ValidMachineID reports whether s is a machine ID as machine-id(5)
// defines it: 32 hexadecimal digits, not all zero.
func ValidMachineID(s string) bool {
	return ValidFormat(s) && strings.Trim(s, "0") != ""
}

// File is one machine-id file as read from a guest.
type File struct {
	Path string
	// Entry is the path itself (not following a final symlink); Exists
	// is false when nothing is there.
	Entry  fs.Entry
	Exists bool
	// Found is true when the path resolves to a file whose content was
	// read (a symlink is followed inside the root); Err is why a path
	// that does not simply resolve to nothing could not be read.
	Found   bool
	Err     error
	Content []byte
	Kind    Kind
	// Perm is the permission bits of the file the path resolves to.
	Perm iofs.FileMode
	// Target is the guest path a symlink at Path resolves to (links
	// followed inside the root), "" when Path is no symlink.
	Target string
}

// Link reports whether the path itself is a symlink.
func (f File) Link() bool { return f.Exists && f.Entry.Kind == fs.KindSymlink }

// Transient reports whether the path is a symlink to a file that is not
// in the image and lies under /run: systemd fills it at every boot (the
// tmpfs is empty at boot), so the machine gets a new ID each time.
func (f File) Transient() bool {
	return f.Link() && !f.Found && f.Err == nil && (f.Target == "/run" || strings.HasPrefix(f.Target, "/run/"))
}

// maxLinks bounds ResolveLink, as the kernel's ELOOP does.
const maxLinks = 8

// ResolveLink returns the guest path symlink p ends at, following each
// link inside the root (an absolute target is the guest's own path), ""
// when p is no symlink or a link cannot be read.
func ResolveLink(r fs.Reader, p string) string {
	cur := path.Clean(p)
	for i := 0; i < maxLinks; i++ {
		e, err := r.Lstat(cur)
		if err != nil || e.Kind != fs.KindSymlink {
			if i == 0 {
				return ""
			}
			return cur
		}
		t, err := r.Readlink(cur)
		if err != nil {
			return ""
		}
		if !path.IsAbs(t) {
			t = path.Join(path.Dir(cur), t)
		}
		cur = path.Clean(t)
	}
	return ""
}

// ID is the content as an ID, lower case and without its newline.
func (f File) ID() string { return strings.ToLower(strings.TrimSpace(string(f.Content))) }

// Regular reports whether the path itself is a regular file, not a
// symlink to one.
func (f File) Regular() bool { return f.Exists && f.Entry.Kind == fs.KindRegular }

// ReadFile reads the machine-id file at p. A missing file is no error.
func ReadFile(r fs.Reader, p string) File {
	f := File{Path: p}
	if e, err := r.Lstat(p); err == nil {
		f.Entry, f.Exists = e, true
		if e.Kind == fs.KindSymlink {
			f.Target = ResolveLink(r, p)
		}
	}
	b, err := r.ReadFile(p)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return f
	case err != nil:
		f.Err = err
		return f
	}
	f.Found, f.Content, f.Kind = true, b, Classify(b)
	if st, err := r.Stat(p); err == nil {
		f.Perm = st.Mode().Perm()
	}
	return f
}

// MachineID is the state of a guest's machine ID: /etc/machine-id and
// the D-Bus copy systemd may take its place from.
type MachineID struct {
	Etc, DBus File
}

// ReadMachineID reads both machine-id files.
func ReadMachineID(r fs.Reader) MachineID {
	return MachineID{Etc: ReadFile(r, MachineIDPath), DBus: ReadFile(r, DBusMachineIDPath)}
}

// Unset reports whether systemd generates an ID at boot from what
// /etc/machine-id holds: missing, empty or "uninitialized" (and
// readable: an unreadable file says nothing).
func (m MachineID) Unset() bool {
	return m.Etc.Err == nil && (!m.Etc.Found || m.Etc.Kind.Unset())
}

// DBusFallback is the ID systemd takes from /var/lib/dbus/machine-id
// when /etc/machine-id is unset, "" when it takes none: only a regular
// file (systemd opens it with O_NOFOLLOW, so a symlink is skipped) that
// holds an ID. systemd 252 takes an all-zero one too (newer releases
// refuse it): either way the image does not yield a fresh ID.
func (m MachineID) DBusFallback() string {
	if !m.Unset() || !m.DBus.Regular() || !m.DBus.Found || !m.DBus.Kind.HoldsID() {
		return ""
	}
	return m.DBus.ID()
}

// LooseMode reports whether perm lets group or others write the file:
// machine-id(5) asks for nothing, but systemd creates it 0444, and a
// file others may write lets any local user change the identity.
func LooseMode(perm iofs.FileMode) bool { return perm&0o022 != 0 }

// ProductUUIDPath is the SMBIOS system UUID the hypervisor gives the VM,
// readable by root only.
const ProductUUIDPath = "/sys/class/dmi/id/product_uuid"

// FirmwareMachineIDs returns the 32-hex-digit forms a product UUID takes
// as a machine ID: as written, and with its first three fields
// byte-swapped, the little-endian order some firmware and tools use.
// Nothing for a value that is not a UUID or is all zeros (no UUID set).
func FirmwareMachineIDs(uuid string) []string {
	u := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(uuid), "-", ""))
	if !ValidFormat(u) || strings.Trim(u, "0") == "" {
		return nil
	}
	swap := func(s string) string {
		var b strings.Builder
		for i := len(s) - 2; i >= 0; i -= 2 {
			b.WriteString(s[i : i+2])
		}
		return b.String()
	}
	return []string{u, swap(u[0:8]) + swap(u[8:12]) + swap(u[12:16]) + u[16:]}
}
