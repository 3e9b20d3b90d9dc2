#!/bin/sh
# postremove: forget the unit and, on purge, the reports it left in /run.
# deb: $1 = remove | purge | upgrade | ...; rpm: $1 = 0 erase, 1 upgrade.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
case "${1:-}" in
	purge | 0) rm -rf /run/guestcheck ;;
esac
exit 0
