package netcheck

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/guestfile/fstab"
)

// MachineIDKind is what systemd makes of the bytes of /etc/machine-id.
type MachineIDKind int

// Kinds of machine-id content, after systemd's reader (id128_read_fd with
// ID128_FORMAT_PLAIN): 32 hexadecimal digits, either case, and at most one
// newline after them. Anything else it treats as no ID and replaces.
const (
	MachineIDValid         MachineIDKind = iota // kept by systemd
	MachineIDNull                               // 32 zeros: systemd keeps it, but it is no ID (machine-id(5))
	MachineIDEmpty                              // zero bytes: the sealed form for images
	MachineIDUninitialized                      // "uninitialized": systemd's first-boot marker
	MachineIDGarbage                            // anything else: systemd generates a new ID over it
)

func (k MachineIDKind) String() string {
	return [...]string{"valid", "all zero", "empty", "uninitialized", "not a machine ID"}[k]
}

// ClassifyMachineID says what systemd makes of b as /etc/machine-id
// content.
func ClassifyMachineID(b []byte) MachineIDKind {
	switch {
	case len(b) == 0:
		return MachineIDEmpty
	case string(b) == "uninitialized" || string(b) == "uninitialized\n":
		return MachineIDUninitialized
	}
	id, _ := bytes.CutSuffix(b, []byte("\n"))
	if !ValidMachineIDFormat(string(id)) {
		return MachineIDGarbage
	}
	if strings.Trim(string(id), "0") == "" {
		return MachineIDNull
	}
	return MachineIDValid
}

// ValidMachineIDFormat reports whether s is 32 hexadecimal digits.
func ValidMachineIDFormat(s string) bool {
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
	return ValidMachineIDFormat(s) && strings.Trim(s, "0") != ""
}

// DBusMachineIDPath is where systemd looks for an ID to reuse when
// /etc/machine-id is empty or missing (unless it is a symlink).
const DBusMachineIDPath = "/var/lib/dbus/machine-id"

// readDBusMachineID returns the ID systemd would take from
// /var/lib/dbus/machine-id: a regular file (a symlink is skipped, as
// systemd opens it with O_NOFOLLOW) holding 32 hex digits. systemd 252
// takes an all-zero one too (newer releases refuse it): either way the
// image does not yield a fresh ID.
func readDBusMachineID(root *fs.Root) string {
	fi, err := root.Lstat(DBusMachineIDPath)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	b, err := root.ReadFile(DBusMachineIDPath)
	if k := ClassifyMachineID(b); err != nil || k != MachineIDValid && k != MachineIDNull {
		return ""
	}
	return strings.ToLower(strings.TrimSuffix(string(b), "\n"))
}

// RootMode is whether an image's root file system is writable when
// systemd starts, which decides whether it can create a missing
// /etc/machine-id.
type RootMode struct {
	// ReadOnly and Known: Known is false when the image holds no boot
	// configuration that says.
	ReadOnly, Known bool
	// Source names the file and line that decided, for the finding.
	Source string
}

// Boot configuration files that carry the kernel command line, in the
// order they are consulted.
var cmdlineFiles = []string{"/etc/kernel/cmdline", "/boot/grub/grub.cfg", "/boot/grub2/grub.cfg"}

// ReadRootMode works out from an image whether its root is mounted
// read-only when systemd starts: an fstab entry for / with `ro` keeps it
// read-only for good; otherwise the kernel command line decides (the last
// of `ro` and `rw` wins, and without either the kernel and the usual
// initrds mount the root read-only), read from /etc/kernel/cmdline,
// GRUB's grub.cfg or the Boot Loader Specification entries.
func ReadRootMode(root *fs.Root) RootMode {
	if b, err := root.ReadFile("/etc/fstab"); err == nil {
		ents, _ := fstab.Parse(b)
		for _, e := range ents {
			if e.MountPoint != "/" {
				continue
			}
			for _, o := range e.Options {
				if o == "ro" {
					return RootMode{ReadOnly: true, Known: true, Source: "/etc/fstab:" + strconv.Itoa(e.Line) + ": / is mounted ro"}
				}
			}
		}
	}
	files := append([]string{}, cmdlineFiles...)
	if es, err := root.ReadDir("/boot/loader/entries"); err == nil {
		for _, e := range es {
			if strings.HasSuffix(e.Name, ".conf") {
				files = append(files, path.Join("/boot/loader/entries", e.Name))
			}
		}
	}
	for _, f := range files {
		b, err := root.ReadFile(f)
		if err != nil {
			continue
		}
		if m, ok := rootModeFromCmdlines(f, b); ok {
			return m
		}
	}
	return RootMode{}
}

// rootModeFromCmdlines reads the kernel command lines in a boot
// configuration file: the whole of /etc/kernel/cmdline, `linux` lines of
// grub.cfg, `options` lines of a BLS entry. Any command line that leaves
// the root read-only makes the answer read-only: the image may boot that
// entry.
func rootModeFromCmdlines(file string, b []byte) (RootMode, bool) {
	found := false
	var rw RootMode
	for i, l := range lines(b) {
		f := strings.Fields(l)
		var args []string
		switch {
		case file == "/etc/kernel/cmdline":
			args = f
		case len(f) > 0 && (f[0] == "linux" || f[0] == "linuxefi" || f[0] == "linux16") && strings.Contains(file, "grub"):
			args = f[1:]
		case len(f) > 0 && f[0] == "options" && strings.HasPrefix(file, "/boot/loader/entries/"):
			args = f[1:]
		default:
			continue
		}
		if file == "/etc/kernel/cmdline" && len(args) == 0 {
			continue
		}
		found = true
		ro := true // the kernel's and the initrds' default
		for _, a := range args {
			switch a {
			case "ro":
				ro = true
			case "rw":
				ro = false
			}
		}
		src := file + ":" + strconv.Itoa(i+1)
		if ro {
			return RootMode{ReadOnly: true, Known: true, Source: src + ": the kernel command line mounts the root read-only"}, true
		}
		rw = RootMode{Known: true, Source: src + ": the kernel command line has rw"}
	}
	return rw, found
}

// readMachineIDFile reads /etc/machine-id's bytes and mode. A missing
// file is not an error.
func readMachineIDFile(root *fs.Root) (b []byte, mode iofs.FileMode, found bool, err error) {
	b, err = root.ReadFile(MachineIDPath)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, true, err
	}
	if fi, serr := root.Stat(MachineIDPath); serr == nil {
		mode = fi.Mode().Perm()
	}
	return b, mode, true, nil
}
