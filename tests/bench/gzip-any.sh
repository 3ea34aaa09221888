#!/bin/sh
# Benchmark (not a test): decompression of one large gzip member written by
# other tools (libcore/ops/gzip_index.c) beside igzip -d, pigz -d -p2 and
# gzip -d. The corpus is the tar file $1, or a tar of /usr/share/doc and
# /usr/include cut to SIZE (400M); it is compressed by gzip -1, -6, -9,
# pigz -6, as BGZF blocks of 64 KiB (bgzip's layout) and as 64 KiB pieces
# gzip'd one by one and concatenated (kept under DIR, build/corpus/gzip-any, and made again for
# another corpus or a changed one). Each file is decoded to /dev/null by igzip -d,
# pigz -d -p2, gzip -d and accel-compress -d -c -T$T (T 2), the tools
# interleaved, REPS (3) rounds; it prints the median wall and user CPU
# seconds of each, and ours / igzip of the medians (wall, and user CPU).
# A tool that is not installed is left out.
set -eu
B=${ACCEL_BUILD:-build}
REPS=${REPS:-3}
T=${T:-2}
DIR=${DIR:-build/corpus/gzip-any}
mkdir -p "$DIR"
if [ $# -ge 1 ]; then
	corpus=$1
else
	corpus="$DIR/corpus.tar"
	if [ ! -s "$corpus" ]; then
		{ tar cf - /usr/share/doc /usr/include 2>/dev/null || true; } | head -c "$(numfmt --from=iec "${SIZE:-400M}")" >"$corpus.tmp"
		mv "$corpus.tmp" "$corpus"
	fi
fi
have() { command -v "$1" >/dev/null 2>&1; }

# The compressed files, made again for another corpus or a changed one.
stamp=$(stat -c '%n %s %Y' "$corpus")
if [ "$(cat "$DIR/stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -f "$DIR"/*.gz
	echo "$stamp" >"$DIR/stamp"
fi
files=
# bgzf: BGZF blocks of 64 KiB (bgzip's layout, written by Python's zlib);
# cat64k: 64 KiB pieces gzip -6'd one by one and concatenated.
bgzf() {
	python3 - "$1" <<'PY'
import struct, sys, zlib
src, out = open(sys.argv[1], 'rb'), sys.stdout.buffer
def block(d):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(d) + c.flush()
    out.write(struct.pack('<BBBBIBBHBBHH', 31, 139, 8, 4, 0, 0, 255, 6, 66, 67, 2, 25 + len(body)) + body +
              struct.pack('<II', zlib.crc32(d), len(d)))
while True:
    d = src.read(65280)
    if not d:
        break
    block(d)
block(b'')
PY
}
cat64k() {
	split -b 64K "$1" "$DIR/piece."
	for p in "$DIR"/piece.*; do gzip -6 -n -c "$p"; done
	rm -f "$DIR"/piece.*
}
for f in gzip1 gzip6 gzip9 pigz6 bgzf cat64k; do
	out="$DIR/$f.gz"
	case $f in
	gzip*) make="gzip -${f#gzip} -c" ;;
	pigz*) have pigz || continue; make="pigz -${f#pigz} -c" ;;
	bgzf) make=bgzf ;;
	cat64k) make=cat64k ;;
	esac
	if [ ! -s "$out" ]; then
		$make "$corpus" >"$out.tmp"
		mv "$out.tmp" "$out"
	fi
	files="$files $out"
done

tools="ours"
have igzip && tools="igzip $tools"
have pigz && tools="$tools pigz"
tools="$tools gzip"
tfile=$(mktemp "${TMPDIR:-/tmp}/gzip-any.XXXXXX")
trap 'rm -f "$tfile" "$tfile".*' EXIT INT TERM

# One run of tool $1 on file $2: "wall user" seconds appended to $tfile.$1.
once() {
	case $1 in
	igzip) set -- "$1" igzip -d -c "$2" ;;
	pigz) set -- "$1" pigz -d -p2 -c "$2" ;;
	gzip) set -- "$1" gzip -d -c "$2" ;;
	ours) set -- "$1" "$B/accel-compress" -d -c -T"$T" "$2" ;;
	esac
	t=$1
	shift
	/usr/bin/time -f '%e %U' -o "$tfile.$t" -a "$@" >/dev/null
}

# The median of column $2 of file $1.
median() {
	cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

printf '%-10s %-6s %8s %8s %10s %10s\n' file tool 'wall s' 'user s' 'wall/igzip' 'user/igzip'
for f in $files; do
	for t in $tools; do rm -f "$tfile.$t"; done
	i=0
	while [ "$i" -lt "$REPS" ]; do
		for t in $tools; do once "$t" "$f"; done
		i=$((i + 1))
	done
	iw=''
	iu=''
	if have igzip; then
		iw=$(median "$tfile.igzip" 1)
		iu=$(median "$tfile.igzip" 2)
	fi
	for t in $tools; do
		w=$(median "$tfile.$t" 1)
		u=$(median "$tfile.$t" 2)
		echo "$(basename "$f") $t $w $u ${iw:--} ${iu:--}" | awk '{
			rw = $5 == "-" ? "-" : sprintf("%.2f", $3 / $5)
			ru = $6 == "-" ? "-" : sprintf("%.2f", $4 / $6)
			printf "%-10s %-6s %8.2f %8.2f %10s %10s\n", $1, $2, $3, $4, rw, ru }'
	done
done
