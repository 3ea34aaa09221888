#!/bin/sh
# ci-bench.sh - a CI step that fails a build whose throughput fell:
# accel-bench measures, and compares with the results of an earlier build
# (the baseline); a case that regressed beyond the bound and the noise of
# its runs makes it exit 5 (accel-bench(1), COMPARING WITH A BASELINE).
#
#   examples/ci-bench.sh BASELINE.json RESULTS.json [accel-bench options] [OPERATION...]
#
# This run's results go to RESULTS.json (keep them: a later build's
# baseline). Without BASELINE.json they become it too, and the step passes.
# Else the table of changes goes to stdout and the exit status is
# accel-bench's: 0, 5 a case regressed, 1 a case failed or a file is not
# accel-bench's. MAX_REGRESSION is the bound (default 10%). Give the same
# options on every build: the cases compared are those of both sides (one
# on a side only is reported as missing, not a failure).
#
# examples/ci-bench.yml is a GitHub Actions job around it that keeps the
# baseline as an artifact and fails a build on a regression.
set -eu
B=${ACCEL_BUILD:-$(dirname "$0")/../build}
PATH="$B:$PATH"
[ $# -ge 2 ] || { echo "usage: $0 BASELINE.json RESULTS.json [accel-bench options] [OPERATION...]" >&2; exit 2; }
base=$1 now=$2
shift 2
if ! accel-bench --json --no-progress "$@" > "$now.tmp"; then
	rm -f "$now.tmp"
	echo "ci-bench: the measurement failed" >&2
	exit 1
fi
mv "$now.tmp" "$now"
if [ ! -e "$base" ]; then
	mkdir -p "$(dirname "$base")"
	cp "$now" "$base"
	echo "ci-bench: no baseline yet: $base is this run's results"
	exit 0
fi
st=0
accel-bench --compare "$base" --against "$now" --max-regression "${MAX_REGRESSION:-10%}" || st=$?
[ "$st" -ne 5 ] || echo "ci-bench: a case regressed against $base: see the table" >&2
exit "$st"
