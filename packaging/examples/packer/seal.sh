#!/bin/sh
# The template's shutdown_command runs this as root, the build's last step:
#
#   sh /tmp/packer-seal.sh BUILD_USER [SEALPREP_APPLY_OPTIONS...]
#
# 1. It deletes the build user of seed/user-data (account, home, sudoers
#    file, sshd drop-in): the template keeps no build password or key.
# 2. It runs `sealprep apply --poweroff` with the options given (--yes,
#    --ops ...), which seals and powers the VM off itself, so nothing that
#    runs at shutdown writes identity back.
# 3. If sealprep refuses or fails, it writes sealprep's report and one
#    "packer-seal: NOT SEALED" line to the serial console (the template
#    captures it in a file) and powers the VM off unsealed at once. Packer
#    ignores a shutdown command's exit status and would otherwise wait
#    shutdown_timeout for a VM that never stops, then say only "Timeout
#    while waiting for machine to shut down"; the template's
#    post-processor finds the line instead and fails the build.
# Every line also goes to stdout or stderr, which Packer shows in its log.
# sealprep's tmp operation removes this script from /tmp.
set -u
user=${1:?usage: packer-seal.sh BUILD_USER [SEALPREP_APPLY_OPTIONS...]}
shift
console=/dev/ttyS0

# say writes one line to stderr and to the serial console.
say() {
	printf 'packer-seal: %s\n' "$*" >&2
	printf 'packer-seal: %s\n' "$*" >"$console" 2>/dev/null || true
}

say "deleting the build user $user, its sudo and sshd rules and its /etc/hosts line"
rm -f /etc/sudoers.d/packer-build /etc/ssh/sshd_config.d/10-packer-build.conf
sed -i '/^127\.0\.1\.1 packer-build$/d' /etc/hosts
# --force: Packer's own session still runs as the user.
userdel --force --remove "$user" 2>/dev/null
if id "$user" >/dev/null 2>&1; then
	say "NOT SEALED: userdel left the build user $user"
	sync
	systemctl poweroff --force
	exit 1
fi

say "sealprep apply --poweroff $*"
rcfile=/run/packer-seal.rc
# The report and progress go to Packer's log and to the console; on
# success sealprep powers off before this pipe ends.
{
	/usr/sbin/sealprep apply --poweroff "$@" 2>&1
	echo $? >"$rcfile"
} | tee "$console" 2>/dev/null
rc=$(cat "$rcfile" 2>/dev/null || echo 1)
# 0: sealed, and systemd is already powering the VM off.
[ "$rc" = 0 ] && exit 0
say "NOT SEALED: sealprep apply exited $rc; its report is above. Powering off unsealed: the build fails"
sync
systemctl poweroff --force
exit "$rc"
