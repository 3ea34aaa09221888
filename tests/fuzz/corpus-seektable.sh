#!/bin/sh
# Write the seed corpus of the seektable fuzz target into
# tests/fuzz/corpus/seektable: small seekable files from accel-compress
# (with and without checksums, one empty frame), one built by hand from
# frames that state no size, tables that lie (tests/compress-seekable/lie.py),
# a file without a table and a cut one.
# Usage: tests/fuzz/corpus-seektable.sh [ACCEL_COMPRESS]  (default build/accel-compress)
set -eu
cd "$(dirname "$0")/../.."
ac=${1:-build/accel-compress}
out=tests/fuzz/corpus/seektable
lie=tests/compress-seekable/lie.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
python3 -c 'import sys; sys.stdout.write("".join("line %d of the seed corpus\n" % i for i in range(300)))' > "$tmp/text"
"$ac" --seekable -B 1K "$tmp/text" -o "$out/text.zst" -f
"$ac" --seekable --no-check -B 1K "$tmp/text" -o "$out/nocheck.zst" -f
: > "$tmp/empty"
"$ac" --seekable "$tmp/empty" -o "$out/empty.zst" -f
"$ac" -B 1K "$tmp/text" -o "$out/plain.zst" -f
head -c 3000 "$out/text.zst" > "$out/cut.zst"
for w in dsize shift count checksum reserved huge; do
	python3 "$lie" "$out/text.zst" "$out/lie-$w.zst" "$w"
done
split -b 3000 "$tmp/text" "$tmp/part."
set --
for p in "$tmp"/part.??; do
	zstd -q -c < "$p" > "$p.zst"
	set -- "$@" "$p" "$p.zst"
done
python3 tests/compress-seekable/build.py "$out/nosize.zst" "$@"
python3 tests/compress-seekable/build.py "$out/nosize-lie.zst" "$@" --lie 0
