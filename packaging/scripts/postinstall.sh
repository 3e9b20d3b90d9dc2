#!/bin/sh
# postinstall: enable guestcheck.service so that it runs at every boot.
# deb: $1 = configure (install and upgrade); rpm: $1 = 1 install, 2 upgrade.
#
# Enabling must also work when the package is installed into a chroot or an
# image being built, where systemd is not running: "systemctl enable" only
# creates the [Install] symlinks and works offline (verified on Debian 12).
# Without systemctl the symlink is made by hand. daemon-reload only on a
# running systemd.
set -e
unit=guestcheck.service
first_install=false
case "${1:-}" in
	configure) [ -z "${2:-}" ] && first_install=true ;; # deb: $2 = previous version
	1) first_install=true ;;                           # rpm
esac
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
# Enable on first install only: an administrator's "systemctl disable"
# survives upgrades.
if [ "$first_install" = true ]; then
	if command -v systemctl >/dev/null 2>&1; then
		systemctl enable "$unit" >/dev/null 2>&1 || true
	fi
	if [ ! -e "/etc/systemd/system/multi-user.target.wants/$unit" ]; then
		mkdir -p /etc/systemd/system/multi-user.target.wants
		ln -sf "/usr/lib/systemd/system/$unit" "/etc/systemd/system/multi-user.target.wants/$unit"
	fi
fi
# An edited configuration survives upgrades (a conffile), and the new
# version may refuse what the old one took. Say so now, with the file's
# own problems, rather than at the next boot's exit 3; never fail the
# install for it. Exit 3 is check-config's "invalid"; anything else (no
# binary that runs here, as in a foreign-architecture chroot) is skipped.
if command -v guestcheck >/dev/null 2>&1; then
	status=0
	problems=$(guestcheck check-config 2>&1 >/dev/null) || status=$?
	if [ "$status" -eq 3 ]; then
		echo "guestcheck: warning: /etc/guestcheck/guestcheck.yaml is not valid for this version; guestcheck exits 3 without checking until it is fixed (see guestcheck.yaml(5)):" >&2
		printf '%s\n' "$problems" | sed 's/^/  /' >&2
	fi
fi
exit 0
