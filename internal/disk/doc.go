// Package disk judges block devices and filesystems: RunFstab and
// RunDiskSize are the fstab and disk-size checks, reading their facts
// through check.Env (statfs through Env.Statfs). It also holds the device
// inventory read from /sys and /dev (identified with internal/blockid),
// filesystem usage, and the freeze primitives behind fs-freeze's
// --freeze-test. The file formats it reads are parsed in
// internal/guestfile (fstab, mountinfo, swaps). fs-freeze is judged in
// internal/guestagent, beside the agent probe it shares; guestagent
// imports this package, not the other way round. Guest files are read
// through fs.Root; nothing here writes to a guest file.
package disk
