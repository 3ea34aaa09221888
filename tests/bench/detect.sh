#!/bin/sh
# Benchmark (not a test): accel-detect's wall time next to the tools whose
# inventory it merges (lstopo, vulkaninfo, clinfo, and nvidia-smi, lspci and
# ethtool where installed), in one run; prints the median of
# ACCEL_BENCH_RUNS (7) runs of each, in milliseconds, and accel-detect's
# time as a fraction of theirs combined.
set -eu
B=${ACCEL_BUILD:-build}
D="$B/accel-detect"
runs=${ACCEL_BENCH_RUNS:-7}

# median CMD...: the median wall time of $runs runs, in milliseconds.
median() {
	i=0
	while [ $i -lt "$runs" ]; do
		t0=$(date +%s%N)
		"$@" > /dev/null 2>&1 || true
		t1=$(date +%s%N)
		echo $(( (t1 - t0) / 1000 ))
		i=$((i + 1))
	done | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] / 1000 }'
}

row() {
	name=$1
	shift
	if ! command -v "$1" > /dev/null 2>&1; then
		printf '%-34s %10s\n' "$name" "absent"
		return
	fi
	"$@" > /dev/null 2>&1 || true   # warm the caches once
	ms=$(median "$@")
	printf '%-34s %10s\n' "$name" "$ms"
	echo "$ms" > "$work/last"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/accel-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
: > "$work/peers"
printf '%-34s %10s\n' "command (median of $runs)" "ms"
row "accel-detect" "$D"
cp "$work/last" "$work/ours"
row "accel-detect --json" "$D" --json
row "accel-detect --class cpu" "$D" --class cpu
row "accel-detect --class video" "$D" --class video
row "accel-detect --class crypto" "$D" --class crypto
for spec in "lstopo-no-graphics:lstopo-no-graphics --of console" "vulkaninfo --summary:vulkaninfo --summary" \
	"clinfo:clinfo" "nvidia-smi -q:nvidia-smi -q" "lspci -vmm:lspci -vmm" "ethtool -k eth0:ethtool -k eth0"; do
	name=${spec%%:*}
	cmd=${spec#*:}
	# shellcheck disable=SC2086
	if command -v ${cmd%% *} > /dev/null 2>&1; then
		"${cmd%% *}" ${cmd#* } > /dev/null 2>&1 || true
		# shellcheck disable=SC2086
		ms=$(median $cmd)
		printf '%-34s %10s\n' "$name" "$ms"
		echo "$ms" >> "$work/peers"
	else
		printf '%-34s %10s\n' "$name" "absent"
	fi
done
awk -v ours="$(cat "$work/ours")" '{ s += $1 } END {
	printf "%-34s %10.1f\n", "peers combined", s
	if (s > 0) printf "accel-detect / peers combined: %.2f\n", ours / s }' "$work/peers"
