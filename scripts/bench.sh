#!/usr/bin/env bash
# Benchmark guestcheck against cloud-init's own status command on this
# machine, in one hyperfine run, and check the size and memory goals:
#   - guestcheck --only cloud-init,hostname --format json at least 50x
#     faster than cloud-init status --long --format json (medians)
#   - peak RSS of guestcheck at most 15 MiB
#   - each static binary at most 8 MiB
# Both commands read the same cloud-init state: a real capture from a
# Debian 12 guest (internal/cloudinit/testdata/real/debian12-healthy, made by
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
	apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

fixture=internal/cloudinit/testdata/real/debian12-healthy
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Everything below runs in a private mount namespace when we are root.
inner() {
	set -euo pipefail
	if [ -d "$fixture" ] && [ "$(id -u)" = 0 ]; then
		mount -t tmpfs tmpfs /run/cloud-init 2>/dev/null || { mkdir -p /run/cloud-init && mount -t tmpfs tmpfs /run/cloud-init; }
		for f in status.json result.json instance-data.json; do
			[ -f "$fixture/$f" ] && cp "$fixture/$f" /run/cloud-init/
		done
		echo "bench: cloud-init state from $fixture"
	else
		echo "bench: no fixture mounted; both tools read this machine's own (absent) cloud-init state"
	fi
	hyperfine --warmup 3 --min-runs 20 -N --ignore-failure \
		--export-json "$out/hf.json" \
		-n guestcheck './bin/guestcheck --only cloud-init,hostname --format json' \
		-n cloud-init 'cloud-init status --long --format json'
	/usr/bin/time -f '%M' -o "$out/rss" ./bin/guestcheck --only cloud-init,hostname --format json >/dev/null || true
}
export -f inner
export fixture out
if [ "$(id -u)" = 0 ]; then
	unshare -m --propagation private bash -c inner
else
	inner
fi

python3 - "$out/hf.json" "$out/rss" bin/guestcheck bin/sealprep <<'PY'
import json, os, sys
hf = json.load(open(sys.argv[1]))
med = {r["command"]: r["median"] for r in hf["results"]}
g, c = med["guestcheck"], med["cloud-init"]
rss_kib = int(open(sys.argv[2]).read().split()[-1])
ok = True
print(f"median guestcheck  {g*1000:8.2f} ms")
print(f"median cloud-init  {c*1000:8.2f} ms")
ratio = c / g
print(f"ratio              {ratio:8.1f}x  (goal >= 50x)")
ok &= ratio >= 50
print(f"peak RSS           {rss_kib/1024:8.2f} MiB (goal <= 15 MiB)")
ok &= rss_kib <= 15 * 1024
for b in sys.argv[3:]:
    size = os.path.getsize(b)
    print(f"size {os.path.basename(b):13s} {size/2**20:8.2f} MiB (goal <= 8 MiB)")
    ok &= size <= 8 * 2**20
print("bench: all goals met" if ok else "bench: GOAL MISSED")
sys.exit(0 if ok else 1)
PY
