#!/bin/bash
# Benchmark (not a test): the start-up cost of the programs on a tiny input,
# where nothing but loading, discovery and exit is measured, side by side
# with zstd and sha256sum on the same input. Prints for each case the best
# wall time (milliseconds) and the largest peak RSS (KB, GNU time's %M) of
# ACCEL_BENCH_RUNS runs (5), and our/peer ratios of both. Needs GNU time
# (/usr/bin/time) and bash 5 (EPOCHREALTIME); the peers' rows say "absent" where they are not installed.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
B=${ACCEL_BUILD:-build}
runs=${ACCEL_BENCH_RUNS:-5}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "startup.sh: needs GNU time (/usr/bin/time)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/accel-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf x > "$work/x"
# Eight cf32 samples: one 8-point frame for accel-fft.
head -c 64 /dev/zero > "$work/fft.cf32"

# measure INPUT CMD...: "MS KB", the best wall time in milliseconds (taken
# around GNU time, whose %e counts in hundredths) and the lowest peak RSS of
# $runs runs of CMD with INPUT on stdin, output discarded.
measure() {
	in=$1
	shift
	i=0
	while [ $i -lt "$runs" ]; do
		t0=${EPOCHREALTIME/./}
		"$TIME" -f '%M' -o "$work/t" "$@" < "$in" > /dev/null 2>&1 || true
		t1=${EPOCHREALTIME/./}
		echo "$(( (t1 - t0) / 10 )) $(tail -n 1 "$work/t")"
		i=$((i + 1))
	done | sort -n -k1,1 | awk 'NR == 1 { s = $1 } { if (k == "" || $2 < k) k = $2 } END { printf "%.1f %d\n", s / 100, k }'
}

# row NAME PEER_S PEER_KB INPUT CMD...: one line, with the ratios to the
# peer's figures when they are given (else "-").
row() {
	name=$1 ps=$2 pk=$3 in=$4
	shift 4
	if ! command -v "$1" > /dev/null 2>&1; then
		printf '%-32s %8s\n' "$name" "absent"
		return
	fi
	set -- $(measure "$in" "$@")
	printf '%-32s %8s %9s %9s %8s\n' "$name" "$1" "$2" \
		"$(awk -v a="$1" -v b="$ps" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }')" \
		"$(awk -v a="$2" -v b="$pk" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }')"
}

# The peers: zstd for the programs that compress or transform, sha256sum
# for the hash.
zs=0 zk=0 hs=0 hk=0
command -v zstd > /dev/null 2>&1 && set -- $(measure "$work/x" zstd -c) && zs=$1 zk=$2
command -v sha256sum > /dev/null 2>&1 && set -- $(measure "$work/x" sha256sum) && hs=$1 hk=$2
printf '%-32s %8s %9s %9s %8s\n' "case (tiny input)" "best ms" "peak KB" "time/peer" "RSS/peer"
row "zstd -c" 0 0 "$work/x" zstd -c
row "sha256sum" 0 0 "$work/x" sha256sum
row "accel-compress (vs zstd)" "$zs" "$zk" "$work/x" "$B/accel-compress" -c
row "accel-crypt hash (vs sha256sum)" "$hs" "$hk" "$work/x" "$B/accel-crypt" hash
row "accel-fft -n 8 (vs zstd)" "$zs" "$zk" "$work/fft.cf32" "$B/accel-fft" -n 8
row "accel-detect --class cpu" "$zs" "$zk" "$work/x" "$B/accel-detect" --class cpu
row "accel-detect" "$zs" "$zk" "$work/x" "$B/accel-detect"
