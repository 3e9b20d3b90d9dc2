package blockdev

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/blockid"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
	"github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
)

// Sources an identifier can come from, reported in findings so that an
// operator knows whether guestcheck read the disk or trusted udev.
// A udev link records its directory ("/dev/disk/by-uuid") as the source.
const (
	SourceSuperblock = "superblock" // read from the filesystem header
	SourceGPT        = "gpt"        // read from the parent disk's GPT
	SourceMBR        = "mbr"        // derived from the parent disk's MBR
)

const (
	udevDiskDir = "/dev/disk"        // where udev keeps its symlinks
	sysBlockDir = "/sys/class/block" // one entry per block device and partition
)

// Identifier is one persistent name of a block device.
type Identifier struct {
	Kind  fstab.IDKind
	Value string
	// Sources lists where the value was seen: SourceSuperblock, SourceGPT,
	// SourceMBR or a /dev/disk/by-* directory.
	Sources []string
}

// BlockDevice is one entry of /sys/class/block with what was learnt about it.
type BlockDevice struct {
	// Name is the kernel name ("vda1"); its node is /dev/<Name>.
	Name         string
	Major, Minor uint32
	// Size in bytes (sysfs counts 512-byte sectors whatever the hardware).
	Size int64
	// Partition is the partition number; 0 for whole disks and other devices.
	Partition int
	// Parent is the disk a partition belongs to.
	Parent string
	// Start is a partition's offset in its disk, in bytes.
	Start int64
	// Holders are the devices stacked on this one (dm, md); Slaves are the
	// devices this one is stacked on.
	Holders, Slaves []string
	// DMName is the device-mapper name (/dev/mapper/<DMName>).
	DMName string
	// BackingFile is the file behind a loop device.
	BackingFile string
	// Removable and ReadOnly mirror the sysfs flags.
	Removable, ReadOnly bool
	// FS is the probed superblock; nil when the device was not probed or
	// holds no supported filesystem.
	FS *blockid.Superblock
	// IDs are the device's persistent identifiers with their sources.
	IDs []Identifier
	// Links are the /dev/disk/by-* symlinks that point at the device.
	Links []string
	// Probed is true when the device's header was read, whether or not it
	// held a known filesystem.
	Probed bool
	// ProbeNote says why the superblock was not read, if it was not.
	ProbeNote string
	// logicalBlock is the sector size partition tables are laid out in.
	logicalBlock int
}

// Path is the device node.
func (d *BlockDevice) Path() string { return "/dev/" + d.Name }

// ID returns the identifier of kind k, if the device has one.
func (d *BlockDevice) ID(k fstab.IDKind) (Identifier, bool) {
	for _, id := range d.IDs {
		if id.Kind == k {
			return id, true
		}
	}
	return Identifier{}, false
}

func (d *BlockDevice) addID(k fstab.IDKind, v, source string) {
	if v == "" {
		return
	}
	for i, id := range d.IDs {
		if id.Kind == k && id.Value == v {
			for _, s := range id.Sources {
				if s == source {
					return
				}
			}
			d.IDs[i].Sources = append(d.IDs[i].Sources, source)
			return
		}
	}
	d.IDs = append(d.IDs, Identifier{Kind: k, Value: v, Sources: []string{source}})
}

// Inventory is the block devices of a live system with their identifiers.
type Inventory struct {
	Devices []*BlockDevice
	// UdevLinks is false when /dev/disk does not exist (udev is not running,
	// as in containers and minimal CI machines); the superblock probe is then
	// the only source of identifiers.
	UdevLinks bool
	// Denied lists devices that could not be opened for lack of permission
	// (not root): their identifiers come from udev links only.
	Denied []string
	// Conflicts are udev links that disagree with what the disk says
	// (a stale link after the filesystem was re-created).
	Conflicts []string
	// Notes are other reasons the inventory is incomplete (timeouts, I/O errors).
	Notes  []string
	byName map[string]*BlockDevice
}

// InventoryOptions tunes ReadInventory.
type InventoryOptions struct {
	// DeviceTimeout bounds the reads of one device (a hung disk must not
	// eat the check's deadline); default 1s.
	DeviceTimeout time.Duration
	// NoProbe skips opening devices: identifiers then come from udev links.
	NoProbe bool
}

// ReadInventory enumerates /sys/class/block through r, probes each device's
// superblock by opening /dev/<name> through r (on an image root a regular
// file standing in for the node is accepted, which tests use), reads
// PARTUUID/PARTLABEL from each disk's partition table, and merges the
// /dev/disk/by-* links. It honours ctx: devices not reached in time are
// listed in Notes.
func ReadInventory(ctx context.Context, r *fs.Root, opts InventoryOptions) (*Inventory, error) {
	if opts.DeviceTimeout <= 0 {
		opts.DeviceTimeout = time.Second
	}
	ents, err := r.ReadDirNames(sysBlockDir)
	if err != nil {
		return nil, fmt.Errorf("list block devices: %w", err)
	}
	// ReadDirNames sorts, so that findings list devices in a stable order
	// (directory order of an image root is arbitrary).
	inv := &Inventory{byName: map[string]*BlockDevice{}}
	for _, name := range ents {
		d, err := readSysBlock(r, name)
		if err != nil {
			inv.Notes = append(inv.Notes, err.Error())
			continue
		}
		inv.Devices = append(inv.Devices, d)
		inv.byName[d.Name] = d
	}
	for _, d := range inv.Devices {
		if p := inv.byName[d.Parent]; p != nil && d.Partition > 0 {
			// Only disks say whether they are removable.
			d.Removable = d.Removable || p.Removable
		}
	}
	if !opts.NoProbe {
		inv.probeAll(ctx, r, opts.DeviceTimeout)
	}
	inv.readUdevLinks(r)
	rank := map[fstab.IDKind]int{}
	for i, k := range fstab.IDKinds {
		rank[k] = i
	}
	for _, d := range inv.Devices {
		sort.SliceStable(d.IDs, func(i, j int) bool { return rank[d.IDs[i].Kind] < rank[d.IDs[j].Kind] })
	}
	return inv, nil
}

// readSysBlock reads one /sys/class/block entry. The entry is a symlink
// into /sys/devices a dozen components deep; it is resolved once, and the
// attributes are read below the open directory (fs.Dir) instead of
// resolving the whole path again for each of them: under emulation that
// was most of the inventory's cost.
func readSysBlock(r *fs.Root, name string) (*BlockDevice, error) {
	dir := path.Join(sysBlockDir, name)
	sd, err := r.OpenDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer sd.Close()
	d := &BlockDevice{Name: name, logicalBlock: 512}
	dev, err := readTrim(sd, "dev")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if d.Major, d.Minor, err = mountinfo.ParseMajorMinor(dev); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if v, err := readInt(sd, "size"); err == nil && v > 0 && v < 1<<54 {
		d.Size = v * 512
	}
	if v, err := readInt(sd, "partition"); err == nil {
		d.Partition = int(v)
		if s, err := readInt(sd, "start"); err == nil && s >= 0 && s < 1<<54 {
			d.Start = s * 512
		}
		// The sysfs entry links into .../block/<disk>/<partition>.
		if target, err := r.Readlink(dir); err == nil {
			d.Parent = path.Base(path.Dir(target))
		}
	}
	if v, err := readInt(sd, "queue/logical_block_size"); err == nil && (v == 512 || v == 4096) {
		d.logicalBlock = int(v)
	}
	d.ReadOnly = readBool(sd, "ro")
	d.Removable = readBool(sd, "removable")
	d.Holders = listNames(sd, "holders")
	d.Slaves = listNames(sd, "slaves")
	d.DMName, _ = readTrim(sd, "dm/name")
	d.BackingFile, _ = readTrim(sd, "loop/backing_file")
	return d, nil
}

// readTrim reads attribute p below a sysfs directory, without its
// surrounding white space.
func readTrim(d *fs.Dir, p string) (string, error) {
	b, err := d.ReadFile(p)
	return strings.TrimSpace(string(b)), err
}

func readInt(d *fs.Dir, p string) (int64, error) {
	s, err := readTrim(d, p)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

func readBool(d *fs.Dir, p string) bool {
	v, err := readInt(d, p)
	return err == nil && v != 0
}

func listNames(d *fs.Dir, p string) []string {
	names, err := d.ReadDirNames(p)
	if err != nil || len(names) == 0 {
		return nil
	}
	return names
}

// probeResult is what one device's probe goroutine hands back.
type probeResult struct {
	read   bool
	sb     *blockid.Superblock
	pt     *blockid.PartitionTable
	note   string
	denied bool
}

// probeAll probes every device with a size, one at a time, each bounded by
// timeout and all by ctx. A read stuck in the kernel cannot be interrupted;
// its goroutine is abandoned and ends with the process.
func (inv *Inventory) probeAll(ctx context.Context, r *fs.Root, timeout time.Duration) {
	hasParts := map[string]bool{}
	for _, d := range inv.Devices {
		if d.Partition > 0 {
			hasParts[d.Parent] = true
		}
	}
	for i, d := range inv.Devices {
		if ctx.Err() != nil {
			for _, rest := range inv.Devices[i:] {
				rest.ProbeNote = "not probed: the check's deadline passed"
			}
			inv.Notes = append(inv.Notes, fmt.Sprintf("deadline passed before probing %d device(s)", len(inv.Devices)-i))
			return
		}
		if d.Size == 0 {
			d.ProbeNote = "not probed: size 0 (no medium, or an unattached loop device)"
			continue
		}
		ch := make(chan probeResult, 1)
		go func() { ch <- probeDevice(r, d, hasParts[d.Name]) }()
		t := time.NewTimer(timeout)
		select {
		case res := <-ch:
			t.Stop()
			inv.apply(d, res)
		case <-t.C:
			d.ProbeNote = fmt.Sprintf("not probed: reading %s took longer than %v", d.Path(), timeout)
			inv.Notes = append(inv.Notes, d.ProbeNote)
		case <-ctx.Done():
			t.Stop()
			d.ProbeNote = "not probed: the check's deadline passed"
			inv.Notes = append(inv.Notes, d.ProbeNote)
		}
	}
}

func (inv *Inventory) apply(d *BlockDevice, res probeResult) {
	d.ProbeNote = res.note
	d.Probed = res.read
	if res.denied {
		inv.Denied = append(inv.Denied, d.Name)
	}
	if res.sb != nil {
		d.FS = res.sb
		d.addID(fstab.IDUUID, res.sb.UUID, SourceSuperblock)
		d.addID(fstab.IDLabel, res.sb.Label, SourceSuperblock)
	}
	if res.pt == nil {
		return
	}
	src := SourceGPT
	if res.pt.Type == "dos" {
		src = SourceMBR
	}
	for _, c := range inv.Devices {
		if c.Parent != d.Name || c.Partition == 0 {
			continue
		}
		for _, p := range res.pt.Partitions {
			if p.Number == c.Partition {
				c.addID(fstab.IDPartUUID, p.UUID, src)
				c.addID(fstab.IDPartLabel, p.Name, src)
			}
		}
	}
}

// probeDevice opens /dev/<name> and reads its superblock and, for disks
// with partitions, its partition table.
func probeDevice(r *fs.Root, d *BlockDevice, hasParts bool) probeResult {
	p := d.Path()
	fi, err := r.Stat(p)
	if err != nil {
		return probeResult{note: fmt.Sprintf("not probed: %v", err)}
	}
	if maj, min, ok := DeviceNumber(fi); ok {
		if maj != d.Major || min != d.Minor {
			return probeResult{note: fmt.Sprintf("not probed: %s is device %d:%d, sysfs says %d:%d", p, maj, min, d.Major, d.Minor)}
		}
	} else if r.IsHost() || !fi.Mode().IsRegular() {
		// On the running system only the real node is trusted; image
		// roots (tests) may hold a regular file standing in for it.
		return probeResult{note: fmt.Sprintf("not probed: %s is not a block device", p)}
	}
	f, err := r.Open(p)
	if err != nil {
		res := probeResult{note: fmt.Sprintf("not probed: %v", err)}
		res.denied = errors.Is(err, iofs.ErrPermission)
		return res
	}
	defer f.Close()
	// Never read beyond the device, whatever a header claims.
	ra := io.NewSectionReader(f, 0, d.Size)
	var res probeResult
	sb, err := blockid.Probe(ra)
	switch {
	case err == nil:
		res.sb, res.read = &sb, true
	case errors.Is(err, blockid.ErrNoFilesystem):
		res.read = true
	default:
		res.note = fmt.Sprintf("superblock of %s: %v", p, err)
	}
	if hasParts {
		pt, err := blockid.ReadPartitionTable(ra, d.logicalBlock)
		if err == nil {
			res.pt = pt
		} else if !errors.Is(err, blockid.ErrNoPartitionTable) {
			res.note = strings.TrimPrefix(res.note+"; ", "; ") + fmt.Sprintf("partition table of %s: %v", p, err)
		}
	}
	return res
}

// DeviceNumber returns the device number of a block-device node.
func DeviceNumber(e fs.Entry) (major, minor uint32, ok bool) {
	if e.Kind != fs.KindBlockDevice {
		return 0, 0, false
	}
	return unix.Major(e.Rdev), unix.Minor(e.Rdev), true
}

// linkDirs are the udev symlink directories, identifier kinds first.
var linkDirs = []string{"by-uuid", "by-label", "by-partuuid", "by-partlabel", "by-id", "by-path"}

// readUdevLinks merges /dev/disk/by-*. A link agreeing with the probe adds
// itself as a source; a link to an unprobed device provides the
// identifier; a link contradicting the probe is a conflict.
func (inv *Inventory) readUdevLinks(r *fs.Root) {
	if _, err := r.Stat(udevDiskDir); err != nil {
		return
	}
	inv.UdevLinks = true
	for _, dir := range linkDirs {
		full := path.Join(udevDiskDir, dir)
		// One descriptor per directory: each link is then one readlinkat,
		// not a resolution of its directory again.
		ld, err := r.OpenDir(full)
		if err != nil {
			continue
		}
		names, err := ld.ReadDirNames(".")
		if err != nil {
			ld.Close()
			continue
		}
		var kind fstab.IDKind
		for _, k := range fstab.IDKinds {
			if k.LinkDir() == dir {
				kind = k
			}
		}
		for _, name := range names {
			link := path.Join(full, name)
			d := inv.linkTarget(ld, name)
			if d == nil {
				continue
			}
			d.Links = append(d.Links, link)
			if kind == "" {
				continue
			}
			value := fstab.UdevUnescape(name)
			if have, ok := d.authoritative(kind); ok && have != value {
				inv.Conflicts = append(inv.Conflicts, fmt.Sprintf("%s points to %s, whose %s is %q on disk", link, d.Path(), kind, have))
				continue
			}
			d.addID(kind, value, full)
		}
		ld.Close()
	}
}

// authoritative returns the value of kind that was read from the device
// itself (superblock or partition table), if the device was read.
func (d *BlockDevice) authoritative(k fstab.IDKind) (string, bool) {
	switch k {
	case fstab.IDUUID, fstab.IDLabel:
		if d.FS == nil {
			return "", false
		}
		if k == fstab.IDUUID {
			return d.FS.UUID, true
		}
		return d.FS.Label, true
	}
	if id, ok := d.ID(k); ok {
		for _, s := range id.Sources {
			if s == SourceGPT || s == SourceMBR {
				return id.Value, true
			}
		}
	}
	return "", false
}

// linkTarget returns the device a /dev symlink points at, or nil.
func (inv *Inventory) linkTarget(ld *fs.Dir, name string) *BlockDevice {
	t, err := ld.Readlink(name)
	if err != nil {
		return nil
	}
	if !strings.HasPrefix(t, "/") {
		t = path.Join(ld.Path(), t)
	}
	return inv.byName[path.Base(path.Clean(t))]
}

// Unread lists the devices with a size whose header could not be read
// (permission, timeout, I/O error, missing node): an identifier found
// nowhere may still be on one of them.
func (inv *Inventory) Unread() []string {
	var out []string
	for _, d := range inv.Devices {
		if d.Size > 0 && !d.Probed {
			out = append(out, d.Name)
		}
	}
	return out
}

// ByName returns the device with kernel name n.
func (inv *Inventory) ByName(n string) *BlockDevice { return inv.byName[n] }

// ByNumber returns the device with the given major:minor.
func (inv *Inventory) ByNumber(major, minor uint32) *BlockDevice {
	for _, d := range inv.Devices {
		if d.Major == major && d.Minor == minor {
			return d
		}
	}
	return nil
}

// ErrNotBlockDevice is returned by DeviceForPath for paths that exist but
// are not a block device known to /sys/class/block.
var ErrNotBlockDevice = errors.New("not a block device")

// DeviceForPath returns the device that guest path p (/dev/vdb,
// /dev/mapper/vg-lv, a /dev/disk/by-* link) names. Missing paths return an
// error wrapping fs.ErrNotExist.
func (inv *Inventory) DeviceForPath(r *fs.Root, p string) (*BlockDevice, error) {
	fi, err := r.Stat(p)
	if err != nil {
		return nil, err
	}
	if maj, min, ok := DeviceNumber(fi); ok {
		if d := inv.ByNumber(maj, min); d != nil {
			return d, nil
		}
		return nil, fmt.Errorf("%s is device %d:%d, which /sys/class/block does not list: %w", p, maj, min, ErrNotBlockDevice)
	}
	if !r.IsHost() && fi.Mode().IsRegular() {
		// Image roots (tests) stand in regular files for nodes: follow
		// the links by hand to learn the final name.
		final := p
		for i := 0; i < 16; i++ {
			lfi, err := r.Lstat(final)
			if err != nil || lfi.Mode()&iofs.ModeSymlink == 0 {
				break
			}
			t, err := r.Readlink(final)
			if err != nil {
				break
			}
			if !strings.HasPrefix(t, "/") {
				t = path.Join(path.Dir(final), t)
			}
			final = fs.Clean(t)
		}
		if d := inv.byName[path.Base(final)]; d != nil && path.Dir(final) == "/dev" {
			return d, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", p, ErrNotBlockDevice)
}

// Match is a device an identifier resolved to, and where the identifier
// was seen.
type Match struct {
	Device  *BlockDevice
	Sources []string
}

// Lookup returns the devices carrying identifier kind=value, after
// removing what is not a real ambiguity: members of md/LVM/dm stacks when
// the assembled device also matches, a whole disk when its partition also
// matches, and the members of one multi-device btrfs (counted once).
func (inv *Inventory) Lookup(kind fstab.IDKind, value string) []Match {
	var ms []Match
	for _, d := range inv.Devices {
		if id, ok := d.ID(kind); ok && id.Value == value {
			ms = append(ms, Match{Device: d, Sources: id.Sources})
		}
	}
	return inv.collapse(kind, ms)
}

// LookupFold is Lookup ignoring case, for hints when an exact lookup fails
// (mount compares identifiers exactly; vfat serials are upper case).
func (inv *Inventory) LookupFold(kind fstab.IDKind, value string) []Match {
	var ms []Match
	for _, d := range inv.Devices {
		if id, ok := d.ID(kind); ok && strings.EqualFold(id.Value, value) {
			ms = append(ms, Match{Device: d, Sources: id.Sources})
		}
	}
	return inv.collapse(kind, ms)
}

func (inv *Inventory) collapse(kind fstab.IDKind, ms []Match) []Match {
	if len(ms) < 2 {
		return ms
	}
	in := map[string]bool{}
	for _, m := range ms {
		in[m.Device.Name] = true
	}
	var out []Match
	btrfsSeen := false
	for _, m := range ms {
		d := m.Device
		if len(d.Holders) > 0 && inv.anyStackedIn(d, in) {
			continue // a member whose assembled device also matches
		}
		if d.Partition == 0 && inv.hasPartitionIn(d, in) {
			continue // a disk whose partition carries the same identifier
		}
		if kind == fstab.IDUUID && d.FS != nil && d.FS.Type == "btrfs" && d.FS.Devices > 1 {
			if btrfsSeen {
				continue
			}
			btrfsSeen = true
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return ms[:1]
	}
	return out
}

// anyStackedIn reports whether a device stacked (transitively) on d is in set.
func (inv *Inventory) anyStackedIn(d *BlockDevice, set map[string]bool) bool {
	seen := map[string]bool{}
	var walk func(*BlockDevice) bool
	walk = func(x *BlockDevice) bool {
		for _, h := range x.Holders {
			if seen[h] {
				continue
			}
			seen[h] = true
			if set[h] {
				return true
			}
			if hd := inv.byName[h]; hd != nil && walk(hd) {
				return true
			}
		}
		return false
	}
	return walk(d)
}

func (inv *Inventory) hasPartitionIn(d *BlockDevice, set map[string]bool) bool {
	for _, c := range inv.Devices {
		if c.Parent == d.Name && c.Partition > 0 && set[c.Name] {
			return true
		}
	}
	return false
}

// Duplicate is an identifier carried by more than one unrelated device.
type Duplicate struct {
	Kind    fstab.IDKind
	Value   string
	Devices []*BlockDevice
}

// Duplicates lists UUIDs, labels and PARTUUIDs shared by unrelated devices:
// typically a cloned or restored disk attached next to its original. Stack
// members (md, LVM, dm-crypt), partition/disk pairs and multi-device btrfs
// are not duplicates. PARTLABELs are left out: generic names such as
// "primary" repeat on healthy systems.
func (inv *Inventory) Duplicates() []Duplicate {
	var out []Duplicate
	for _, k := range []fstab.IDKind{fstab.IDUUID, fstab.IDLabel, fstab.IDPartUUID} {
		values := map[string]bool{}
		for _, d := range inv.Devices {
			if id, ok := d.ID(k); ok {
				values[id.Value] = true
			}
		}
		keys := make([]string, 0, len(values))
		for v := range values {
			keys = append(keys, v)
		}
		sort.Strings(keys)
		for _, v := range keys {
			var ds []*BlockDevice
			for _, m := range inv.Lookup(k, v) {
				if len(m.Device.Holders) > 0 {
					continue // md/LVM members share identifiers by design
				}
				ds = append(ds, m.Device)
			}
			if len(ds) > 1 {
				out = append(out, Duplicate{Kind: k, Value: v, Devices: ds})
			}
		}
	}
	return out
}

// Disk returns the whole disk d belongs to (d itself when it is one).
func (inv *Inventory) Disk(d *BlockDevice) *BlockDevice {
	if d.Partition > 0 {
		if p := inv.byName[d.Parent]; p != nil {
			return p
		}
	}
	return d
}

// FreeAfter returns the bytes between the end of partition d and the next
// partition on its disk (or the disk's end): the room growpart would use.
// ok is false when d is not a partition or its disk is unknown.
func (inv *Inventory) FreeAfter(d *BlockDevice) (free int64, ok bool) {
	disk := inv.Disk(d)
	if d.Partition == 0 || disk == d || disk.Size == 0 {
		return 0, false
	}
	end := d.Start + d.Size
	limit := disk.Size
	for _, c := range inv.Devices {
		if c.Parent == disk.Name && c.Partition > 0 && c != d && c.Start >= end && c.Start < limit {
			limit = c.Start
		}
	}
	if limit < end {
		return 0, true
	}
	return limit - end, true
}

// BaseDisks returns the whole disks under d: d's own disk, or for stacked
// devices (LVM, dm-crypt, md) the disks of every device it sits on.
func (inv *Inventory) BaseDisks(d *BlockDevice) []*BlockDevice {
	var out []*BlockDevice
	seen := map[string]bool{}
	var walk func(*BlockDevice, int)
	walk = func(x *BlockDevice, depth int) {
		if len(x.Slaves) == 0 || depth > 16 {
			disk := inv.Disk(x)
			if !seen[disk.Name] {
				seen[disk.Name] = true
				out = append(out, disk)
			}
			return
		}
		for _, s := range x.Slaves {
			if sd := inv.byName[s]; sd != nil {
				walk(sd, depth+1)
			}
		}
	}
	walk(d, 0)
	return out
}

// NewInventory is an inventory of devices already read, as ReadInventory
// leaves it, so that a judge can be tested on hand-made facts.
func NewInventory(udevLinks bool, devs ...*BlockDevice) *Inventory {
	inv := &Inventory{Devices: devs, UdevLinks: udevLinks, byName: map[string]*BlockDevice{}}
	for _, d := range devs {
		inv.byName[d.Name] = d
	}
	return inv
}

// InventoryBudget bounds the run's one inventory (Devices), whichever
// check asked first; each device has its own, shorter, timeout too.
// Generous, for guests under emulation.
const InventoryBudget = 30 * time.Second

// devicesKey keeps a run's inventory in its store, per root.
type devicesKey struct{ r *fs.Root }

// inventoryRead is ReadInventory's result kept whole, so that a run
// shares the error too.
type inventoryRead struct {
	inv *Inventory
	err error
}

// Devices is ReadInventory once per run, with the default options:
// fstab and disk-size judge the one inventory s keeps for r (read afresh
// when s is nil), since walking sysfs and probing superblocks is the most
// expensive thing either does. It is shared and must not be modified.
func Devices(ctx context.Context, s *store.Store, r *fs.Root) (*Inventory, error) {
	res := store.Memo(ctx, s, devicesKey{r}, func(ctx context.Context) inventoryRead {
		ctx, cancel := context.WithTimeout(ctx, InventoryBudget)
		defer cancel()
		inv, err := ReadInventory(ctx, r, InventoryOptions{})
		return inventoryRead{inv, err}
	})
	return res.inv, res.err
}
