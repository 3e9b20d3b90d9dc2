package disksize

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	"github.com/guestcheck/guestcheck/internal/fact/mounts"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Growth thresholds. Alignment and metadata leave a few MiB unused on a
// fully grown disk; a missed growpart leaves most of the disk.
const (
	growMinGap  = 16 << 20 // below this, never report
	growAbsGap  = 1 << 30  // this much unused is always reported
	growPercent = 5        // or this share of the container
)

// notGrown reports whether gap bytes unused in a container of size bytes
// means a grow step did not run.
func notGrown(gap, size int64) bool {
	return gap > growMinGap && (gap >= growAbsGap || gap*100 >= size*growPercent)
}

// Check is the first-boot "df -h and lsblk" look of the Harvester
// runbook: the root filesystem (and every other block-backed one) must fill
// its partition and the partition its disk, as growpart and resize2fs or
// xfs_growfs should have made it, and no filesystem may be nearly full of
// blocks or inodes. docs/checks/disk-size.md explains each code.
var Check = runner.Check{
	ID:          "disk-size",
	Title:       "Disk growth and usage",
	Description: "filesystems fill their partitions and disks (growpart/resize ran) and are not nearly full of blocks or inodes",
	Settings:    settings.Section(),
	Codes:       Codes,
	Run:         Run,
}

// Run gathers the facts and judges them. Usage comes from env.Statfs, and
// only on the live system.
func Run(ctx context.Context, env *runner.Env) []runner.Finding {
	return Judge(Gather(ctx, env))
}

// Facts is everything the disk-size check reads, gathered through
// Env before anything is judged, so that Judge does no I/O.
type Facts struct {
	// Live is true on the running system; NotLiveReason says why not.
	// Nothing below is read when it is false.
	Live          bool
	NotLiveReason string
	// WarnPercent and FailPercent are the configured usage thresholds.
	WarnPercent, FailPercent int
	// MountsErr is why the mount table could not be read.
	MountsErr error
	// blockdev.Inventory is the block devices; InventoryErr is why they could not
	// be listed (blockdev.Inventory is then nil).
	Inventory    *blockdev.Inventory
	InventoryErr error
	// Filesystems are the mounts whose usage matters (UsageFilesystems),
	// in order, each with its device and statfs answer.
	Filesystems []FilesystemFacts
	// Deadline is set when the check's deadline passed before every
	// filesystem was measured; Filesystems holds those that were.
	Deadline error
}

// FilesystemFacts is one mounted filesystem: where, on which device, and
// its usage or why statfs failed.
type FilesystemFacts struct {
	Mount   mountinfo.Mount
	Device  *blockdev.BlockDevice // nil when unknown
	Usage   Usage
	StatErr error
}

// Gather reads the thresholds and, on the live system, the mount
// table, the inventory and the usage of every filesystem that matters.
func Gather(ctx context.Context, env *runner.Env) Facts {
	cfg := settings.Of(env.Config)
	f := Facts{Live: env.Live, WarnPercent: cfg.WarnPercent, FailPercent: cfg.FailPercent}
	if !env.Live {
		f.NotLiveReason = env.NotLiveReason()
		return f
	}
	call := env.Statfs
	if call == nil {
		call = unix.Statfs
	}
	ms, err := mounts.Table(env.Facts, env.Root)
	if err != nil {
		f.MountsErr = err
		return f
	}
	if f.Inventory, f.InventoryErr = blockdev.Devices(ctx, env.Facts, env.Root); f.InventoryErr != nil {
		f.Inventory = nil
	}
	for _, m := range UsageFilesystems(ms) {
		if err := ctx.Err(); err != nil {
			f.Deadline = err
			break
		}
		fsf := FilesystemFacts{Mount: m, Device: blockdev.MountDevice(f.Inventory, m, pathsIn(env.Root, f.Inventory))}
		fsf.Usage, fsf.StatErr = statfsWith(ctx, call, filepath.Join(env.Root.Dir(), m.MountPoint))
		f.Filesystems = append(f.Filesystems, fsf)
	}
	return f
}

// Judge judges gathered disk-size facts.
func Judge(f Facts) []runner.Finding {
	if !f.Live {
		return []runner.Finding{runner.Skipf(codeDiskNotLive.ID, "filesystem sizes and usage not checked: "+f.NotLiveReason, nil)}
	}
	if f.MountsErr != nil {
		return []runner.Finding{codeDiskStateUnreadable.New(runner.Error, "cannot read the mount table",
			map[string]string{"file": "/proc/self/mountinfo", "error": f.MountsErr.Error()}, codeDiskStateUnreadable.Fixf())}
	}
	var out []runner.Finding
	if f.InventoryErr != nil {
		out = append(out, codeDiskSizeUnverified.New(runner.Skip, "cannot list block devices: filesystem growth not checked",
			map[string]string{"error": f.InventoryErr.Error()}, codeDiskSizeUnverified.CaseFix("when the block devices cannot be listed")))
	}
	for _, fsf := range f.Filesystems {
		out = append(out, judgeFilesystem(f, fsf)...)
	}
	if f.Deadline != nil {
		out = append(out, codeDiskStateUnreadable.New(runner.Error, "the check's deadline passed before every filesystem was checked",
			map[string]string{"error": f.Deadline.Error()}, codeDiskStateUnreadable.CaseFix("when the deadline passed")))
	}
	if len(out) == 0 {
		out = append(out, runner.Skipf(codeDiskSizeUnverified.ID, "nothing to check: /proc/self/mountinfo lists no root and no block-backed filesystem", nil))
	}
	return out
}

// judgeFilesystem judges one filesystem's growth and usage.
func judgeFilesystem(f Facts, fsf FilesystemFacts) []runner.Finding {
	m, dev, u := fsf.Mount, fsf.Device, fsf.Usage
	warnPct, failPct := f.WarnPercent, f.FailPercent
	base := map[string]string{"mount_point": m.MountPoint, "fs_type": m.FSType, "source": m.Source}
	if dev != nil {
		base["device"] = dev.Path()
	}
	if fsf.StatErr != nil {
		return []runner.Finding{codeDiskStatfsFailed.New(runner.Error, "cannot read the usage of "+m.MountPoint,
			runner.Detail(base, "error", fsf.StatErr.Error()), codeDiskStatfsFailed.Fixf("mount", m.MountPoint))}
	}
	growth, growthDetail := growthFindings(f.Inventory, dev, m, base)
	usage := usageFindings(u, m, base, warnPct, failPct)
	if len(usage) == 0 {
		pct, _ := u.UsedPercent()
		msg := fmt.Sprintf("%s is %.1f%% full (%s of %s)", m.MountPoint, pct, blockdev.IECBytes(u.UsedBytes()), blockdev.IECBytes(u.UsedBytes()+u.AvailBytes()))
		if ip, ok := u.InodePercent(); ok {
			msg += fmt.Sprintf(", inodes %.1f%%", ip)
		}
		usage = []runner.Finding{runner.Passf(codeDiskUsageOK.ID, msg, runner.Detail(usageDetail(u, base, warnPct, failPct), growthDetail...))}
	}
	return append(growth, usage...)
}

// usageFindings judges blocks and inodes against the thresholds.
func usageFindings(u Usage, m mountinfo.Mount, base map[string]string, warnPct, failPct int) []runner.Finding {
	var out []runner.Finding
	d := usageDetail(u, base, warnPct, failPct)
	if pct, ok := u.UsedPercent(); ok {
		st, code := usageStatus(pct, warnPct, failPct, codeDiskUsageHigh, codeDiskUsageCritical)
		if st != runner.Pass {
			out = append(out, code.New(st,
				fmt.Sprintf("%s is %.1f%% full: %s left of %s", m.MountPoint, pct, blockdev.IECBytes(u.AvailBytes()), blockdev.IECBytes(u.UsedBytes()+u.AvailBytes())),
				d, code.Fixf("mount", m.MountPoint)))
		}
	}
	if pct, ok := u.InodePercent(); ok {
		st, code := usageStatus(pct, warnPct, failPct, codeDiskInodesHigh, codeDiskInodesCrit)
		if st != runner.Pass {
			out = append(out, code.New(st,
				fmt.Sprintf("%s has used %.1f%% of its inodes: %d left of %d", m.MountPoint, pct, u.FilesFree, u.Files),
				d, code.Fixf("mount", m.MountPoint)))
		}
	}
	return out
}

func usageStatus(pct float64, warnPct, failPct int, warnCode, failCode runner.Code) (runner.Status, runner.Code) {
	switch {
	case pct > float64(failPct):
		return runner.Fail, failCode
	case pct > float64(warnPct):
		return runner.Warn, warnCode
	}
	return runner.Pass, runner.Code{}
}

func usageDetail(u Usage, base map[string]string, warnPct, failPct int) map[string]string {
	d := runner.Detail(base, "size", blockdev.IECBytes(u.Size()), "size_bytes", fmt.Sprint(u.Size()),
		"used", blockdev.IECBytes(u.UsedBytes()), "used_bytes", fmt.Sprint(u.UsedBytes()),
		"available", blockdev.IECBytes(u.AvailBytes()), "available_bytes", fmt.Sprint(u.AvailBytes()),
		"warn_percent", fmt.Sprint(warnPct), "fail_percent", fmt.Sprint(failPct))
	if pct, ok := u.UsedPercent(); ok {
		d["used_percent"] = fmt.Sprintf("%.1f", pct)
	}
	if pct, ok := u.InodePercent(); ok {
		d["inodes"] = fmt.Sprint(u.Files)
		d["inodes_free"] = fmt.Sprint(u.FilesFree)
		d["inodes_used_percent"] = fmt.Sprintf("%.1f", pct)
	} else {
		d["inodes"] = "not reported by this filesystem"
	}
	return d
}

// growthFindings compares the filesystem with its device and a partition
// with its disk. It also returns detail pairs for the pass finding.
func growthFindings(inv *blockdev.Inventory, dev *blockdev.BlockDevice, m mountinfo.Mount, base map[string]string) ([]runner.Finding, []string) {
	if inv == nil || dev == nil {
		return nil, nil
	}
	var out []runner.Finding
	var kv []string
	what := m.MountPoint + " filesystem"
	if m.MountPoint == "/" {
		what = "root filesystem"
	}
	switch {
	case dev.FS != nil && dev.FS.Size > 0:
		gap := dev.Size - dev.FS.Size
		kv = append(kv, "fs_size", blockdev.IECBytes(dev.FS.Size), "fs_size_bytes", fmt.Sprint(dev.FS.Size),
			"device_size", blockdev.IECBytes(dev.Size), "device_size_bytes", fmt.Sprint(dev.Size))
		if notGrown(gap, dev.Size) {
			fill := []string{"device", dev.Path(), "command", growCommand(dev.FS.Type, dev.Path(), m.MountPoint)}
			fix := codeDiskFSNotGrown.Fixf(fill...)
			if m.MountPoint == "/" {
				fix = codeDiskFSNotGrown.CaseFix("for the root filesystem", fill...)
			}
			out = append(out, codeDiskFSNotGrown.New(runner.Warn,
				fmt.Sprintf("%s is %s on %s of %s: %s is unused", what, blockdev.IECBytes(dev.FS.Size), dev.Path(), blockdev.IECBytes(dev.Size), blockdev.IECBytes(gap)),
				runner.Detail(base, append(kv, "unused", blockdev.IECBytes(gap), "unused_bytes", fmt.Sprint(gap))...), fix))
		}
	case !dev.Probed && dev.Size > 0:
		out = append(out, codeDiskSizeUnverified.New(runner.Skip,
			fmt.Sprintf("%s: cannot read the superblock of %s, so its growth is not checked", m.MountPoint, dev.Path()),
			runner.Detail(base, "probe_note", dev.ProbeNote), codeDiskSizeUnverified.Fixf("device", dev.Path())))
	}
	if free, ok := inv.FreeAfter(dev); ok {
		whole := inv.Disk(dev)
		kv = append(kv, "disk", whole.Path(), "disk_size", blockdev.IECBytes(whole.Size), "disk_size_bytes", fmt.Sprint(whole.Size),
			"unallocated_after_partition", blockdev.IECBytes(free), "unallocated_after_partition_bytes", fmt.Sprint(free))
		if notGrown(free, whole.Size) {
			command := "the resize tool of its filesystem type"
			if dev.FS != nil {
				command = growCommand(dev.FS.Type, dev.Path(), m.MountPoint)
			}
			fill := []string{"disk", whole.Path(), "partition", strconv.Itoa(dev.Partition), "command", command}
			fix := codeDiskPartNotGrown.Fixf(fill...)
			if m.MountPoint == "/" {
				fix = codeDiskPartNotGrown.CaseFix("for the root filesystem", fill...)
			}
			out = append(out, codeDiskPartNotGrown.New(runner.Warn,
				fmt.Sprintf("partition %s (%s) of %s leaves %s of the %s disk unallocated after it", dev.Path(), blockdev.IECBytes(dev.Size), m.MountPoint, blockdev.IECBytes(free), blockdev.IECBytes(whole.Size)),
				runner.Detail(base, kv...), fix))
		}
	}
	return out, kv
}

// growCommand is the command that grows a mounted filesystem to its
// device, in backquotes, or for a type without one here the words that
// send the reader to that type's own tool.
func growCommand(typ, dev, mnt string) string {
	switch typ {
	case "ext2", "ext3", "ext4":
		return "`resize2fs " + dev + "`"
	case "xfs":
		return "`xfs_growfs " + mnt + "`"
	case "btrfs":
		return "`btrfs filesystem resize max " + mnt + "`"
	}
	return "the resize tool of " + typ
}
