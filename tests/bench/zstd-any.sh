#!/bin/sh
# Benchmark (not a test): decompression of zstd files written by the zstd
# program beside zstd -d. The corpus is the file $1, or tests/bench/corpus.sh's
# tar (ACCEL_CORPUS_MB, 256). It is compressed by
# zstd -3 of the whole file (one frame with its size: over 64 MiB the
# sequential decoder takes it, up to 64 MiB one unit), zstd -3 of its first
# 16 MiB and 64 MiB, zstd -3 from a pipe (one frame without a size), zstd
# -T2 (one frame, written by two threads) and 4 MiB pieces zstd'd one by
# one and concatenated (frames decoded in parallel); the files are kept
# under DIR (build/corpus/zstd-any) and made again for another corpus. Each
# is decoded to /dev/null by zstd -d and accel-compress -d -c -T$T (T 2), in
# turn, REPS (5) rounds; it prints the median wall time (ms), user CPU
# seconds and peak RSS (MB) of each, and ours / zstd's (wall, RSS).
set -eu
B=${ACCEL_BUILD:-build}
REPS=${REPS:-5}
T=${T:-2}
DIR=${DIR:-build/corpus/zstd-any}
mkdir -p "$DIR"
corpus=${1:-$(sh "$(dirname "$0")/corpus.sh")}

# The compressed files, made again for another corpus or a changed one.
stamp=$(stat -c '%n %s %Y' "$corpus")
if [ "$(cat "$DIR/stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -f "$DIR"/*.zst
	echo "$stamp" >"$DIR/stamp"
fi
pieces() {
	split -b 4M "$corpus" "$DIR/piece."
	for p in "$DIR"/piece.*; do zstd -q -3 -c "$p"; done
	rm -f "$DIR"/piece.*
}
files=
for f in whole first16 first64 pipe t2 pieces; do
	out="$DIR/$f.zst"
	if [ ! -s "$out" ]; then
		case $f in
		whole) zstd -q -3 -c "$corpus" ;;
		first16 | first64)
			# A file, so that the frame states its size.
			head -c "${f#first}M" "$corpus" >"$DIR/head"
			zstd -q -3 -c "$DIR/head"
			rm -f "$DIR/head"
			;;
		pipe) cat "$corpus" | zstd -q -3 -c ;;
		t2) zstd -q -3 -T2 -c "$corpus" ;;
		pieces) pieces ;;
		esac >"$out.tmp"
		mv "$out.tmp" "$out"
	fi
	files="$files $out"
done

tfile=$(mktemp "${TMPDIR:-/tmp}/zstd-any.XXXXXX")
trap 'rm -f "$tfile" "$tfile".*' EXIT INT TERM

# One run of tool $1 on file $2: "wall_ms user_s rss_kb" appended to
# $tfile.$1.
once() {
	case $1 in
	zstd) set -- "$1" zstd -q -d -c "$2" ;;
	ours) set -- "$1" "$B/accel-compress" -q -d -c -T"$T" "$2" ;;
	esac
	t=$1
	shift
	t0=$(date +%s%N)
	/usr/bin/time -f '%U %M' -o "$tfile.rt" "$@" >/dev/null
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000000)) $(cat "$tfile.rt")" >>"$tfile.$t"
}

# The median of column $2 of file $1.
median() {
	cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

printf '%-12s %-5s %8s %8s %8s %10s %8s\n' file tool 'wall ms' 'user s' 'RSS MB' 'wall/zstd' 'RSS/zstd'
for f in $files; do
	rm -f "$tfile.zstd" "$tfile.ours"
	i=0
	while [ "$i" -lt "$REPS" ]; do
		once zstd "$f"
		once ours "$f"
		i=$((i + 1))
	done
	zw=$(median "$tfile.zstd" 1)
	zm=$(median "$tfile.zstd" 3)
	for t in zstd ours; do
		echo "$(basename "$f") $t $(median "$tfile.$t" 1) $(median "$tfile.$t" 2) $(median "$tfile.$t" 3) $zw $zm" |
			awk '{ printf "%-12s %-5s %8d %8.2f %8.1f %10.2f %8.2f\n", $1, $2, $3, $4, $5 / 1024, $3 / $6, $5 / $7 }'
	done
done
