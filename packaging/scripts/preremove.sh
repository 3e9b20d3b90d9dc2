#!/bin/sh
# preremove: disable guestcheck.service, and stop and disable
# guestcheck-textfile.timer if an administrator enabled it, when the
# package is removed, not when it is upgraded. The metrics file the timer
# wrote in node_exporter's default directory goes too: left behind, it
# would keep exporting the last verdict.
# deb: $1 = remove | upgrade; rpm: $1 = 0 erase, 1 upgrade.
set -e
unit=guestcheck.service
case "${1:-}" in
	remove | 0) ;;
	*) exit 0 ;;
esac
timer=guestcheck-textfile.timer
if command -v systemctl >/dev/null 2>&1; then
	systemctl disable "$unit" >/dev/null 2>&1 || true
	if [ -d /run/systemd/system ]; then
		systemctl stop "$timer" guestcheck-textfile.service >/dev/null 2>&1 || true
	fi
	systemctl disable "$timer" >/dev/null 2>&1 || true
fi
rm -f "/etc/systemd/system/multi-user.target.wants/$unit" "/etc/systemd/system/timers.target.wants/$timer"
rm -f /var/lib/prometheus/node-exporter/guestcheck.prom
exit 0
