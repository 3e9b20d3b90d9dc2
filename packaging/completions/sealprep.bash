# bash completion for sealprep; generated from its option table.
_sealprep() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev= sub= i j=$((COMP_CWORD-1)) fmt= brk=
	if [[ $cur == [=:] ]]; then cur= j=$COMP_CWORD; fi
	if [[ ${COMP_WORDS[j]} == : ]]; then fmt=${COMP_WORDS[j-1]}: brk=1 j=$((j-2)); fi
	if [[ ${COMP_WORDS[j]} == = ]]; then brk=1 j=$((j-1)); fi
	prev=${COMP_WORDS[j]}
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in list|plan|apply|verify|prove|help|completion) sub=${COMP_WORDS[i]}; break ;; esac
	done
	case $prev in
	--format) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
	--ops) local pre= last=$cur w="defaults all cloud-init template-record ssh-host-keys hostname net-mac-pins dhcp-leases nm-identity random-seed systemd-credential-secret host-credentials machine-id-cmdline machine-id-credential lvm-devices-file crash-data journal login-records logfiles shell-history tmp passwd-backups package-cache cloud-init-installer-pins cloud-init-seed authorized-keys resolv-conf cron-spool mail-spool nm-connections machine-info root-password-lock selinux-autorelabel machine-id"; [[ $cur == *,* ]] && pre=${cur%,*}, && last=${cur##*,}; [[ $last == [-+]* ]] && pre=$pre${last:0:1} last=${last:1} w="cloud-init template-record ssh-host-keys hostname net-mac-pins dhcp-leases nm-identity random-seed systemd-credential-secret host-credentials machine-id-cmdline machine-id-credential lvm-devices-file crash-data journal login-records logfiles shell-history tmp passwd-backups package-cache cloud-init-installer-pins cloud-init-seed authorized-keys resolv-conf cron-spool mail-spool nm-connections machine-info root-password-lock selinux-autorelabel machine-id"; COMPREPLY=($(compgen -P "$pre" -W "$w" -- "$last")); return ;;
	--allow-backing) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--root) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--image) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--appliance-kernel) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--accel) COMPREPLY=($(compgen -W "auto kvm tcg" -- "$cur")); return ;;
	--machine-id-mode) COMPREPLY=($(compgen -W "empty uninitialized" -- "$cur")); return ;;
	--clones) return ;;
	--memory) return ;;
	--cpus) return ;;
	--firmware) COMPREPLY=($(compgen -W "auto bios uefi" -- "$cur")); return ;;
	--firmware-uuid) COMPREPLY=($(compgen -W "per-clone shared" -- "$cur")); return ;;
	--kernel) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--initrd) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--append) return ;;
	--timeout) return ;;
	--copy) COMPREPLY=($(compgen -W "harvester-clone harvester-restore-new kubevirt-restore kubevirt-clone proxmox-clone proxmox-restore" -- "$cur")); return ;;
	--boot-budget) return ;;
	--user-data) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--network-config) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--keep) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--junit) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--json) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	esac
	[[ -n $brk ]] && return
	case $sub in
	list) COMPREPLY=($(compgen -W "--ops --format --help -h" -- "$cur")) ;;
	plan|verify) COMPREPLY=($(compgen -W "--allow-backing --root --image --trust-image-filesystems --appliance-kernel --accel --ops --format --machine-id-mode --autorelabel --force --help -h" -- "$cur")) ;;
	apply) COMPREPLY=($(compgen -W "--allow-backing --root --image --trust-image-filesystems --appliance-kernel --accel --ops --format --machine-id-mode --autorelabel --force --yes -y --poweroff --fstrim --help -h" -- "$cur")) ;;
	prove) COMPREPLY=($(compgen -W "--image --clones --memory --cpus --firmware --firmware-uuid --kernel --initrd --append --accel --timeout --reboot --copy --boot-budget --user-data --network-config --allow-backing --keep --format --junit --json --help -h" -- "$cur")) ;;
	help) COMPREPLY=($(compgen -W "--help -h list plan apply verify prove help completion" -- "$cur")) ;;
	completion) COMPREPLY=($(compgen -W "--help -h bash zsh fish" -- "$cur")) ;;
	*) COMPREPLY=($(compgen -W "--version --format --help -h list plan apply verify prove help completion" -- "$cur")) ;;
	esac
}
complete -F _sealprep sealprep
