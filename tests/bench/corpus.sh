#!/bin/sh
# Build (once) a corpus of real files from this machine: a tar of
# /usr/share/doc and /usr/lib/x86_64-linux-gnu cut to $ACCEL_CORPUS_MB MiB
# (default 256). Prints its path.
set -eu
mb=${ACCEL_CORPUS_MB:-256}
dir=${ACCEL_CORPUS_DIR:-build/corpus}
out="$dir/corpus-$mb.tar"
mkdir -p "$dir"
if [ ! -s "$out" ]; then
	libdir=/usr/lib/x86_64-linux-gnu
	[ -d "$libdir" ] || libdir=/usr/lib
	{ tar cf - /usr/share/doc "$libdir" 2>/dev/null || true; } | head -c $((mb * 1048576)) > "$out.tmp"
	mv "$out.tmp" "$out"
fi
echo "$out"
