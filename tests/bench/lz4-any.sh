#!/bin/sh
# Benchmark (not a test): decompression of files the lz4 program wrote (one
# frame of independent blocks, no content size, or a legacy frame:
# libcore/ops/lz4_parts.c)
# beside lz4 -d, from the file and from a pipe. The corpus is the file $1,
# or tests/bench/corpus.sh's tar (ACCEL_CORPUS_MB, 256); it is compressed
# by lz4 -1 (4 MiB blocks), lz4 -9, lz4 -1 -B4 (64 KiB blocks), lz4 -1
# -BX (block checksums) and lz4 -l (the legacy frame: 8 MiB blocks, no
# checksum), kept under DIR (build/corpus/lz4-any) and made again for another corpus or a changed one. Each file is decoded to
# /dev/null by lz4 -d -c and accel-compress -d -c -T$T (T 2), from the file
# and through cat, the tools interleaved, REPS (5) rounds; it prints the
# median wall and CPU (user + system) seconds of each and lz4 / ours of
# the medians (above 1: ours is faster, or spends less CPU).
set -eu
B=${ACCEL_BUILD:-build}
REPS=${REPS:-5}
T=${T:-2}
DIR=${DIR:-build/corpus/lz4-any}
mkdir -p "$DIR"
corpus=${1:-$(sh "$(dirname "$0")/corpus.sh")}

stamp=$(stat -c '%n %s %Y' "$corpus")
if [ "$(cat "$DIR/stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -f "$DIR"/*.lz4
	echo "$stamp" >"$DIR/stamp"
fi
files=
for f in l1 l9 l1-B4 l1-BX legacy; do
	out="$DIR/$f.lz4"
	case $f in
	l1) opts=-1 ;;
	l9) opts=-9 ;;
	l1-B4) opts="-1 -B4" ;;
	l1-BX) opts="-1 -BX" ;;
	legacy) opts=-l ;;
	esac
	if [ ! -s "$out" ]; then
		# shellcheck disable=SC2086
		lz4 -q $opts -c "$corpus" >"$out.tmp"
		mv "$out.tmp" "$out"
	fi
	files="$files $out"
done
tfile=$(mktemp "${TMPDIR:-/tmp}/lz4-any.XXXXXX")
trap 'rm -f "$tfile" "$tfile".*' EXIT INT TERM

# One run of $1 (lz4, ours, lz4-pipe, ours-pipe) on file $2: "wall cpu"
# seconds appended to $tfile.$1.
once() {
	case $1 in
	lz4) cmd="lz4 -q -d -c '$2'" ;;
	ours) cmd="'$B/accel-compress' -q -d -c -T$T '$2'" ;;
	lz4-pipe) cmd="cat '$2' | lz4 -q -d -c" ;;
	ours-pipe) cmd="cat '$2' | '$B/accel-compress' -q -d -c -T$T" ;;
	esac
	/usr/bin/time -f '%e %U %S' -o "$tfile.t" sh -c "$cmd" >/dev/null
	awk '{ print $1, $2 + $3 }' "$tfile.t" >>"$tfile.$1"
}

# The median of column $2 of file $1.
median() {
	cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

printf '%-10s %-5s %9s %9s %9s %9s %10s %10s\n' file input 'lz4 wall' 'ours' 'lz4 cpu' 'ours' 'wall ratio' 'cpu ratio'
for f in $files; do
	rm -f "$tfile".lz4 "$tfile".ours "$tfile".lz4-pipe "$tfile".ours-pipe
	i=0
	while [ "$i" -lt "$REPS" ]; do
		for t in lz4 ours lz4-pipe ours-pipe; do once "$t" "$f"; done
		i=$((i + 1))
	done
	for kind in file pipe; do
		s=
		[ "$kind" = pipe ] && s=-pipe
		echo "$(basename "$f" .lz4) $kind $(median "$tfile.lz4$s" 1) $(median "$tfile.ours$s" 1)" \
			"$(median "$tfile.lz4$s" 2) $(median "$tfile.ours$s" 2)" | awk '{
			printf "%-10s %-5s %9.3f %9.3f %9.3f %9.3f %10.2f %10.2f\n", $1, $2, $3, $4, $5, $6, $3 / $4, $5 / $6 }'
	done
done
