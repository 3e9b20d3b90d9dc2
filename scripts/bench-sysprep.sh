#!/usr/bin/env bash
# sealprep apply --image, both ways, against virt-sysprep -a, side by side in
# one run, on the same booted-once Debian 12 image (the VM tests' 3 GiB
# image, booted once under QEMU until cloud-init powers it off, flattened
# to qcow2), each tool on its own fresh copy of it:
#   - appliance: sealprep apply --image (the default: the sealing
#     appliance, a throwaway QEMU VM booting this host's /boot kernel with
#     sealprep as its init);
#   - host-kernel: sealprep apply --image --trust-image-filesystems (the
#     image's filesystems mounted on this host's kernel);
#   - virt-sysprep: virt-sysprep -a (libguestfs's direct backend; its
#     appliance is built by supermin from this host's kernel).
# For each, as a whole process: wall seconds, and the peak memory of its
# whole process tree (the sum of VmRSS over the tool and every descendant,
# sampled every 50 ms: the appliance's and libguestfs's QEMU are children
# of the tool; GNU time only gives the largest single process). For the
# appliance also its own appliance seconds (QEMU's start to its end, from
# --format json: .image.appliance.seconds). Each tool first runs once,
# untimed, on a throwaway overlay of the image, so that both appliances
# (sealprep's initramfs, libguestfs's supermin appliance) are cached and
# the measured runs compare warm tools.
# Then two clones of each sealed copy are booted (NoCloud, a new
# instance-id each) until cloud-init powers them off; their /etc/machine-id
# and SSH ed25519 host key are read back, and whether they are distinct.
# Goal (issue 37), under TCG: the appliance at least 4x faster than
# virt-sysprep and under a third of its peak memory, with distinct clones.
# Prints a Markdown table and exits non-zero when a goal is missed.
#
# Needs root, the VM tests' image (make vm-test builds it; or set
# GUESTCHECK_VM_CACHE), bin/sealprep (make build), a kernel in /boot with
# its modules (both appliances boot it), and installs from Debian what is
# missing: libguestfs-tools (virt-sysprep), qemu-system-x86, qemu-utils,
# genisoimage. QEMU runs under TCG (BENCH_ACCEL=kvm to change); the clones
# get user networking, restrict=on.
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
ls /boot/vmlinuz-* >/dev/null 2>&1 || need+=(linux-image-cloud-amd64) # both appliances boot a kernel of /boot
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v qemu-img >/dev/null || need+=(qemu-utils)
command -v genisoimage >/dev/null || need+=(genisoimage)
command -v jq >/dev/null || need+=(jq)
if [ ${#need[@]} -gt 0 ]; then
	echo "bench-sysprep: installing ${need[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

tools=(appliance host-kernel virt-sysprep)

# BENCH_WORK keeps the work directory, and its booted-once image for the
# next run (the first boot is the slow part); otherwise it is removed.
if [ -n "${BENCH_WORK:-}" ]; then
	work=$BENCH_WORK
	mkdir -p "$work"
	rm -rf "$work"/vm-* "$work"/*clone* "$work"/warm-* "$work"/run-* "$work"/identity.raw
	for t in "${tools[@]}"; do rm -f "$work/$t.qcow2"; done
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

# The sampler: the sum of VmRSS over the process tree under ROOT (ROOT and
# every process whose parent chain reaches it, found again at each sample
# from /proc/PID/stat) every INTERVAL seconds until ROOT is gone. It
# writes the peak in KiB, then that sample's processes (name:KiB, largest
# first), then how many samples were taken.
sampler='
use strict; use warnings; use Time::HiRes qw(sleep);
my ($root, $interval, $out) = @ARGV;
my ($peak, $who, $n) = (0, "", 0);
while (-e "/proc/$root/stat") {
	my %parent;
	opendir(my $d, "/proc") or die;
	for my $p (grep { /^\d+$/ } readdir $d) {
		open(my $f, "<", "/proc/$p/stat") or next;
		my $s = <$f>;
		$parent{$p} = $1 if defined $s && $s =~ /\) \S (\d+)/;
	}
	closedir $d;
	my ($sum, @procs) = (0);
	for my $p (keys %parent) {
		my $q = $p;
		$q = $parent{$q} while $q != $root && exists $parent{$q} && $parent{$q} > 1;
		next unless $q == $root;
		open(my $f, "<", "/proc/$p/status") or next;
		my ($name, $rss) = ("?", 0);
		while (<$f>) {
			$name = $1 if /^Name:\s+(\S+)/;
			$rss = $1 if /^VmRSS:\s+(\d+)/;
		}
		$sum += $rss;
		push @procs, [$name, $rss] if $rss;
	}
	$n++;
	if ($sum > $peak) {
		$peak = $sum;
		$who = join " ", map { "$_->[0]:$_->[1]" } sort { $b->[1] <=> $a->[1] } @procs;
	}
	sleep $interval;
}
open(my $o, ">", $out) or die;
print $o "$peak\n$who\n$n\n";
'

# measure LABEL CMD...: runs CMD (stdout to run-LABEL.out, stderr to
# run-LABEL.err) with the sampler on its tree; prints "seconds peak-KiB".
measure() {
	local label=$1 t0 t1 pid rc=0 spid
	shift
	sync
	t0=$EPOCHREALTIME
	"$@" >"$work/run-$label.out" 2>"$work/run-$label.err" &
	pid=$!
	perl -e "$sampler" "$pid" 0.05 "$work/run-$label.rss" &
	spid=$!
	wait "$pid" || rc=$?
	t1=$EPOCHREALTIME
	wait "$spid"
	if [ "$rc" != 0 ]; then
		echo "bench-sysprep: $label: $* exited $rc:" >&2
		tail -20 "$work/run-$label.err" "$work/run-$label.out" >&2
		return 1
	fi
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}') $(head -1 "$work/run-$label.rss")"
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
template=$(identity "$work/booted.qcow2")

# The commands, by tool; IMAGE is replaced by the image's path. libguestfs
# picks KVM whenever /dev/kvm exists: force_tcg matches BENCH_ACCEL.
settings=
[ "$accel" = tcg ] && settings=force_tcg
cmd() { # TOOL IMAGE
	case $1 in
	appliance) echo "$sealprep" apply --yes --format json --accel "$accel" --image "$2" ;;
	host-kernel) echo "$sealprep" apply --yes --format json --trust-image-filesystems --image "$2" ;;
	virt-sysprep) echo env LIBGUESTFS_BACKEND=direct LIBGUESTFS_BACKEND_SETTINGS=$settings virt-sysprep -a "$2" ;;
	esac
}

# Warm-up: each tool once on a throwaway overlay of the image (both
# appliances are built and cached on a first run: supermin's takes tens
# of seconds).
for t in "${tools[@]}"; do
	qemu-img create -q -f qcow2 -F qcow2 -b "$work/booted.qcow2" "$work/warm-$t.qcow2"
	echo "bench-sysprep: warm-up: $t" >&2
	r=$(measure "warm-$t" $(cmd "$t" "$work/warm-$t.qcow2"))
	echo "bench-sysprep: warm-up: $t took ${r%% *} s" >&2
	rm -f "$work/warm-$t.qcow2"
done

declare -A secs kib who
for t in "${tools[@]}"; do
	cp --sparse=always "$work/booted.qcow2" "$work/$t.qcow2"
done
for t in "${tools[@]}"; do
	echo "bench-sysprep: $t: $(cmd "$t" "$work/$t.qcow2")" >&2
	r=$(measure "$t" $(cmd "$t" "$work/$t.qcow2"))
	secs[$t]=${r%% *} kib[$t]=${r#* }
	who[$t]=$(sed -n 2p "$work/run-$t.rss")
	echo "bench-sysprep: $t: ${secs[$t]} s, peak ${kib[$t]} KiB: ${who[$t]}" >&2
done
app_s=$(jq -r '.image.appliance.seconds' "$work/run-appliance.out")
for t in appliance host-kernel; do
	[ "$(jq -r .status "$work/run-$t.out")" = sealed ] ||
		{ echo "bench-sysprep: $t: the report does not say sealed" >&2; exit 1; }
done

declare -A ids
for t in "${tools[@]}"; do
	for n in 1 2; do
		qemu-img create -q -f qcow2 -F qcow2 -b "$work/$t.qcow2" "$work/$t-clone$n.qcow2"
	done
	# One guest at a time: the machine is shared, and TCG is slow enough.
	for n in 1 2; do
		echo "bench-sysprep: booting $t-clone-$n" >&2
		boot "$work/$t-clone$n.qcow2" "$t-clone-$n"
	done
	for n in 1 2; do
		ids[$t$n]=$(identity "$work/$t-clone$n.qcow2")
	done
done

distinct() { # A B: machine-ids and host keys both distinct?
	local a=($1) b=($2) m=same k=same
	[ "${a[0]}" != "${b[0]}" ] && m=distinct
	[ "${a[1]}" != "${b[1]}" ] && k=distinct
	echo "$m|$k"
}
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a / (b > 0 ? b : 0.01)}'; }
# top PROCS: the two largest processes of a peak sample, in MiB.
top() { awk '{for (i = 1; i <= 2 && i <= NF; i++) {split($i, p, ":"); printf "%s%s %.0f", (i > 1 ? ", " : ""), p[1], p[2] / 1024}}' <<<"$1"; }
label() {
	case $1 in
	appliance) echo '`sealprep apply --image` (sealing appliance)' ;;
	host-kernel) echo '`sealprep apply --image --trust-image-filesystems`' ;;
	virt-sysprep) echo "\`virt-sysprep -a\` (libguestfs $(virt-sysprep --version | awk '{print $2}'), direct backend)" ;;
	esac
}

echo
echo "Template: booted-once Debian 12, $(qemu-img info --output=json "$work/booted.qcow2" | awk -F'[:,]' '/"virtual-size"/ {printf "%.0f GiB", $2/2^30}') qcow2, machine-id ${template%% *}; QEMU $accel; kernel $(ls /boot/vmlinuz-* | sort -V | tail -1 | sed 's|.*/vmlinuz-||'); $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| | wall time | peak memory (process tree) | largest at the peak (MiB) | appliance | clone machine-ids | clone SSH host keys |"
echo "|---|---|---|---|---|---|---|"
for t in "${tools[@]}"; do
	d=$(distinct "${ids[${t}1]}" "${ids[${t}2]}")
	a=-
	[ "$t" = appliance ] && a="$app_s s"
	printf '| %s | %s s | %s MiB | %s | %s | %s | %s |\n' "$(label "$t")" "${secs[$t]}" "$(mib "${kib[$t]}")" "$(top "${who[$t]}")" "$a" \
		"${d%|*}: ${ids[${t}1]%% *}, ${ids[${t}2]%% *}" "${d#*|}"
done
echo
speed=$(ratio "${secs[virt-sysprep]}" "${secs[appliance]}")
mem=$(ratio "${kib[virt-sysprep]}" "${kib[appliance]}")
echo "appliance: ${speed}x faster, ${mem}x less memory than virt-sysprep (goal: 4x, 3x)."
echo "host-kernel: $(ratio "${secs[virt-sysprep]}" "${secs[host-kernel]}")x faster, $(ratio "${kib[virt-sysprep]}" "${kib[host-kernel]}")x less memory than virt-sysprep."
fail=0
awk -v s="$speed" 'BEGIN {exit !(s >= 4)}' || { echo "bench-sysprep: goal missed: the appliance is ${speed}x faster than virt-sysprep, want 4x" >&2; fail=1; }
awk -v a="${kib[appliance]}" -v v="${kib[virt-sysprep]}" 'BEGIN {exit !(a * 3 < v)}' ||
	{ echo "bench-sysprep: goal missed: the appliance's peak memory is 1/${mem} of virt-sysprep's, want under 1/3" >&2; fail=1; }
for t in appliance host-kernel; do
	d=$(distinct "${ids[${t}1]}" "${ids[${t}2]}")
	[ "$d" = "distinct|distinct" ] || { echo "bench-sysprep: $t: the clones share identity: $d" >&2; fail=1; }
done
exit $fail
