#!/usr/bin/env bash
# Benchmark the systemd check against a real systemd: a `systemd --user`
# with N generated units (default 250: oneshot services in five stages, each
# ordered after a few earlier ones, one failing unit) in a private mount
# namespace whose /run has systemd/system, so guestcheck sees a booted
# systemd. A socket-activated dbus-daemon serves as the "system bus"
# (DBUS_SYSTEM_BUS_ADDRESS). For each binary (default bin/guestcheck):
# the D-Bus method calls one `--only systemd` run makes on the bus (counted
# by dbus-monitor), then hyperfine of all binaries, first through the bus,
# then with /run/systemd/private linked to the manager's private socket,
# which guestcheck as root uses first. Needs root (unshare --mount).
# Usage: scripts/bench-systemd.sh [-n UNITS] [BINARY...]
set -euo pipefail
cd "$(dirname "$0")/.."

n=250
if [ "${1:-}" = -n ]; then
	n=$2
	shift 2
fi
[ "$(id -u)" = 0 ] || { echo "bench-systemd: needs root (a private mount namespace)" >&2; exit 1; }
for t in hyperfine dbus-daemon dbus-monitor unshare python3 systemctl; do
	command -v "$t" >/dev/null || { echo "bench-systemd: $t is missing" >&2; exit 1; }
done
sd=
for p in /usr/lib/systemd/systemd /lib/systemd/systemd; do [ -x "$p" ] && sd=$p && break; done
[ -n "$sd" ] || { echo "bench-systemd: systemd not found (Debian package systemd)" >&2; exit 1; }
if [ $# -eq 0 ]; then
	[ -x bin/guestcheck ] || make build >/dev/null
	set -- bin/guestcheck
fi
bins=()
for b in "$@"; do bins+=("$(realpath "$b")"); done

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/bus.conf" <<'EOF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=/run/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
python3 - "$dir" "$n" <<'PY'
import os, random, sys
random.seed(1)  # the same units every run
d, n = sys.argv[1], int(sys.argv[2])
ud = os.path.join(d, "config/systemd/user")
wants = os.path.join(ud, "default.target.wants")
os.makedirs(wants)
os.makedirs(os.path.join(ud, "sockets.target.wants"))
def write(name, body, wanted_by=None):
    open(os.path.join(ud, name), "w").write(body)
    if wanted_by:
        os.symlink(os.path.join(ud, name), os.path.join(ud, wanted_by + ".wants", name))
stages = 5
per = max(1, n // stages)
for k in range(stages):
    deps = " ".join(f"s{j:03d}.service" for j in range(max(0, (k - 1) * per), k * per)) if k else ""
    write(f"stage{k}.target", f"[Unit]\nAfter={deps}\n")
for i in range(n):
    after = {f"s{random.randrange(0, i):03d}.service" for _ in range(random.randint(1, 4))} if i else set()
    after.add(f"stage{min(i // per, stages - 1)}.target")
    run = "/bin/sleep 0.0%d" % random.randint(1, 3) if random.random() < 0.2 else "/bin/true"
    write(f"s{i:03d}.service", f"[Unit]\nAfter={' '.join(sorted(after))}\n[Service]\nType=oneshot\n"
          f"RemainAfterExit=yes\nExecStart={run}\n", "default.target")
write("fail1.service", "[Service]\nType=oneshot\nExecStart=/bin/false\n", "default.target")
write("dbus.socket", "[Socket]\nListenStream=/run/bus\n", "sockets.target")
write("dbus.service", f"[Service]\nExecStart=/usr/bin/dbus-daemon --config-file={d}/bus.conf --nofork --nopidfile --address=systemd:\n")
PY

# inside runs in the namespace: start the manager, wait for its start-up
# to finish, measure, stop it.
cat >"$dir/inside.sh" <<'EOF'
set -eu
dir=$1 sd=$2
shift 2
mount -t tmpfs tmpfs /run
mkdir -p /run/systemd/system /run/user0
export XDG_RUNTIME_DIR=/run/user0 XDG_CONFIG_HOME=$dir/config HOME=$dir
export DBUS_SESSION_BUS_ADDRESS=unix:path=/run/bus DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/bus
"$sd" --user --log-target=null </dev/null >/dev/null 2>&1 &
mgr=$!
# The manager does not die with the namespace: stop it however this ends.
trap 'kill "$mgr" 2>/dev/null; wait "$mgr" 2>/dev/null' EXIT
for _ in $(seq 150); do
	case "$(systemctl --user show -p FinishTimestampMonotonic --value 2>/dev/null || true)" in
	0 | "") sleep 0.2 ;;
	*) break ;;
	esac
done
# The manager joins the bus once dbus.socket is up; wait for its name.
for _ in $(seq 30); do
	dbus-send --session --reply-timeout=1000 --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetNameOwner \
		string:org.freedesktop.systemd1 >/dev/null 2>&1 && break
	sleep 0.1
done
echo "loaded units: $(systemctl --user list-units --all --no-legend | wc -l)"
for b in "$@"; do
	dbus-monitor --session >"$dir/monitor" 2>&1 &
	mon=$!
	sleep 0.5
	"$b" --only systemd >/dev/null || true
	sleep 0.5
	kill "$mon"
	wait "$mon" 2>/dev/null || true
	echo "$b: $(grep -c '^method call' "$dir/monitor") method calls on the bus:" \
		"$(grep '^method call' "$dir/monitor" | grep -o 'member=[A-Za-z]*' | sort | uniq -c | tr -s ' \n' ' ')"
done
cmds=()
for b in "$@"; do cmds+=("$b --only systemd"); done
echo "== through the bus"
hyperfine -N -i --warmup 5 --runs 40 "${cmds[@]}"
echo "== with /run/systemd/private (used first by guestcheck as root)"
ln -s /run/user0/systemd/private /run/systemd/private
hyperfine -N -i --warmup 5 --runs 40 "${cmds[@]}"
EOF
unshare --mount --propagation private bash "$dir/inside.sh" "$dir" "$sd" "${bins[@]}"
