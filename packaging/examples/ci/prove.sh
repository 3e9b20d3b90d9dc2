#!/bin/sh
# A CI step that proves a template before it is published: it boots two
# throwaway clones of the image (qcow2 overlays; the image is only read),
# checks that each comes up healthy and that no two share identity, and
# keeps the JUnit report for the CI page whatever the verdict.
#
#   prove.sh TEMPLATE [REPORT_DIR]
#
# GitLab CI:
#   prove:
#     script: [sh packaging/examples/ci/prove.sh output/debian.qcow2 reports]
#     artifacts: {when: always, reports: {junit: reports/prove.xml}, paths: [reports/]}
# GitHub Actions: run it in a step, then upload reports/ with
# actions/upload-artifact (if: always()).
#
# It runs as root so that sealprep also compares the clones with the
# template's own identity (as an other user that comparison is skipped,
# and the report says so). Needs qemu-system-x86 and qemu-utils, and ovmf
# for UEFI images. Exit status: sealprep's (0 proven, 1 not proven, 3 a
# usage error or a refusal such as a template in use).
set -u
template=${1:?usage: prove.sh TEMPLATE [REPORT_DIR]}
reports=${2:-reports}
mkdir -p "$reports"

rc=0
sealprep prove --image "$template" --clones 2 --timeout 20m \
	--junit "$reports/prove.xml" || rc=$?
case $rc in
0) echo "prove: $template is proven" ;;
1) echo "prove: $template is NOT proven: see the report above and $reports/prove.xml" >&2 ;;
*) echo "prove: sealprep could not prove $template (exit $rc)" >&2 ;;
esac
exit "$rc"
