// Package blockdev is the guest's block devices as fstab and disk-size
// both see them: the inventory read from /sys and /dev (superblocks and
// partition tables identified with internal/fact/blockid), merged with
// udev's links, and the device behind a mount. It reads through fs.Root
// and writes nothing.
package blockdev
