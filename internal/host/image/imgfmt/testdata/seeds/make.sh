#!/bin/sh
# make.sh regenerates FuzzParse's seeds: the heads of images qemu-img
# makes, one per qcow2 feature and per other format, with small clusters
# and cut to what Parse reads of them, so the seeds stay a few KB each.
# Run it from this directory: sh make.sh
set -eu
out=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
sec="--object secret,id=sec0,data=abc"
q() { name=$1; shift; qemu-img create -q -f qcow2 -o cluster_size=512 "$@" "$name.qcow2" 1M; }
q qcow2-v2 -o compat=0.10
q qcow2-v3
q qcow2-backing -u -b base.img -F raw
q qcow2-backing-abs -u -b /var/lib/images/base.qcow2 -F qcow2
q qcow2-backing-rel -u -b ../sub/base.img -F raw
q qcow2-datafile -o data_file=d1.raw
q qcow2-datafile-raw -o data_file=d2.raw,data_file_raw=on
q qcow2-encrypted $sec -o encrypt.format=luks,encrypt.key-secret=sec0
q qcow2-extended-l2 -o cluster_size=16K,extended_l2=on
q qcow2-zstd -o compression_type=zstd
q qcow2-lazy -o lazy_refcounts=on
q qcow2-snapshot
qemu-img snapshot -c s1 qcow2-snapshot.qcow2
qemu-img create -q -f qcow2 -o cluster_size=2M qcow2-2M.qcow2 1T
qemu-img create -q -f qcow2 -o cluster_size=2M qcow2-2E.qcow2 2E
qemu-img create -q -f qcow -u -b base.img -F raw old.qcow 1M
qemu-img create -q -f qed -u -b base.img -F raw disk.qed 1M
qemu-img create -q -f vmdk sparse.vmdk 1M
qemu-img create -q -f vmdk -o subformat=monolithicFlat flat.vmdk 1M
qemu-img create -q -f vpc dyn.vhd 1M
qemu-img create -q -f vpc -o subformat=fixed fixed.vhd 1M
qemu-img create -q -f vhdx disk.vhdx 1M
qemu-img create -q -f vdi disk.vdi 1M
qemu-img create -q -f parallels disk.hdd 1M
qemu-img create -q -f luks $sec -o key-secret=sec0 disk.luks 1M
for f in *.qcow2 old.qcow disk.qed dyn.vhd disk.vhdx disk.vdi disk.hdd disk.luks; do
	head -c 4096 "$f" >"$out/$f"
done
head -c 12288 sparse.vmdk >"$out/sparse.vmdk"
cp flat.vmdk "$out/flat.vmdk"
tail -c 512 fixed.vhd >"$out/fixed.vhd"
