#!/usr/bin/env bash
# debian-mirrors.sh SUITE: the apt source lines (main, -updates, -security)
# that the VM images and the cloud-init fixtures are built from, one per
# line, for mmdebstrap. No mirror host is written in the repository: they
# come from
#   1. GUESTCHECK_DEBIAN_MIRROR (the archive, e.g. http://mirror.example/debian)
#      and GUESTCHECK_DEBIAN_SECURITY_MIRROR (default: the host's security
#      source, else GUESTCHECK_DEBIAN_MIRROR with "-security" appended), or
#   2. this host's own apt sources (/etc/apt/sources.list and
#      /etc/apt/sources.list.d/*.list, *.sources): the enabled "deb" entry
#      whose suite is a Debian release, and the one whose suite is
#      "<release>-security",
# so that a build host behind a company mirror or proxy builds as apt
# itself fetches.
set -euo pipefail
suite=${1:?usage: debian-mirrors.sh SUITE}
etc=${GUESTCHECK_APT_ETC:-/etc/apt}

# host_uris prints "KIND URI" for each enabled deb source of a Debian
# release: KIND is main or security.
host_uris() {
  local files=()
  [ -f "$etc/sources.list" ] && files+=("$etc/sources.list")
  for f in "$etc"/sources.list.d/*.list "$etc"/sources.list.d/*.sources; do
    [ -f "$f" ] && files+=("$f")
  done
  [ ${#files[@]} -gt 0 ] || return 0
  awk '
    function release(s) {
      sub(/\/updates$/, "-security", s)
      sub(/-(security|updates|backports|proposed-updates)$/, "", s)
      return s ~ /^(buster|bullseye|bookworm|trixie|forky|duke|sid|stable|testing|unstable|oldstable|oldoldstable)$/
    }
    function emit(type, uris, suites, enabled,   n, u, m, s, i, j) {
      if (type !~ /(^| )deb( |$)/ || enabled == "no") return
      n = split(uris, u, " "); m = split(suites, s, " ")
      for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) {
        if (!release(s[j])) continue
        if (s[j] ~ /-security$|\/updates$/) print "security", u[i]
        else print "main", u[i]
      }
    }
    FNR == 1 { if (d822) emit(t, us, ss, en); d822 = FILENAME ~ /\.sources$/; t = us = ss = en = "" }
    d822 {
      if ($0 ~ /^[ \t]*$/) { emit(t, us, ss, en); t = us = ss = en = ""; next }
      if ($0 ~ /^#/) next
      k = tolower($1); v = $0; sub(/^[^:]*:[ \t]*/, "", v)
      if (k == "types:") t = v; else if (k == "uris:") us = v; else if (k == "suites:") ss = v; else if (k == "enabled:") en = tolower(v)
      next
    }
    /^[ \t]*deb[ \t]/ {
      line = $0; sub(/#.*/, "", line); n = split(line, f, /[ \t]+/); i = 2
      if (f[1] == "") { i++ }
      if (f[i] ~ /^\[/) { while (i <= n && f[i] !~ /\]$/) i++; i++ }
      emit("deb", f[i], f[i+1], "")
    }
    END { if (d822) emit(t, us, ss, en) }
  ' "${files[@]}"
}

main=${GUESTCHECK_DEBIAN_MIRROR:-}
security=${GUESTCHECK_DEBIAN_SECURITY_MIRROR:-}
if [ -z "$main" ] || [ -z "$security" ]; then
  found=$(host_uris)
  [ -n "$main" ] || main=$(awk '$1 == "main" { print $2; exit }' <<<"$found")
  [ -n "$security" ] || security=$(awk '$1 == "security" { print $2; exit }' <<<"$found")
fi
if [ -z "$main" ]; then
  echo "debian-mirrors.sh: no Debian archive in $etc/sources.list{,.d/}; set GUESTCHECK_DEBIAN_MIRROR to your mirror's URL (for example http://mirror.example/debian)" >&2
  exit 1
fi
[ -n "$security" ] || security="${main%/}-security"
echo "deb ${main%/} $suite main"
echo "deb ${main%/} $suite-updates main"
echo "deb ${security%/} $suite-security main"
