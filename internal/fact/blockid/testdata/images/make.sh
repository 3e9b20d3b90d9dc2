#!/bin/sh
# Regenerates the real-image fixtures used by superblock_test.go and
# partition_test.go: each image is made with the real mkfs/sfdisk tools, its
# first bytes (all that the probe reads) are kept gzipped, and what blkid and
# partx say about the full image is kept next to it for comparison.
# Needs: e2fsprogs xfsprogs btrfs-progs dosfstools util-linux fdisk gzip.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

keep() { # name bytes
	head -c "$2" "$tmp/$1.img" | gzip -9n > "$1.img.gz"
	blkid -c /dev/null -o export "$tmp/$1.img" | grep -v '^DEVNAME=' > "$1.blkid"
}

truncate -s 8M "$tmp/ext2.img"; mkfs.ext2 -q -U 3f1c0e52-7a4b-4c1d-9e2f-0a1b2c3d4e01 -L gc-ext2 "$tmp/ext2.img"; keep ext2 4096
truncate -s 8M "$tmp/ext3.img"; mkfs.ext3 -q -U 3f1c0e52-7a4b-4c1d-9e2f-0a1b2c3d4e02 -L gc-ext3 "$tmp/ext3.img"; keep ext3 4096
truncate -s 64M "$tmp/ext4.img"; mkfs.ext4 -q -U 3f1c0e52-7a4b-4c1d-9e2f-0a1b2c3d4e03 -L "gc ext4 data" "$tmp/ext4.img" 48M; keep ext4 4096
truncate -s 300M "$tmp/xfs.img"; mkfs.xfs -q -m uuid=3f1c0e52-7a4b-4c1d-9e2f-0a1b2c3d4e04 -L gc-xfs "$tmp/xfs.img"; keep xfs 4096
truncate -s 128M "$tmp/btrfs.img"; mkfs.btrfs -q -U 3f1c0e52-7a4b-4c1d-9e2f-0a1b2c3d4e05 -L gc-btrfs "$tmp/btrfs.img"; keep btrfs 69632
truncate -s 64M "$tmp/vfat.img"; mkfs.vfat -F 32 -i 1A2B3C4D -n GCVFAT "$tmp/vfat.img" >/dev/null; keep vfat 2097152
truncate -s 16M "$tmp/vfat16.img"; mkfs.vfat -F 16 -i 0BADCAFE -n GCFAT16 "$tmp/vfat16.img" >/dev/null; keep vfat16 262144
truncate -s 16M "$tmp/swap.img"; mkswap -U 3f1c0e52-7a4b-4c1d-9e2f-0a1b2c3d4e06 -L gc-swap "$tmp/swap.img" >/dev/null 2>&1; keep swap 8192

truncate -s 64M "$tmp/gpt.img"
sfdisk -q "$tmp/gpt.img" <<'T'
label: gpt
label-id: 01234567-89AB-CDEF-0123-456789ABCDEF
start=2048, size=20480, name="EFI system", type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=AABBCCDD-EEFF-0011-2233-445566778899
start=22528, size=40960, name="data disk", uuid=5D0C0FFE-1234-4321-ABCD-0123456789AB
T
head -c 17408 "$tmp/gpt.img" | gzip -9n > gpt.img.gz
partx -g -o NR,START,SECTORS,UUID,NAME,TYPE -P "$tmp/gpt.img" > gpt.partx
blkid -c /dev/null -o export "$tmp/gpt.img" | grep -v '^DEVNAME=' > gpt.blkid

truncate -s 32M "$tmp/dos.img"
sfdisk -q "$tmp/dos.img" <<'T'
label: dos
label-id: 0x5eed1e55
start=2048, size=20480, type=83
start=22528, size=40000, type=5
start=24576, size=10000, type=83
start=36864, size=10000, type=82
T
head -c 18874368 "$tmp/dos.img" | gzip -9n > dos.img.gz
partx -g -o NR,START,SECTORS,UUID,NAME,TYPE -P "$tmp/dos.img" > dos.partx
blkid -c /dev/null -o export "$tmp/dos.img" | grep -v '^DEVNAME=' > dos.blkid
