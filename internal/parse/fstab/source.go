package fstab

// What an entry's fs_spec names, and the kernel and udev naming rules
// that decide whether the name survives a disk reorder.

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// IDKind names a kind of persistent block-device identifier, spelt as in
// fstab tags and blkid output.
type IDKind string

// The identifier kinds fstab can name a device by.
const (
	IDUUID      IDKind = "UUID"      // filesystem UUID (superblock)
	IDLabel     IDKind = "LABEL"     // filesystem label (superblock)
	IDPartUUID  IDKind = "PARTUUID"  // partition-table entry UUID (GPT) or disk signature-number (MBR)
	IDPartLabel IDKind = "PARTLABEL" // GPT partition name
)

// IDKinds lists the identifier kinds in the order they are reported.
var IDKinds = []IDKind{IDUUID, IDLabel, IDPartUUID, IDPartLabel}

// LinkDir is the /dev/disk directory udev keeps for an identifier kind.
func (k IDKind) LinkDir() string {
	switch k {
	case IDUUID:
		return "by-uuid"
	case IDLabel:
		return "by-label"
	case IDPartUUID:
		return "by-partuuid"
	case IDPartLabel:
		return "by-partlabel"
	}
	return ""
}

// SourceKind says what an fstab fs_spec refers to.
type SourceKind string

// Source kinds; only Tag, DiskLink and Device name block devices.
const (
	SourceTag      SourceKind = "tag"       // UUID=, LABEL=, PARTUUID=, PARTLABEL=
	SourceDiskLink SourceKind = "disk-link" // /dev/disk/by-*/…
	SourceDevice   SourceKind = "device"    // any other /dev path: /dev/vdb, /dev/mapper/x
	SourceFile     SourceKind = "file"      // a regular file: swap file, loop image
	SourceNetwork  SourceKind = "network"   // NFS, CIFS, Ceph, ...
	SourceVirtual  SourceKind = "virtual"   // tmpfs, proc, bind mounts, virtiofs tags
)

// Source is the classified fs_spec of an fstab entry.
type Source struct {
	Kind SourceKind
	// ID is the identifier kind for tags and for /dev/disk/by-{uuid,label,
	// partuuid,partlabel} links; empty otherwise.
	ID IDKind
	// Value is the tag value (unquoted), or the path for other kinds.
	Value string
	// LinkDir is "by-id", "by-path", "by-uuid", ... for disk links.
	LinkDir string
}

// IsBlock reports whether the source names a block device.
func (s Source) IsBlock() bool {
	return s.Kind == SourceTag || s.Kind == SourceDiskLink || s.Kind == SourceDevice
}

// networkTypes are filesystems that need the network (and so _netdev).
var networkTypes = map[string]bool{
	"nfs": true, "nfs4": true, "cifs": true, "smb3": true, "smbfs": true, "ceph": true,
	"glusterfs": true, "fuse.glusterfs": true, "sshfs": true, "fuse.sshfs": true,
	"davfs": true, "fuse.s3fs": true, "s3fs": true, "lustre": true, "afs": true, "ncpfs": true,
	"fuse.rclone": true, "fuse.cephfs": true, "ocfs2": true, "gfs2": true,
}

// virtualTypes are filesystems without a backing block device.
var virtualTypes = map[string]bool{
	"proc": true, "sysfs": true, "tmpfs": true, "devpts": true, "devtmpfs": true, "cgroup": true,
	"cgroup2": true, "securityfs": true, "debugfs": true, "tracefs": true, "configfs": true,
	"fusectl": true, "hugetlbfs": true, "mqueue": true, "pstore": true, "bpf": true,
	"efivarfs": true, "binfmt_misc": true, "ramfs": true, "overlay": true, "9p": true,
	"virtiofs": true, "autofs": true, "nfsd": true, "rpc_pipefs": true, "rootfs": true,
	"fuse": true, "none": true, "nsfs": true,
}

// IsNetworkType reports whether vfstype is a network filesystem.
func IsNetworkType(vfstype string) bool { return networkTypes[vfstype] }

// IsVirtualType reports whether vfstype never has a block device behind it.
func IsVirtualType(vfstype string) bool { return virtualTypes[vfstype] }

// ClassifySource says what the entry's fs_spec refers to.
func ClassifySource(e Entry) Source {
	spec := e.Spec
	if e.HasOption("bind") || e.HasOption("rbind") || e.Type == "bind" {
		return Source{Kind: SourceVirtual, Value: spec}
	}
	if IsNetworkType(e.Type) || (!strings.HasPrefix(spec, "/") && strings.Contains(spec, ":/")) || strings.HasPrefix(spec, "//") {
		return Source{Kind: SourceNetwork, Value: spec}
	}
	for _, k := range IDKinds {
		if v, ok := strings.CutPrefix(spec, string(k)+"="); ok {
			// libblkid accepts UUID="..." as well.
			if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
				v = v[1 : len(v)-1]
			}
			return Source{Kind: SourceTag, ID: k, Value: v}
		}
	}
	if IsVirtualType(e.Type) {
		return Source{Kind: SourceVirtual, Value: spec}
	}
	if rest, ok := strings.CutPrefix(path.Clean(spec), "/dev/disk/"); ok && strings.HasPrefix(spec, "/dev/") {
		dir, name, _ := strings.Cut(rest, "/")
		s := Source{Kind: SourceDiskLink, Value: path.Clean(spec), LinkDir: dir}
		for _, k := range IDKinds {
			if k.LinkDir() == dir {
				s.ID = k
				s.Value = UdevUnescape(name)
			}
		}
		return s
	}
	if strings.HasPrefix(spec, "/dev/") {
		return Source{Kind: SourceDevice, Value: path.Clean(spec)}
	}
	if strings.HasPrefix(spec, "/") {
		return Source{Kind: SourceFile, Value: path.Clean(spec)}
	}
	return Source{Kind: SourceVirtual, Value: spec}
}

// kernelName matches the kernel's names for virtio, SCSI/SATA, Xen, IDE and
// NVMe disks and their partitions: names that follow probe order.
var kernelName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/dev/((xv|v|s|h)d[a-z]+[0-9]*|nvme[0-9]+n[0-9]+(p[0-9]+)?)$`)
})

// IsKernelDeviceName reports whether p is a kernel-assigned disk name
// (/dev/vdb, /dev/sda1, /dev/xvdf, /dev/nvme0n1p2), which can name another
// disk after a disk is added, removed or hot-plugged.
func IsKernelDeviceName(p string) bool { return kernelName().MatchString(path.Clean(p)) }

// UdevUnescape decodes the \xNN escapes udev uses in /dev/disk/by-* link
// names (a label "my data" becomes by-label/my\x20data).
func UdevUnescape(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// CheckID reports why v cannot be a UUID= or PARTUUID= value any device
// carries, nil when it can be (or k is another kind). What filesystems
// and partition tables write is hexadecimal digits in dash-separated
// groups: 8-4-4-4-12 (RFC 4122), XXXX-XXXX (FAT, exFAT), 16 digits
// (NTFS), XXXXXXXX-NN (an MBR disk's PARTUUID), YYYY-MM-DD-HH-MM-SS-CC
// (ISO 9660). The rule is no stricter than that, so that a real device's
// identifier is never called malformed.
func CheckID(k IDKind, v string) error {
	if k != IDUUID && k != IDPartUUID {
		return nil
	}
	if v == "" {
		return errors.New("is empty")
	}
	digits := 0
	for i, r := range v {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'f', r >= 'A' && r <= 'F':
			digits++
		case r != '-':
			return fmt.Errorf("holds %q, which is not a hexadecimal digit", r)
		case i == 0 || i == len(v)-1 || v[i-1] == '-':
			return errors.New("has a dash at an end or two in a row")
		}
	}
	switch {
	case digits < minIDDigits:
		return fmt.Errorf("has %d hexadecimal digits, fewer than any device's %s", digits, k)
	case digits > maxIDDigits:
		return fmt.Errorf("has %d hexadecimal digits, more than any device's %s", digits, k)
	}
	return nil
}

// The bounds of CheckID: a FAT volume serial has 8 digits, a UUID 32.
const (
	minIDDigits = 8
	maxIDDigits = 32
)
