// Package image attaches a raw or qcow2 disk image on the host, finds its
// root filesystem, mounts it (with the /boot, ESP and /var filesystems its
// fstab names) under /run/sealprep/image/, and takes all of it down again
// on every exit path, so that sealprep can seal an image the way it seals
// a mounted --root.
//
// Everything attached carries the session's directory or tag, so teardown
// finds what to undo from the kernel's own state (mountinfo, loop devices,
// /proc) rather than from memory: the same teardown runs at the end of a
// run, on SIGINT and SIGTERM, and at the start of the next run after a
// SIGKILL.
package image

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/blockid"
	"github.com/guestcheck/guestcheck/internal/parse/fstab"
)

// Partition type GUIDs from the UAPI Discoverable Partitions Specification
// (and the UEFI ESP), upper case as blockid.FormatGUID prints them.
const (
	typeESP      = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
	typeXBOOTLDR = "BC13C2FF-59E6-4262-A352-B275FD6F7172"
	typeVar      = "4D21B016-B534-45C2-A9FB-5C16E091FD2D"
	typeLinuxLVM = "E6D6D379-F507-44C2-A23C-238F2A3DF928"
	typeLUKS     = "CA7D7CCB-63ED-4C53-861C-1742536059CC"
)

// rootTypes maps GOARCH to the DPS root partition type of that
// architecture.
var rootTypes = map[string]string{
	"amd64":   "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709",
	"386":     "44479540-F297-41B2-9AF7-D131D5F0458A",
	"arm64":   "B921B045-1DF0-41C3-AF44-4C6F280D3FAE",
	"arm":     "69DAD710-2CE4-4E3C-B16C-21A1D49ABED3",
	"riscv64": "72EC70A6-CF74-40E6-BD49-4BDA08E8F224",
	"ppc64le": "C31C45E6-3F39-412E-80FB-4809C4980599",
	"s390x":   "5EEAD9A9-FE09-4A1E-A1D7-520D00531306",
	"loong64": "77055800-792C-4F94-B39A-98C91B762BB6",
}

// Part is one partition of the image, or the whole disk when the image has
// no partition table.
type Part struct {
	// Number is the partition number (0 for a whole-disk filesystem).
	Number int
	// Offset and Size are in bytes from the start of the disk.
	Offset, Size int64
	// Type is the GPT type GUID or the MBR type as "0x83"; empty for a
	// whole disk.
	Type      string
	PartUUID  string
	PartLabel string
	// FS is the filesystem found at the start of the partition; Type ""
	// when none is recognised.
	FS blockid.Superblock
	// Container is "lvm" or "luks" when the partition holds one.
	Container string
	// Device is set on a logical volume the appliance activated: the
	// device-mapper node that holds the filesystem from its first byte
	// (Offset is then 0), and Volume its name, "vg/lv".
	Device string
	Volume string
}

// String names the partition for messages: "partition 2 (ext4)".
func (p Part) String() string {
	name := "the whole disk"
	switch {
	case p.Volume != "":
		name = "logical volume " + p.Volume
	case p.Number > 0:
		name = "partition " + strconv.Itoa(p.Number)
	}
	switch {
	case p.Container != "":
		return name + " (" + p.Container + ")"
	case p.FS.Type != "":
		return name + " (" + p.FS.Type + ")"
	}
	return name
}

// Mountable reports whether sealprep can mount the partition's filesystem
// as a root or a /boot, /var or ESP filesystem.
func (p Part) Mountable() bool {
	switch p.FS.Type {
	case "ext2", "ext3", "ext4", "xfs", "btrfs", "vfat":
		return true
	}
	return false
}

// maxParts bounds the partitions inspected; a real disk has a handful.
const maxParts = 128

// ScanDisk reads the partition table of a disk of size bytes and probes
// each partition's filesystem. A disk without a table is one whole-disk
// partition. It only reads.
func ScanDisk(r io.ReaderAt, size int64) ([]Part, string, error) {
	pt, err := blockid.ReadPartitionTable(r, 512)
	if errors.Is(err, blockid.ErrNoPartitionTable) {
		p := Part{Size: size}
		probePart(r, &p)
		return []Part{p}, "none", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("partition table: %w", err)
	}
	var out []Part
	for _, e := range pt.Partitions {
		if len(out) == maxParts {
			break
		}
		if e.Sectors == 0 {
			continue
		}
		off, n := int64(e.Start)*512, int64(e.Sectors)*512
		if off < 0 || n < 0 || off >= size || n > size-off {
			return nil, "", fmt.Errorf("partition %d lies outside the %d-byte disk (start %d, %d sectors)", e.Number, size, e.Start, e.Sectors)
		}
		p := Part{Number: e.Number, Offset: off, Size: n, Type: strings.ToUpper(e.Type), PartUUID: e.UUID, PartLabel: e.Name}
		// An extended partition's container entry holds no filesystem.
		if pt.Type == "dos" && (p.Type == "0x05" || p.Type == "0x0f" || p.Type == "0x85") {
			continue
		}
		probePart(r, &p)
		out = append(out, p)
	}
	return out, pt.Type, nil
}

func probePart(r io.ReaderAt, p *Part) {
	sr := io.NewSectionReader(r, p.Offset, p.Size)
	if sb, err := blockid.Probe(sr); err == nil {
		p.FS = sb
		return
	}
	head := make([]byte, 1024)
	n, _ := sr.ReadAt(head, 0)
	head = head[:n]
	switch {
	case len(head) >= 6 && string(head[:6]) == "LUKS\xba\xbe":
		p.Container = "luks"
	case len(head) >= 512+32 && string(head[512:520]) == "LABELONE" && string(head[512+24:512+32]) == "LVM2 001":
		p.Container = "lvm"
	case p.Type == typeLinuxLVM || p.Type == "0x8e":
		p.Container = "lvm"
	case p.Type == typeLUKS:
		p.Container = "luks"
	}
}

// RootChoice is how FindRoot chose, or the candidates left to probe.
type RootChoice struct {
	// Index into the parts, or -1 when Candidates must be probed.
	Index int
	// How says why, in a person's words: the partition type, or empty.
	How string
	// Candidates are indexes of mountable partitions to probe for
	// /etc/os-release, in table order.
	Candidates []int
}

// ChooseRoot applies the Discoverable Partitions Specification: a single
// partition of the root type of arch (GOARCH; "" for this build's) is the
// root. Otherwise every partition with a Linux root filesystem type is a
// candidate for the os-release probe. An error says why there is none.
func ChooseRoot(parts []Part, arch string) (RootChoice, error) {
	if arch == "" {
		arch = runtime.GOARCH
	}
	want := rootTypes[arch]
	var dps []int
	for i, p := range parts {
		if want != "" && p.Type == want {
			dps = append(dps, i)
		}
	}
	if len(dps) == 1 {
		if !parts[dps[0]].Mountable() {
			return RootChoice{}, fmt.Errorf("the partition type of %s marks it as the Linux root for %s (Discoverable Partitions Specification), but it holds no filesystem sealprep can mount", parts[dps[0]], arch)
		}
		return RootChoice{Index: dps[0], How: "its partition type marks it as the Linux root for " + arch + " (Discoverable Partitions Specification)"}, nil
	}
	c := RootChoice{Index: -1}
	var containers []string
	for i, p := range parts {
		if len(dps) > 1 && p.Type != want {
			continue // several DPS roots: one of them, chosen by os-release
		}
		switch {
		case p.Container != "":
			containers = append(containers, p.String())
		case p.FS.Type == "ext2" || p.FS.Type == "ext3" || p.FS.Type == "ext4" || p.FS.Type == "xfs" || p.FS.Type == "btrfs":
			c.Candidates = append(c.Candidates, i)
		}
	}
	if len(c.Candidates) == 0 {
		if len(containers) > 0 {
			return c, fmt.Errorf("no root filesystem outside %s: LUKS volumes are never opened, and LVM volumes only by the sealing appliance, linear ones (without --trust-image-filesystems; or activate and mount the volume yourself, then use --root)", strings.Join(containers, ", "))
		}
		return c, errors.New("no partition holds an ext2/3/4, XFS or btrfs filesystem")
	}
	return c, nil
}

// ResolveSpec finds the partition an fstab source names: UUID=, LABEL=,
// PARTUUID=, PARTLABEL= or their /dev/disk/by-* links. A /dev/vdaN style
// name is not resolved: the image's device names are the guest's, not
// knowable here.
func ResolveSpec(spec string, parts []Part) (int, bool) {
	m, _ := specMatches(spec, parts)
	if len(m) != 1 {
		return -1, false // none, or ambiguous: two partitions match
	}
	return m[0], true
}

// specMatches lists the partitions an fstab source names; named is false
// when the source is no name that can be resolved here (a kernel device
// name, a path, an empty tag).
func specMatches(spec string, parts []Part) (matches []int, named bool) {
	if i, ok := resolveVolume(spec, parts); ok {
		return []int{i}, true
	}
	key, val, ok := strings.Cut(spec, "=")
	if !ok {
		for _, m := range []struct{ prefix, key string }{
			{"/dev/disk/by-uuid/", "UUID"}, {"/dev/disk/by-label/", "LABEL"},
			{"/dev/disk/by-partuuid/", "PARTUUID"}, {"/dev/disk/by-partlabel/", "PARTLABEL"},
		} {
			if v, found := strings.CutPrefix(spec, m.prefix); found {
				key, val, ok = m.key, fstab.Unescape(strings.ReplaceAll(v, `\x20`, " ")), true
				break
			}
		}
		if !ok {
			return nil, false
		}
	}
	val = strings.Trim(val, `"`)
	switch strings.ToUpper(key) {
	case "UUID", "LABEL", "PARTUUID", "PARTLABEL":
	default:
		return nil, false
	}
	if val == "" {
		return nil, false
	}
	for i, p := range parts {
		var match bool
		switch strings.ToUpper(key) {
		case "UUID":
			match = p.FS.UUID != "" && strings.EqualFold(p.FS.UUID, val)
		case "LABEL":
			match = p.FS.Label != "" && p.FS.Label == val
		case "PARTUUID":
			match = p.PartUUID != "" && strings.EqualFold(p.PartUUID, val)
		case "PARTLABEL":
			match = p.PartLabel != "" && p.PartLabel == val
		}
		if match {
			matches = append(matches, i)
		}
	}
	return matches, true
}

// resolveVolume finds the logical volume an fstab source names as
// /dev/mapper/VG-LV (a dash in a name doubled) or /dev/VG/LV.
func resolveVolume(spec string, parts []Part) (int, bool) {
	for i, p := range parts {
		if p.Volume == "" {
			continue
		}
		vg, lv, _ := strings.Cut(p.Volume, "/")
		mapper := "/dev/mapper/" + strings.ReplaceAll(vg, "-", "--") + "-" + strings.ReplaceAll(lv, "-", "--")
		if spec == mapper || spec == "/dev/"+p.Volume {
			return i, true
		}
	}
	return -1, false
}

// ExtraMount is a filesystem to mount under the root.
type ExtraMount struct {
	// Path is the guest mount point: /boot, /boot/efi, /efi or /var.
	Path string
	// Part indexes the partitions.
	Part int
	// Options are the fstab options passed to the filesystem (subvol= for
	// btrfs); the rest (noauto, x-systemd.*) are the guest's business.
	Options string
	// How is the fstab line or the partition type that placed it.
	How string
}

// sealMounts are the guest mount points sealprep's operations read and
// write under: logs, leases and D-Bus state in /var; boot loader entries
// and kernel command lines in /boot and the ESP.
var sealMounts = []string{"/boot", "/boot/efi", "/efi", "/var"}

// PlanMounts picks the extra filesystems to mount from the image's fstab
// and, where fstab is silent, the DPS automatic mounts (XBOOTLDR on /boot,
// the ESP on /efi or /boot). It returns notes for fstab entries it cannot
// place on this image.
func PlanMounts(entries []fstab.Entry, parts []Part, root int) ([]ExtraMount, []string) {
	var out []ExtraMount
	var notes []string
	have := map[string]bool{}
	used := map[int]bool{root: true}
	for _, e := range entries {
		mp := strings.TrimRight(e.MountPoint, "/")
		if e.MountPoint != "" && mp == "" {
			if n := rootNote(e, parts, root); n != "" {
				notes = append(notes, n)
			}
			continue
		}
		if !isSealMount(mp) || have[mp] {
			continue
		}
		i, ok := ResolveSpec(e.Spec, parts)
		if !ok {
			notes = append(notes, fmt.Sprintf("the image's /etc/fstab line %d: %s on %s is not a partition of this image (or not named by UUID=, LABEL=, PARTUUID= or PARTLABEL=); not mounted, so the seal does not reach it", e.Line, e.Spec, mp))
			continue
		}
		if used[i] || !parts[i].Mountable() {
			notes = append(notes, fmt.Sprintf("the image's /etc/fstab line %d: %s on %s is %s, which sealprep does not mount", e.Line, e.Spec, mp, parts[i]))
			continue
		}
		used[i] = true
		have[mp] = true
		out = append(out, ExtraMount{Path: mp, Part: i, Options: fsOptions(parts[i].FS.Type, e.Options), How: fmt.Sprintf("line %d of the image's /etc/fstab names it as %s", e.Line, e.Spec)})
	}
	auto := func(mp, typ, why string) {
		if have[mp] {
			return
		}
		for i, p := range parts {
			if p.Type == typ && !used[i] && p.Mountable() {
				used[i], have[mp] = true, true
				out = append(out, ExtraMount{Path: mp, Part: i, How: why})
				return
			}
		}
	}
	auto("/boot", typeXBOOTLDR, "its partition type marks it as the extended boot loader partition (Discoverable Partitions Specification)")
	if !have["/efi"] && !have["/boot/efi"] {
		if !have["/boot"] {
			auto("/boot", typeESP, "its partition type marks it as the EFI system partition, and no extended boot loader partition claims /boot (Discoverable Partitions Specification)")
		} else {
			auto("/efi", typeESP, "its partition type marks it as the EFI system partition (Discoverable Partitions Specification)")
		}
	}
	auto("/var", typeVar, "its partition type marks it as the /var partition (Discoverable Partitions Specification)")
	// Parents first: /boot before /boot/efi.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && strings.Count(out[j].Path, "/") < strings.Count(out[j-1].Path, "/"); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, notes
}

// rootNote says when the image's fstab mounts / from a filesystem other
// than the root sealprep mounts, or from one no partition carries:
// systemd waits for that device at every clone's boot, then drops to
// emergency mode. Nothing is said of a name that cannot be resolved
// here (/dev/vda1: the guest's device names are not knowable).
func rootNote(e fstab.Entry, parts []Part, root int) string {
	if root < 0 || root >= len(parts) {
		return ""
	}
	m, named := specMatches(e.Spec, parts)
	if !named || slices.Contains(m, root) {
		return ""
	}
	what := "which no filesystem of this image carries"
	if len(m) > 0 {
		what = "which is " + parts[m[0]].String() + ", not the root filesystem"
	}
	fix := "name the root filesystem (" + parts[root].String() + ") on that line"
	if u := parts[root].FS.UUID; u != "" {
		fix = "write UUID=" + u + " on that line (" + parts[root].String() + ", the root filesystem)"
	}
	return fmt.Sprintf("the image's /etc/fstab line %d: / is mounted from %s, %s: every clone waits for it at boot, then drops to emergency mode; %s",
		e.Line, e.Spec, what, fix)
}

func isSealMount(mp string) bool {
	for _, m := range sealMounts {
		if mp == m {
			return true
		}
	}
	return false
}

// fsOptions keeps the fstab options that change what the filesystem shows
// (btrfs subvolumes); nothing else is passed on.
func fsOptions(typ string, opts []string) string {
	if typ != "btrfs" {
		return ""
	}
	var keep []string
	for _, o := range opts {
		if strings.HasPrefix(o, "subvol=") || strings.HasPrefix(o, "subvolid=") {
			keep = append(keep, o)
		}
	}
	return strings.Join(keep, ",")
}
