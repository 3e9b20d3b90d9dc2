#!/usr/bin/env bash
# The Debian packages the test suite needs, in one place for .ci/run and
# make test.
#
#   test-deps.sh install      as root, apt-get install what is missing;
#                             as another user, say what is missing
#   test-deps.sh vm           the same for the packages make vm-test needs
#   test-deps.sh summary LOG  one closing line from the skip log that
#                             internal/testenv writes
set -euo pipefail

# Packages the tests use, and why:
#   dbus       dbus-daemon for the systemd client's "bus without systemd" test
#   make       the test entry point
#   e2fsprogs xfsprogs btrfs-progs dosfstools util-linux mount fdisk
#              mkfs, blkid, losetup, partx and sfdisk for the loop-device disk tests
#   iproute2   network namespaces for the routes and dns tests
#   mmdebstrap the real Debian tree sealprep's TestRealDebian seals
#              (cached under /var/tmp between runs on the same machine)
#   qemu-guest-agent  the real agent whose guest-info the RPC filter is checked against, and
#                 that guestcheck fleet surveys on a unix socket (TestRealQemuGA)
#   systemd    systemd-machine-id-setup and systemd-firstboot, the machine-id oracle;
#              systemd-escape, the oracle for device unit names; systemd-id128
#              --app-specific, the oracle for the report's machine-id hash (util-linux's
#              unshare gives it a private mount namespace); systemd-analyze verify on
#              the example units (test/examples TestSystemdUnits)
#   cloud-init the real `cloud-init status` the status logic is compared with
#   prometheus promtool check metrics, the linter of --format prometheus
#   prometheus-node-exporter  the textfile collector that reads --format prometheus
#   libxml2-utils xmllint --schema, validating --format junit against the stored XSDs
#   perl       TAP::Parser and prove, the readers of --format tap
#   jq         reads --format jsonl as log pipelines do
#   man-db groff-base  man -l and groff -ww, which render the generated man pages
#   bash zsh fish  load the generated completions (bash completes, zsh -n and fish -n parse)
#   dash       sh -n of the #!/bin/sh examples
#   shellcheck lints the shell examples of the README and packaging/examples (test/examples)
#   openssh-server  sshd -T, the truth for sshd_config, and a real sshd whose socket the ssh check attributes
#   openssh-client  ssh-keygen -l/-y, the oracle the OpenSSH private key reader is held to
#   qemu-utils qemu-system-common  qemu-img (image info, lock check, convert to
#              qcow2) and qemu-storage-daemon (the FUSE export) for sealprep --image
#   netplan.io `netplan generate`, the oracle network-config's netplan parser is held to
#   ifupdown   `ifquery`, the oracle the interfaces(5) reader and its includes are held to
#   isc-dhcp-client  dhclient -6, whose own lease file the dhclient lease parser is held to
#   dhcpcd-base dnsmasq-base  dhcpcd, whose DUID and lease files the dhcpcd parsers are held to,
#              and dnsmasq, the DHCP server it leases from (neither package starts a daemon)
#   packer     `packer validate` (1.6.6, QEMU builder built in) of packaging/examples/packer
#   genisoimage  isoinfo -R/-J, which reads sealprep prove's NoCloud seed back by its Rock Ridge and Joliet names
#   linux-image-cloud-amd64  /boot/vmlinuz-* and /lib/modules: the kernel sealprep --image boots its
#              sealing appliance with (supermin's rule: the host's newest kernel with its modules)
#   qemu-system-x86  the appliance's QEMU (sealprep --image seals inside it)
#   cpio       GNU cpio, the oracle the appliance's initramfs writer is held to
#   strace     traces sealprep --image and its children: no mount(2), fsopen(2) or loop ioctl on the host
#   lvm2       pvcreate, vgcreate, lvcreate and lvs: the real LVM2 metadata the lvm2 parser is held to,
#              and the LVM images the appliance activates (activation off on the host: no device mapper)
test_pkgs=(dbus make e2fsprogs xfsprogs btrfs-progs dosfstools util-linux mount fdisk iproute2
	mmdebstrap qemu-guest-agent systemd cloud-init shellcheck prometheus prometheus-node-exporter
	libxml2-utils perl jq openssh-server openssh-client qemu-utils qemu-system-common
	netplan.io ifupdown isc-dhcp-client dhcpcd-base dnsmasq-base packer man-db groff-base bash zsh fish dash genisoimage
	linux-image-cloud-amd64 qemu-system-x86 cpio strace lvm2)
# Packages make vm-test adds: QEMU guests under TCG and their NoCloud seeds,
# and packer for the real build of the Packer example (TestPackerBuild);
# ovmf for sealprep prove's UEFI boots of a template with only an ESP;
# libvirt-daemon-system: the real libvirtd (and its QEMU driver) that
# guestcheck fleet --libvirt surveys in TestVM/fleet (the test starts it).
# The templates TestVM proves (test/vm/bootdisk_test.go, provetemplates_test.go):
#   grub-efi-amd64-bin grub-common  grub-mkstandalone's GRUB for UEFI, the GPT template's bootloader
#   fdisk dosfstools mtools  sfdisk for its partition table, mkfs.vfat and mmd/mcopy for its ESP (no mount)
#   e2fsprogs  debugfs, which reads the sealed templates and copies the kernel's modules out unmounted
#   libguestfs-tools  virt-sysprep, whose default run the virt-sysprep'd template is
#   libxml2-utils  xmllint, which holds prove's JUnit to the stored schemas
vm_pkgs=(qemu-system-x86 qemu-utils genisoimage mmdebstrap packer ovmf libvirt-daemon-system
	grub-efi-amd64-bin grub-common fdisk dosfstools mtools e2fsprogs libguestfs-tools libxml2-utils)

missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
	done
}

install() {
	local miss
	mapfile -t miss < <(missing "$@")
	[ ${#miss[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "test-deps: not root, so not installing ${miss[*]}; the tests that need them skip" >&2
		return 0
	fi
	echo "test-deps: installing ${miss[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${miss[@]}" >/dev/null
}

# summary prints one line: which tiers and tools were skipped, and why.
summary() {
	local log=$1
	if [ ! -s "$log" ]; then
		echo "make test: every tier ran (unprivileged, root, real tools); nothing was skipped for want of root or a tool"
		return 0
	fi
	awk -F'\t' '
		{ n[$1]++; if (!($1 in why)) why[$1] = $3 }
		END {
			line = ""
			for (k in n) {
				name = k
				if (k == "root") name = "the root tier"
				# Tests of permission errors that root never gets.
				else if (k == "unprivileged") name = "the unprivileged-only tests"
				else if (k ~ /^tool:/) name = "tool " substr(k, 6)
				part = sprintf("%s (%d test%s: %s)", name, n[k], n[k] == 1 ? "" : "s", why[k])
				line = line == "" ? part : line "; " part
			}
			print "make test: skipped " line
		}' "$log"
	if [ "$(id -u)" -ne 0 ]; then
		echo "make test: run it as root to run the root tier; it installs the missing packages itself"
	fi
}

case "${1:-}" in
install) install "${test_pkgs[@]}" ;;
vm) install "${vm_pkgs[@]}" ;;
summary) summary "${2:?summary needs the skip log}" ;;
*)
	echo "usage: $0 install|vm|summary LOG" >&2
	exit 2
	;;
esac
