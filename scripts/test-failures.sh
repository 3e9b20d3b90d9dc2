#!/usr/bin/env bash
# test-failures.sh LOG: repeats, at the end of a long `go test -v` log,
# what each innermost failed test printed, so that a run's tail (all a CI
# summary keeps) says why it failed and not only which test did.
set -euo pipefail
log=$1
awk '
	# Pass 1: the names of the tests that failed.
	FNR == NR {
		if (match($0, /^ *--- FAIL: [^ ]+/)) {
			split(substr($0, RSTART, RLENGTH), f, "FAIL: ")
			failed[f[2]] = 1
		}
		next
	}
	# Between the passes: keep only the innermost failures (a parent
	# fails with its subtests; its own lines are setup).
	FNR == 1 && !pruned {
		for (a in failed) for (b in failed) if (index(b, a "/") == 1) drop[a] = 1
		for (a in drop) delete failed[a]
		pruned = 1
	}
	# Pass 2: each line belongs to the test the last === header named.
	/^=== (RUN|CONT|NAME|PAUSE) / { cur = $3; next }
	/^ *--- (FAIL|PASS|SKIP):/ || /^(FAIL|PASS|ok)( |$)/ { cur = ""; next }
	cur != "" && (cur in failed) && $0 ~ /^    / {
		if (cur != shown) { print "--- " cur; shown = cur }
		if (++n > 300) { print "(more in the full log)"; exit }
		print
	}
' "$log" "$log"
