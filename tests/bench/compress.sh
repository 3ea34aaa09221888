#!/bin/sh
# Benchmark (not a test): accel-compress side by side with zstd -T0, pigz,
# igzip and lz4 on the same corpus in one run; prints MB/s of uncompressed
# data, ratio, and our/peer throughput ratios. Outputs go to files in one
# temporary folder. Settings: ACCEL_CORPUS_MB (256), ACCEL_BENCH_RUNS (best
# of, 2), ACCEL_BENCH_SLOW_MB (slice for level 19, 32), THREADS (all cores).
set -eu
B=${ACCEL_BUILD:-build}
A="$B/accel-compress"
runs=${ACCEL_BENCH_RUNS:-2}
n=${THREADS:-$(nproc)}
corpus=$(sh tests/bench/corpus.sh)
work=$(mktemp -d "${TMPDIR:-/tmp}/accel-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
slow="$work/slice.tar"
head -c $((${ACCEL_BENCH_SLOW_MB:-32} * 1048576)) "$corpus" > "$slow"

# best CMD...: the shortest wall time of $runs runs, in seconds.
best() {
	b=""
	i=0
	while [ $i -lt "$runs" ]; do
		t0=$(date +%s.%N)
		"$@"
		t1=$(date +%s.%N)
		b=$(awk -v a="$b" -v t0="$t0" -v t1="$t1" 'BEGIN { d = t1 - t0; print (a == "" || d < a) ? d : a }')
		i=$((i + 1))
	done
	echo "$b"
}
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", b / s / 1e6 }'; }

printf '%-26s %-28s %9s %9s %7s   %s\n' "case" "peer" "ours MB/s" "peer MB/s" "ratio" "ours/peer"
# row NAME PEER SIZE OURS_S PEER_S OURS_FILE PEER_FILE: one line of the table.
row() {
	rname=$1 rpeer=$2 size=$3 os=$4 ps=$5 of=$6 pf=$7
	om=$(mbps "$size" "$os")
	pm=$(mbps "$size" "$ps")
	r1=$(awk -v a="$size" -v b="$(stat -c %s "$of")" 'BEGIN { printf "%.3f", a / b }')
	r2=$(awk -v a="$size" -v b="$(stat -c %s "$pf")" 'BEGIN { printf "%.3f", a / b }')
	printf '%-26s %-28s %9s %9s %7s   %.2fx\n' "$rname" "$rpeer" "$om" "$pm" "$r1/$r2" \
		"$(awk -v a="$ps" -v b="$os" 'BEGIN { print a / b }')"
}

# compare NAME INPUT OUR_ARGS PEER_COMPRESS EXT PEER_DECOMPRESS: both directions.
compare() {
	name=$1 in=$2 ours=$3 peer=$4 ext=$5 peerd=$6
	size=$(stat -c %s "$in")
	# shellcheck disable=SC2086
	os=$(best $A -f -T "$n" $ours -o "$work/ours.$ext" "$in")
	ps=$(best sh -c "$peer < '$in' > '$work/peer.$ext'")
	row "$name compress" "$peer" "$size" "$os" "$ps" "$work/ours.$ext" "$work/peer.$ext"
	osd=$(best $A -f -d -T "$n" -o "$work/ours.out" "$work/ours.$ext")
	psd=$(best sh -c "$peerd < '$work/peer.$ext' > '$work/peer.out'")
	row "$name decompress" "$peerd" "$size" "$osd" "$psd" "$work/ours.$ext" "$work/peer.$ext"
	cmp -s "$in" "$work/ours.out" || { echo "round trip FAILED for $name" >&2; exit 1; }
	rm -f "$work/ours.out" "$work/peer.out"
}

echo "corpus: $corpus ($(stat -c %s "$corpus") bytes), $n threads, best of $runs"
compare "zstd -1" "$corpus" "-1" "zstd -q -1 -T0 -c" zst "zstd -q -d -c"
compare "zstd -3" "$corpus" "-3" "zstd -q -3 -T0 -c" zst "zstd -q -d -c"
compare "zstd -19 (slice)" "$slow" "-19" "zstd -q -19 -T0 -c" zst "zstd -q -d -c"
compare "gzip -6" "$corpus" "--format gzip -6" "pigz -6 -p $n -c" gz "pigz -d -p $n -c"
compare "gzip -3 (ISA-L 1)" "$corpus" "--format gzip -3" "igzip -1 -c" gz "igzip -d -c"
compare "lz4 -1" "$corpus" "--format lz4 -1" "lz4 -q -1 -c" lz4 "lz4 -q -d -c"
# zstd -d on our own output: the single-threaded decoder against ours.
$A -f -3 -o "$work/ours.zst" "$corpus"
size=$(stat -c %s "$corpus")
os=$(best $A -f -d -o "$work/o1" "$work/ours.zst")
ps=$(best sh -c "zstd -q -d -c '$work/ours.zst' > '$work/o2'")
row "zstd -d of our output" "zstd -d (same file)" "$size" "$os" "$ps" "$work/ours.zst" "$work/ours.zst"
# The same to /dev/null: the decoders alone, without the page cache's copy
# (writing a file costs about as much as `cat` here, which bounds both).
os=$(best sh -c "$A -d -c '$work/ours.zst' > /dev/null")
ps=$(best sh -c "zstd -q -d -c '$work/ours.zst' > /dev/null")
row "zstd -d, to /dev/null" "zstd -d (same file)" "$size" "$os" "$ps" "$work/ours.zst" "$work/ours.zst"
os=$(best sh -c "cat '$corpus' > '$work/o1'")
echo "cat of the corpus to a file: $(mbps "$size" "$os") MB/s (the ceiling for writing files here)"
