// Package blockid identifies block devices from their bytes, as blkid and
// partx do on the formats it knows: the superblocks of ext2/3/4, xfs,
// btrfs, vfat and swap (type, UUID, label, size), and GPT and MBR
// partition tables (PTUUID, PARTUUID, PARTLABEL). It reads through an
// io.ReaderAt and imports nothing of guestcheck's checks or configuration,
// so that sealprep's --image can use it without linking them.
package blockid
