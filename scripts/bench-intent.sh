#!/usr/bin/env bash
# Benchmark the cloud-config check against `cloud-init schema -c FILE
# --annotate` on the same user-data, side by side in one hyperfine run.
# Goal: the whole check (gathering, schema validation with the guest's own
# schema file, judging) at least 100x faster than cloud-init's schema
# command, by medians.
# The input is the real Debian 12 capture of the article's user-data
# (internal/checks/cloud-config/testdata/real/debian12-healthy), unpacked into a
# temporary directory that guestcheck reads as --root. Installs hyperfine and
# cloud-init from Debian when missing (as root).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v cloud-init >/dev/null || need+=(cloud-init)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench-intent: missing ${need[*]}; install them or run as root" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${need[@]}" >/dev/null
fi
[ -x bin/guestcheck ] || make build >/dev/null

case=internal/checks/cloud-config/testdata/real/debian12-healthy
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
tar -C "$root" --numeric-owner -xzf "$case/root.tar.gz"
# The instance link is absolute: resolve it inside the root for cloud-init.
inst=$(readlink "$root/var/lib/cloud/instance")
ud=$root$inst/cloud-config.txt
[ -f "$ud" ] || { echo "bench-intent: no $ud" >&2; exit 1; }

hyperfine --warmup 3 --min-runs 20 -N --ignore-failure --export-json "$root/hf.json" \
	-n guestcheck "./bin/guestcheck --root $root --only cloud-config --format json" \
	-n cloud-init-schema "cloud-init schema -c $ud --annotate"

python3 - "$root/hf.json" <<'PY'
import json, sys
med = {r["command"]: r["median"] for r in json.load(open(sys.argv[1]))["results"]}
g, c = med["guestcheck"], med["cloud-init-schema"]
print(f"median guestcheck --only cloud-config  {g*1000:8.2f} ms")
print(f"median cloud-init schema --annotate    {c*1000:8.2f} ms")
print(f"ratio                                  {c/g:8.1f}x  (goal >= 100x)")
sys.exit(0 if c / g >= 100 else 1)
PY
