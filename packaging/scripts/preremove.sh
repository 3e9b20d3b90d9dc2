#!/bin/sh
# preremove: disable guestcheck.service when the package is removed, not
# when it is upgraded. deb: $1 = remove | upgrade; rpm: $1 = 0 erase, 1 upgrade.
set -e
unit=guestcheck.service
case "${1:-}" in
	remove | 0) ;;
	*) exit 0 ;;
esac
if command -v systemctl >/dev/null 2>&1; then
	systemctl disable "$unit" >/dev/null 2>&1 || true
fi
rm -f "/etc/systemd/system/multi-user.target.wants/$unit"
exit 0
