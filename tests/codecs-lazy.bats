#!/usr/bin/env bats
# The compression libraries (accel(7), PLUGINS; libcore/codec_dl.h):
# libaccel links none of libzstd, liblz4, ISA-L, libdeflate, zlib and
# minizip; a job dlopens the one its format needs, so a program that
# compresses nothing maps none of them. What is mapped is read from the
# dynamic loader's trace (LD_DEBUG=files), not from timings.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	B="$ROOT/build"
	cd "$BATS_TEST_TMPDIR"
	seq 1 20000 > in.txt
}

# codecs CMD...: run CMD (stdin as given) with the loader's trace;
# codecs.txt gets the compression libraries it mapped, one soname a line.
codecs() {
	LD_DEBUG=files LD_DEBUG_OUTPUT="$PWD/ld" "$@"
	cat ld.* | grep -oE 'file=[^ ]*/lib(zstd|lz4|isal|deflate|minizip|z)\.so\.[0-9]+' |
		sed 's|.*/||' | sort -u > codecs.txt
	rm -f ld.*
}

@test "libaccel links no compression library" {
	run -0 readelf -d "$B/lib/libaccel.so.0"
	[[ "$output" == *libcjson* ]]
	[[ "$output" != *libzstd* && "$output" != *liblz4* && "$output" != *libisal* ]]
	[[ "$output" != *libdeflate* && "$output" != *libz.so* && "$output" != *libminizip* ]]
}

@test "programs that compress nothing map no compression library" {
	python3 -c 'import struct, sys; sys.stdout.buffer.write(struct.pack("<2048f", *([0.5] * 2048)))' > s.cf32
	codecs "$B/accel-fft" -n 1024 -o out.bin s.cf32
	[ -s out.bin ]
	[ ! -s codecs.txt ]
	codecs "$B/accel-crypt" hash in.txt > sum
	[ "$(cat sum)" = "$(sha256sum < in.txt | sed 's/-$/in.txt/')" ]
	[ ! -s codecs.txt ]
	codecs "$B/accel-detect" --class cpu > /dev/null
	[ ! -s codecs.txt ]
}

@test "each format maps its own library, and the output is the peer's" {
	codecs "$B/accel-compress" -c in.txt > in.zst
	[ "$(cat codecs.txt)" = libzstd.so.1 ]
	zstd -dc in.zst | cmp - in.txt
	codecs "$B/accel-compress" -c -F lz4 in.txt > in.lz4
	[ "$(cat codecs.txt)" = liblz4.so.1 ]
	lz4 -dc in.lz4 | cmp - in.txt
	codecs "$B/accel-compress" -c -F gzip -1 in.txt > in1.gz
	[ "$(cat codecs.txt)" = libisal.so.2 ]
	gzip -dc in1.gz | cmp - in.txt
	codecs "$B/accel-compress" -c -F gzip -9 in.txt > in9.gz
	[ "$(cat codecs.txt)" = libdeflate.so.0 ]
	gzip -dc in9.gz | cmp - in.txt
	# gzip -d: ISA-L, and zlib for the parallel decoder.
	codecs "$B/accel-compress" -dc in9.gz > back
	cmp back in.txt
	grep -qx libisal.so.2 codecs.txt
	! grep -q -e zstd -e lz4 -e deflate codecs.txt
}

@test "a .npz maps minizip, which writes it" {
	python3 -c 'import struct, sys; sys.stdout.buffer.write(struct.pack("<2048f", *([0.5] * 2048)))' > s.cf32
	codecs "$B/accel-fft" -n 1024 --out power -o s.npz s.cf32
	grep -qx 'libminizip.so.1' codecs.txt
	python3 -c 'import sys, zipfile; sys.exit("Sxx.npy" not in zipfile.ZipFile("s.npz").namelist())'
}

@test "a library that cannot be loaded is the engine's reason, and nothing is written" {
	mkdir bad
	: > bad/libzstd.so.1
	LD_LIBRARY_PATH="$PWD/bad" run -1 --separate-stderr "$B/accel-compress" -c -v -o x.zst in.txt
	[[ "$stderr" == *"cpu"*"left out: cannot load libzstd.so.1"* ]]
	[[ "$stderr" == *"no engine can run zstd.compress"* ]]
	[ ! -e x.zst ]
	# The other formats do not need it.
	LD_LIBRARY_PATH="$PWD/bad" run -0 "$B/accel-compress" -c -F gzip -o x.gz in.txt
	gzip -dc x.gz | cmp - in.txt
	LD_LIBRARY_PATH="$PWD/bad" run -0 "$B/accel-compress" -V
	[[ "$output" == *"zstd (cannot load libzstd.so.1"* ]]
}
