#!/usr/bin/env bash
# Benchmark guestcheck against cloud-init's own status command on this
# machine, side by side in one hyperfine run, and check the speed, size and
# memory goals (ratios of medians):
#   - guestcheck --only cloud-init,hostname --format json at least 50x
#     faster than cloud-init status --long --format json
#   - guestcheck probe (the exec-probe subset) at least 100x faster than
#     cloud-init status --long
#   - a whole default run (guestcheck --summary) at least 50x faster than
#     cloud-init status --long
#   - peak RSS of each guestcheck command at most 15 MiB
#   - each static binary at most 8 MiB
# The ratios depend on the machine's load and its block devices (the probe
# and a whole run read every device in /sys/class/block): run it on an
# otherwise idle machine.
# Both commands read the same cloud-init state: a real capture from a
# Debian 12 guest (internal/checks/cloud-init/testdata/real/debian12-healthy, made by
# the same cloud-init 22.4 that Debian 12 installs here) is copied to a
# tmpfs mounted over /run/cloud-init inside a private mount namespace, so the
# host is not changed. Needs root for that namespace;
# installs hyperfine, cloud-init and GNU time from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v cloud-init >/dev/null || need+=(cloud-init)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench: missing ${need[*]}; install them (apt-get install ${need[*]}) or run as root" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

fixture=internal/checks/cloud-init/testdata/real/debian12-healthy
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Everything below runs in a private mount namespace when we are root.
inner() {
	set -euo pipefail
	if [ -d "$fixture" ] && [ "$(id -u)" = 0 ]; then
		# Never create /run/cloud-init on the host: when it is missing, a
		# private tmpfs over /run (in this namespace only) holds it.
		if [ -d /run/cloud-init ]; then
			mount -t tmpfs tmpfs /run/cloud-init
		else
			mount -t tmpfs tmpfs /run && mkdir /run/cloud-init
		fi
		for f in status.json result.json instance-data.json; do
			[ -f "$fixture/$f" ] && cp "$fixture/$f" /run/cloud-init/
		done
		echo "bench: cloud-init state from $fixture"
	else
		echo "bench: no fixture mounted; both tools read this machine's own (absent) cloud-init state"
	fi
	# An empty configuration file: this machine's own /etc/guestcheck never
	# changes what is measured, every command runs its defaults.
	: >"$out/empty.yaml"
	cfg="--config $out/empty.yaml"
	hyperfine --warmup 3 --min-runs 30 -N --ignore-failure \
		--export-json "$out/hf.json" \
		-n guestcheck "./bin/guestcheck $cfg --only cloud-init,hostname --format json" \
		-n probe "./bin/guestcheck probe $cfg" \
		-n whole-run "./bin/guestcheck $cfg --summary" \
		-n cloud-init 'cloud-init status --long --format json' \
		-n cloud-init-long 'cloud-init status --long'
	/usr/bin/time -f '%M' -o "$out/rss-guestcheck" ./bin/guestcheck $cfg --only cloud-init,hostname --format json >/dev/null || true
	/usr/bin/time -f '%M' -o "$out/rss-probe" ./bin/guestcheck probe $cfg >/dev/null || true
	/usr/bin/time -f '%M' -o "$out/rss-whole-run" ./bin/guestcheck $cfg --summary >/dev/null || true
	/usr/bin/time -f '%M' -o "$out/rss-cloud-init-long" cloud-init status --long >/dev/null || true
	echo "bench: probe says: $(./bin/guestcheck probe $cfg)"
	echo "bench: whole run says: $(./bin/guestcheck $cfg --summary)"
}
export -f inner
export fixture out
if [ "$(id -u)" = 0 ]; then
	unshare -m --propagation private bash -c inner
else
	inner
fi

python3 - "$out" bin/guestcheck bin/sealprep <<'PY'
import json, os, sys
out = sys.argv[1]
hf = json.load(open(os.path.join(out, "hf.json")))
med = {r["command"]: r["median"] for r in hf["results"]}
def rss(name):
    return int(open(os.path.join(out, "rss-" + name)).read().split()[-1])
ok = True
for name in ("guestcheck", "probe", "whole-run", "cloud-init", "cloud-init-long"):
    print(f"median {name:16s} {med[name]*1000:8.2f} ms")
for name, base, goal in (("guestcheck", "cloud-init", 50), ("probe", "cloud-init-long", 100), ("whole-run", "cloud-init-long", 50)):
    ratio = med[base] / med[name]
    print(f"ratio {name:10s} vs {base:15s} {ratio:7.1f}x  (goal >= {goal}x)")
    ok &= ratio >= goal
for name in ("guestcheck", "probe", "whole-run"):
    kib = rss(name)
    print(f"peak RSS {name:13s} {kib/1024:8.2f} MiB (goal <= 15 MiB)")
    ok &= kib <= 15 * 1024
print(f"peak RSS cloud-init-long {rss('cloud-init-long')/1024:8.2f} MiB (for comparison)")
for b in sys.argv[2:]:
    size = os.path.getsize(b)
    print(f"size {os.path.basename(b):13s} {size/2**20:8.2f} MiB (goal <= 8 MiB)")
    ok &= size <= 8 * 2**20
print("bench: all goals met" if ok else "bench: GOAL MISSED")
sys.exit(0 if ok else 1)
PY
