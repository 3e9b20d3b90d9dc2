// Package disk owns what guestcheck knows about block devices and
// filesystems: the fstab and mountinfo parsers, the pure-Go superblock and
// partition-table probes (equal to blkid and partx on the formats it
// knows), the device inventory read from /sys and /dev, filesystem usage,
// and the freeze primitives behind fs-freeze's --freeze-test. It also
// judges them: RunFstab and RunDiskSize are the fstab and disk-size
// checks, reading their facts through check.Env (statfs through
// Env.Statfs). fs-freeze is judged in internal/guestagent, beside the
// agent probe it shares; guestagent imports this package, not the other
// way round. Guest files are read through fs.Root; nothing here writes to
// a guest file.
package disk
