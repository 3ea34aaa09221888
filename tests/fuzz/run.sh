#!/bin/sh
# Run each libFuzzer target for a set time from its seed corpus, then print
# one line per target: executions, new corpus inputs, crashes.
# Usage: run.sh BUILD_FUZZ_DIR SECONDS TARGET...
set -u
dir=$1 secs=$2
shift 2
cd "$(dirname "$0")/../.."
status=0
for t in "$@"; do
	work="$dir/corpus-$t"
	mkdir -p "$work"
	cp -n tests/fuzz/corpus/"$t"/* "$work"/ 2>/dev/null
	log="$dir/$t.log"
	"$dir/fuzz-$t" -max_total_time="$secs" -max_len=8192 -rss_limit_mb=4096 -timeout=20 \
		-artifact_prefix="$dir/$t-" -print_final_stats=1 "$work" > "$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	crashes=$(ls "$dir/$t"-crash-* "$dir/$t"-leak-* "$dir/$t"-timeout-* "$dir/$t"-oom-* 2>/dev/null | wc -l)
	echo "fuzz $t: ${runs:-0} executions in ${secs} s, $(ls "$work" | wc -l) corpus inputs, $crashes crash(es) (log: $log)"
	[ "$rc" -eq 0 ] || { status=1; grep -m3 -E 'ERROR|fuzz:|SUMMARY' "$log"; }
done
exit $status
