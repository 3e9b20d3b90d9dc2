#!/usr/bin/env bash
# sealprep apply --image against virt-sysprep -a, side by side, on the same
# booted-once Debian 12 image (the VM tests' 3 GiB image, booted once under
# QEMU until cloud-init powers it off, flattened to qcow2), copied twice:
#   - wall time and peak RSS of each as a whole process (GNU time's
#     maximum resident set of the process tree: virt-sysprep's appliance
#     QEMU, sealprep's qemu-storage-daemon), attach and detach included;
#   - two clones of each sealed copy booted (NoCloud, a new instance-id
#     each) until cloud-init powers them off; their /etc/machine-id and SSH
#     ed25519 host key read back, and whether they are distinct.
# Goal: sealprep at least 30x faster and 50x less memory, with distinct
# clones. Prints a Markdown table (for docs/sealprep.md) and exits non-zero
# when a goal is missed.
#
# Needs root, the VM tests' image (make vm-test builds it; or set
# GUESTCHECK_VM_CACHE), bin/sealprep (make build), and installs from Debian
# what is missing: libguestfs-tools (virt-sysprep, guestfish), a Debian
# kernel for its appliance, qemu-system-x86, qemu-utils, genisoimage, time.
# QEMU runs under TCG (BENCH_ACCEL=kvm to change); user networking, restrict=on.
set -euo pipefail
cd "$(dirname "$0")/.."

[ "$(id -u)" = 0 ] || { echo "bench-sysprep: needs root (loop devices, mounts)" >&2; exit 1; }
cache=${GUESTCHECK_VM_CACHE:-/var/tmp/guestcheck-vm-cache}
base=$(ls -t "$cache"/image-*/root.img 2>/dev/null | head -1 || true)
[ -n "$base" ] || { echo "bench-sysprep: no VM test image in $cache: run make vm-test first, or set GUESTCHECK_VM_CACHE" >&2; exit 1; }
imgdir=$(dirname "$base")
sealprep=${SEALPREP:-bin/sealprep}
[ -x "$sealprep" ] || { echo "bench-sysprep: $sealprep missing: make build" >&2; exit 1; }

need=()
command -v virt-sysprep >/dev/null || need+=(libguestfs-tools)
ls /boot/vmlinuz-* >/dev/null 2>&1 || need+=(linux-image-amd64) # supermin builds its appliance from a Debian kernel
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v qemu-img >/dev/null || need+=(qemu-utils)
command -v genisoimage >/dev/null || need+=(genisoimage)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
	echo "bench-sysprep: installing ${need[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# BENCH_WORK keeps the work directory, and its booted-once image for the
# next run (the first boot is the slow part); otherwise it is removed.
if [ -n "${BENCH_WORK:-}" ]; then
	work=$BENCH_WORK
	mkdir -p "$work"
	rm -rf "$work"/vm-* "$work"/*clone* "$work"/virt-sysprep.qcow2 "$work"/sealprep.qcow2 "$work"/time-*
else
	work=$(mktemp -d /var/tmp/bench-sysprep.XXXXXX)
	trap 'rm -rf "$work"' EXIT
fi
# TCG, as the VM tests: /dev/kvm exists on some CI hosts without working
# (nested virtualisation off); BENCH_ACCEL=kvm where it works.
accel=${BENCH_ACCEL:-tcg}

# seed DIR INSTANCE-ID: a NoCloud seed whose user-data powers the guest off
# once cloud-init is done.
seed() {
	mkdir -p "$1"
	printf 'instance-id: %s\nlocal-hostname: %s\n' "$2" "$2" >"$1/meta-data"
	printf '#cloud-config\npower_state:\n  mode: poweroff\n  delay: now\n  condition: true\n' >"$1/user-data"
	printf 'version: 1\nconfig:\n  - type: physical\n    name: ens4\n    subnets:\n      - type: static\n        address: 192.0.2.15/24\n' >"$1/network-config"
	genisoimage -quiet -output "$1/seed.iso" -volid cidata -joliet -rock "$1/meta-data" "$1/user-data" "$1/network-config"
}

# boot DISK NAME: boot the qcow2 DISK until it powers itself off (20 min cap).
boot() {
	local disk=$1 name=$2 d=$work/vm-$2
	seed "$d" "$name"
	timeout 20m qemu-system-x86_64 -accel "$accel" -m 1024 -smp 1 -no-reboot -nodefaults -display none \
		-serial "file:$d/console.log" -monitor none \
		-kernel "$imgdir/vmlinuz" -initrd "$imgdir/initrd.img" -append "root=/dev/vda rw console=ttyS0 panic=-1" \
		-drive "file=$disk,if=none,id=root,format=qcow2" -device virtio-blk-pci,drive=root,addr=0x5 \
		-drive "file=$d/seed.iso,if=none,id=seed,format=raw,readonly=on" -device virtio-blk-pci,drive=seed,addr=0x7 \
		-netdev "user,id=n0,restrict=on,ipv6=off,net=192.0.2.0/24" -device virtio-net-pci,netdev=n0,addr=0x4 \
		-object rng-random,filename=/dev/urandom,id=rng0 -device virtio-rng-pci,rng=rng0,addr=0xa ||
		{ echo "bench-sysprep: $name did not power off; console tail:" >&2; tail -20 "$d/console.log" >&2; return 1; }
	# QEMU also exits 0 when it is killed: only the guest's own power-off counts.
	grep -q 'reboot: Power down' "$d/console.log" ||
		{ echo "bench-sysprep: $name stopped without powering off; console tail:" >&2; tail -20 "$d/console.log" >&2; return 1; }
}

# identity DISK: "machine-id host-key" of a powered-off disk (the image is
# one ext4 filesystem, no partition table): flattened to raw and read with
# debugfs, so no appliance boots and nothing is written.
identity() {
	local raw=$work/identity.raw id key
	qemu-img convert -O raw "$1" "$raw"
	id=$(debugfs -R 'cat /etc/machine-id' "$raw" 2>/dev/null | tr -d '[:space:]')
	# A digest of the whole key: every ed25519 key starts with the same
	# base64 of its type.
	key=$(debugfs -R 'cat /etc/ssh/ssh_host_ed25519_key.pub' "$raw" 2>/dev/null | awk 'NF >= 2 {print $2}')
	[ -n "$key" ] && key=$(printf '%s' "$key" | sha256sum | cut -c1-16)
	rm -f "$raw"
	echo "${id:-(empty)} ${key:-(none)}"
}

if [ ! -s "$work/booted.qcow2" ]; then
	# A private copy: the VM tests may replace their cached image meanwhile.
	cp --sparse=always "$base" "$work/base.img"
	cp "$imgdir/vmlinuz" "$imgdir/initrd.img" "$work/"
	echo "bench-sysprep: booting $base once ($accel) until cloud-init powers it off" >&2
	qemu-img create -q -f qcow2 -F raw -b "$work/base.img" "$work/first.qcow2"
	imgdir=$work
	boot "$work/first.qcow2" bench-template
	qemu-img convert -O qcow2 "$work/first.qcow2" "$work/booted.qcow2.tmp"
	rm "$work/first.qcow2" "$work/base.img"
	mv "$work/booted.qcow2.tmp" "$work/booted.qcow2"
fi
imgdir=$work
cp --sparse=always "$work/booted.qcow2" "$work/virt-sysprep.qcow2"
cp --sparse=always "$work/booted.qcow2" "$work/sealprep.qcow2"
template=$(identity "$work/booted.qcow2")

measure() { # LABEL CMD...: "seconds max-rss-KiB"
	local t=$work/time-$1
	shift
	/usr/bin/time -f '%e %M' -o "$t" "$@" >"$t.log" 2>&1 || { echo "bench-sysprep: $* failed:" >&2; tail -20 "$t.log" >&2; return 1; }
	cat "$t"
}
sync
echo "bench-sysprep: virt-sysprep -a (LIBGUESTFS_BACKEND=direct)" >&2
# libguestfs picks KVM whenever /dev/kvm exists; force TCG to match.
settings=
[ "$accel" = tcg ] && settings=force_tcg
read -r vs_s vs_kb < <(measure virt-sysprep env LIBGUESTFS_BACKEND=direct LIBGUESTFS_BACKEND_SETTINGS=$settings virt-sysprep -a "$work/virt-sysprep.qcow2")
echo "bench-sysprep: sealprep apply --yes --image" >&2
read -r sp_s sp_kb < <(measure sealprep "$sealprep" apply --yes --image "$work/sealprep.qcow2")

declare -A ids
for tool in virt-sysprep sealprep; do
	for n in 1 2; do
		qemu-img create -q -f qcow2 -F qcow2 -b "$work/$tool.qcow2" "$work/$tool-clone$n.qcow2"
	done
	# One guest at a time: the machine is shared, and TCG is slow enough.
	for n in 1 2; do
		boot "$work/$tool-clone$n.qcow2" "$tool-clone-$n"
	done
	for n in 1 2; do
		ids[$tool$n]=$(identity "$work/$tool-clone$n.qcow2")
	done
done

distinct() { # A B: machine-ids and host keys both distinct?
	local a=($1) b=($2) m=same k=same
	[ "${a[0]}" != "${b[0]}" ] && m=distinct
	[ "${a[1]}" != "${b[1]}" ] && k=distinct
	echo "$m|$k"
}
vs_d=$(distinct "${ids[virt-sysprep1]}" "${ids[virt-sysprep2]}")
sp_d=$(distinct "${ids[sealprep1]}" "${ids[sealprep2]}")
speed=$(awk -v a="$vs_s" -v b="$sp_s" 'BEGIN {printf "%.0f", a / (b > 0 ? b : 0.01)}')
mem=$(awk -v a="$vs_kb" -v b="$sp_kb" 'BEGIN {printf "%.0f", a / b}')

echo
echo "Template: booted-once Debian 12, $(qemu-img info --output=json "$work/booted.qcow2" | awk -F'[:,]' '/"virtual-size"/ {printf "%.0f GiB", $2/2^30}') qcow2, machine-id ${template%% *}; QEMU $accel; $(nproc) cores."
echo
echo "| | wall time | peak RSS | clone machine-ids | clone SSH host keys |"
echo "|---|---|---|---|---|"
printf '| `virt-sysprep -a` (libguestfs %s, direct backend) | %s s | %s MB | %s | %s |\n' \
	"$(virt-sysprep --version | awk '{print $2}')" "$vs_s" "$((vs_kb / 1024))" "${vs_d%|*}: ${ids[virt-sysprep1]%% *}, ${ids[virt-sysprep2]%% *}" "${vs_d#*|}"
printf '| `sealprep apply --image` (attach and detach included) | %s s | %s MB | %s | %s |\n' \
	"$sp_s" "$(awk -v k="$sp_kb" 'BEGIN {printf "%.1f", k / 1024}')" "${sp_d%|*}: ${ids[sealprep1]%% *}, ${ids[sealprep2]%% *}" "${sp_d#*|}"
echo
echo "sealprep: ${speed}x faster, ${mem}x less memory than virt-sysprep."
fail=0
[ "$speed" -ge 30 ] || { echo "bench-sysprep: goal missed: ${speed}x faster, want 30x" >&2; fail=1; }
[ "$mem" -ge 50 ] || { echo "bench-sysprep: goal missed: ${mem}x less memory, want 50x" >&2; fail=1; }
[ "$sp_d" = "distinct|distinct" ] || { echo "bench-sysprep: sealprep's clones share identity: $sp_d" >&2; fail=1; }
exit $fail
