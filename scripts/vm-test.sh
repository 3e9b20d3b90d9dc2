#!/usr/bin/env bash
# vm-test.sh TIMEOUT: make vm-test's run of the VM tests (root; see
# docs/vm-tests.md). It keeps the whole log and, when a test fails, ends
# with what each failed test printed (scripts/test-failures.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp --tmpdir guestcheck-vm-test.XXXXXX.log)
${GO:-go} test -tags vmtest -v -count=1 -timeout "${1:-90m}" ./test/vm/ 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
	echo
	echo "vm-test: failed (exit $status); what the failed tests printed (whole log: $log):"
	bash scripts/test-failures.sh "$log"
else
	rm -f "$log"
fi
exit "$status"
