// Package disk judges block devices and filesystems: RunFstab and
// RunDiskSize are the fstab and disk-size checks, reading their facts
// through check.Env (statfs through Env.Statfs). It also holds the device
// inventory read from /sys and /dev (identified with internal/fact/blockid) and
// filesystem usage. The file formats it reads are parsed in
// internal/parse (fstab, mountinfo, swaps); the freeze primitives are
// in internal/fact/freeze, and fs-freeze is judged in internal/checks/qemu-guest-agent.
// Guest files are read through fs.Root; nothing here writes to a guest
// file.
package disk
