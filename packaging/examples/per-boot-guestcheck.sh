#!/bin/sh
# /var/lib/cloud/scripts/per-boot/guestcheck.sh - cloud-init runs every
# executable in this directory at every boot, in its final stage. Use it
# where the guestcheck.service unit is not installed (a binary copied into
# the image by hand). Install with mode 0755.
#
# One run, as the boot unit does: it writes the JSON and the text report
# (guestcheck makes /run/guestcheck itself) and prints its one-line verdict,
# which goes to syslog/the journal. Like runcmd, this runs inside
# cloud-init: never exit non-zero here, or cloud-init reports the boot as
# failed.
guestcheck --exit-zero --summary \
	--output json:/run/guestcheck/per-boot.json --output text:/run/guestcheck/per-boot.txt |
	logger -t guestcheck
exit 0
