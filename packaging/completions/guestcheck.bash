# bash completion for guestcheck; generated from its option table.
_guestcheck() {
	local cur prev sub i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	sub=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in probe|explain|check-config|help|completion) sub=${COMP_WORDS[i]}; break ;; esac
	done
	case $sub in
	probe)
		case $prev in
		--config)
			COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--timeout)
			return ;;
		esac
		COMPREPLY=($(compgen -W "--config --timeout --help -h" -- "$cur"))
		;;
	explain)
		case $prev in
		esac
		COMPREPLY=($(compgen -W "--help -h" -- "$cur"))
		;;
	check-config)
		case $prev in
		esac
		COMPREPLY=($(compgen -W "--help -h" -- "$cur"))
		;;
	help)
		case $prev in
		esac
		COMPREPLY=($(compgen -W "--help -h" -- "$cur"))
		;;
	completion)
		case $prev in
		esac
		COMPREPLY=($(compgen -W "--help -h" -- "$cur"))
		;;
	*)
		case $prev in
		--only)
			local pre="" last=$cur
			[[ $cur == *,* ]] && pre=${cur%,*}, && last=${cur##*,}
			COMPREPLY=($(compgen -P "$pre" -W "cloud-init cloud-config hostname routes dns network-identity network-config qemu-guest-agent fs-freeze fstab disk-size ssh systemd time-sync" -- "$last")); return ;;
		--skip)
			local pre="" last=$cur
			[[ $cur == *,* ]] && pre=${cur%,*}, && last=${cur##*,}
			COMPREPLY=($(compgen -P "$pre" -W "cloud-init cloud-config hostname routes dns network-identity network-config qemu-guest-agent fs-freeze fstab disk-size ssh systemd time-sync" -- "$last")); return ;;
		--root)
			COMPREPLY=($(compgen -d -- "$cur")); return ;;
		--format)
			COMPREPLY=($(compgen -W "text json prometheus nagios junit tap jsonl" -- "$cur")); return ;;
		--output)
			COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--exit-codes)
			COMPREPLY=($(compgen -W "guestcheck nagios" -- "$cur")); return ;;
		--service-name)
			return ;;
		--config)
			COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--timeout)
			return ;;
		--wait)
			return ;;
		--freeze-test)
			COMPREPLY=($(compgen -d -- "$cur")); return ;;
		--color)
			COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
		esac
		COMPREPLY=($(compgen -W "--only --skip --list --root --format --output --exit-codes --service-name --summary --config --timeout --wait --exit-zero --freeze-test --color --verbose -v --version --help -h probe explain check-config help completion" -- "$cur"))
		;;
	esac
}
complete -F _guestcheck guestcheck
