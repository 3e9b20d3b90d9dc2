#!/bin/sh
# /var/lib/cloud/scripts/per-boot/guestcheck.sh - cloud-init runs every
# executable in this directory at every boot, in its final stage. Use it
# where the guestcheck.service unit is not installed (a binary copied into
# the image by hand). Install with mode 0755.
#
# Like runcmd, this runs inside cloud-init: never exit non-zero here, or
# cloud-init reports the boot as failed.
mkdir -p /run/guestcheck
guestcheck --exit-zero --format json --output /run/guestcheck/per-boot.json >/dev/null
guestcheck --exit-zero --output /run/guestcheck/per-boot.txt | tail -n 1 | logger -t guestcheck
exit 0
