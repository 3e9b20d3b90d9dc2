// Package disksize judges the disk-size check: every block-backed
// filesystem fills its partition and the partition its disk (growpart and
// resize ran), and none is nearly full of blocks or inodes. Run
// reads its facts through runner.Env (statfs through Env.Statfs) and the
// block devices from internal/fact/blockdev, shared with fstab.
package disksize
