#!/usr/bin/env bats
# accel-compress -d on gzip files of other tools (gzip, pigz, Python's gzip
# module, tar czf): large members decode on several threads
# (libcore/ops/gzip_index.c), and the bytes, exit status and damage cases
# must be those of gzip -d. Fixtures are made here; the shared corpus once
# per file.

bats_require_minimum_version 1.5.0

load lib/common

setup_file() {
	export CORPUS="$BATS_FILE_TMPDIR/corpus"
	# About 8 MB of text and binaries: members over the 1 MiB at which
	# decoding goes parallel (ACCEL_GZIP_PARALLEL_MIN), several chunks.
	{
		find /usr/share/doc -type f -name '*.gz' -prune -o -type f -print 2>/dev/null | sort | head -n 3000 |
			xargs cat 2>/dev/null | head -c 4000000
		find /usr/lib/x86_64-linux-gnu -maxdepth 1 -name '*.so*' -type f -size +100k | sort | head -n 60 |
			xargs cat | head -c 4000000
	} > "$CORPUS"
	[ "$(stat -c %s "$CORPUS")" -gt 7000000 ]
}

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

# Small chunks (about 300 KB of input, accel_gzip_chunk_size) through
# --memory: many batches, chunk boundaries in each part of a chunk. With
# room for one set of chunks, each batch is written before the next one
# decodes; with room for two (PIPE2, PIPE4), a batch is written while the
# next one decodes.
SMALL2="-T2 --memory 42M"
SMALL4="-T4 --memory 72M"
PIPE2="-T2 --memory 80M"
PIPE4="-T4 --memory 136M"

# same FILE: -d on 2 and 4 threads (the parallel decoder starts at 3: two
# threads are one ISA-L inflate), with
# the default chunks and small ones, writes what gzip -d writes, exit 0
# (one thread is the serial decoder of tests/compress.bats).
same() {
	gzip -d -c "$1" > ref
	for t in "-T2" "-T4" "$SMALL2" "$SMALL4" "$PIPE2" "$PIPE4"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$A" -d $t -c "$1"
		echo "$t status $status: $stderr"
		[ "$status" -eq 0 ]
		# shellcheck disable=SC2086
		"$A" -d $t -c "$1" | cmp - ref
	done
}

@test "gzip -1, -6, -9 members: the bytes of gzip -d on 2 and 4 threads, large and small chunks" {
	for l in 1 6 9; do
		gzip -"$l" -c "$CORPUS" > c.gz
		[ "$(stat -c %s c.gz)" -gt 1048576 ]
		same c.gz
	done
}

@test "pigz, Python's gzip module and tar czf" {
	pigz -6 -c "$CORPUS" > p.gz
	same p.gz
	python3 -c 'import gzip, sys; sys.stdout.buffer.write(gzip.compress(open(sys.argv[1], "rb").read(), 6))' "$CORPUS" > py.gz
	same py.gz
	mkdir d
	cp "$CORPUS" d/a
	head -c 3000000 /dev/urandom > d/b
	tar czf t.tgz d
	same t.tgz
}

@test "chunk boundaries across each part of a chunk (its speculative prefix, ISA-L's part): the bytes of gzip -d" {
	gzip -6 -c "$CORPUS" > a.gz
	gzip -d -c a.gz > ref
	# Each memory limit moves every chunk's first byte, so that the
	# start found for the next chunk falls in another place of the one
	# before it; three threads make two speculative chunks a batch.
	for mem in 50M 51M 53M 55M; do
		for t in 2 3; do
			"$A" -d -T"$t" --memory "$mem" -c a.gz | cmp - ref
		done
	done
	# The same with two sets of chunks (the writer one batch behind).
	for mem in 80M 81M 83M 85M; do
		"$A" -d -T2 --memory "$mem" -c a.gz | cmp - ref
	done
}

@test "a member whose window never gets clean (a slowly changing random block, repeated): the bytes of gzip -d" {
	# References 30000 bytes back all along: the symbols of a chunk
	# always hold markers in their last 32 KiB, so every chunk but a
	# batch's first is decoded speculatively to its end.
	python3 -c 'import random, sys
r = random.Random(1)
pat = bytearray(r.randbytes(30000))
out = bytearray()
for _ in range(400):
    for _ in range(1200):
        pat[r.randrange(30000)] = r.randrange(256)
    out += pat
sys.stdout.buffer.write(out)' > rep
	gzip -6 -c rep > rep.gz
	[ "$(stat -c %s rep.gz)" -gt 1048576 ]
	same rep.gz
}

@test "stored blocks between compressed ones (text, random data, text): the bytes of gzip -d" {
	{ head -c 3000000 "$CORPUS"; head -c 3000000 /dev/urandom; tail -c 3000000 "$CORPUS"; } > mix
	gzip -6 -c mix > mix.gz
	same mix.gz
	gzip -1 -c mix > mix1.gz
	same mix1.gz
}

@test "false block starts that decode (a stored header inside stored data): the bytes of gzip -d" {
	# Stored blocks of 65535 bytes between compressed text: 20000 zero
	# bytes, then what reads as a non-final stored block of 40000 bytes
	# (00, LEN, NLEN), then random bytes. A chunk whose first byte falls
	# in the zeros takes that false start (its block decodes and its
	# window is clean); the chunk before it cannot end there and decodes
	# on through it (or, failing that, is decoded again by zlib): the
	# same bytes, exit 0, from a file and from a pipe.
	python3 -c 'import zlib, struct, random, sys
r = random.Random(7)
text = open(sys.argv[1], "rb").read()
out, raw = bytearray(), bytearray()
for i in range(40):
    t = text[i * 30000:(i + 1) * 30000]
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    out += c.compress(t) + c.flush(zlib.Z_FULL_FLUSH)
    body = bytes(20000) + b"\0" + struct.pack("<HH", 40000, 40000 ^ 0xffff) + r.randbytes(40000)
    body += r.randbytes(65535 - len(body))
    out += b"\0" + struct.pack("<HH", len(body), len(body) ^ 0xffff) + body
    raw += t + body
c = zlib.compressobj(6, zlib.DEFLATED, -15)
out += c.compress(text[:50000]) + c.flush()
raw += text[:50000]
sys.stdout.buffer.write(b"\x1f\x8b\x08\0\0\0\0\0\0\3" + out + struct.pack("<II", zlib.crc32(raw), len(raw) & 0xffffffff))' "$CORPUS" > fake.gz
	same fake.gz
	for t in -T3 "-T3 --memory 50M" "-T4 --memory 80M" "-T2 --memory 81M"; do
		# shellcheck disable=SC2086
		"$A" -d $t -c fake.gz | cmp - ref
		# shellcheck disable=SC2086
		cat fake.gz | "$A" -d $t | cmp - ref
	done
}

@test "stored blocks (random data) and fixed Huffman blocks only" {
	head -c 3000000 /dev/urandom > r
	gzip -6 -c r > r.gz
	same r.gz
	# Every block fixed Huffman (zlib's Z_FIXED): none is a boundary the
	# search takes, so the member decodes serially, the same bytes.
	python3 -c 'import zlib, sys
c = zlib.compressobj(6, zlib.DEFLATED, 31, 8, zlib.Z_FIXED)
sys.stdout.buffer.write(c.compress(open(sys.argv[1], "rb").read()) + c.flush())' "$CORPUS" > f.gz
	same f.gz
}

@test "multi-member files and concatenations, names and header CRCs" {
	gzip -6 -c "$CORPUS" > a.gz
	printf 'small\n' | gzip -c > s.gz
	cat a.gz s.gz a.gz > m.gz
	same m.gz
	cat s.gz a.gz s.gz > m2.gz
	same m2.gz
	# FNAME, FCOMMENT and FHCRC (Python writes FNAME; gzip -N too)
	cp "$CORPUS" named
	gzip -6 -k -N named
	same named.gz
	python3 -c 'import zlib, struct, sys
d = open(sys.argv[1], "rb").read()
h = b"\x1f\x8b\x08" + bytes([2 | 8 | 16]) + b"\0\0\0\0\0\3" + b"n.txt\0" + b"a comment\0"
h += struct.pack("<H", zlib.crc32(h) & 0xffff)
c = zlib.compressobj(6, zlib.DEFLATED, -15)
sys.stdout.buffer.write(h + c.compress(d) + c.flush() + struct.pack("<II", zlib.crc32(d), len(d) & 0xffffffff))' "$CORPUS" > hc.gz
	same hc.gz
	# a header CRC that does not match: named as gzip names it, nothing written
	python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[26] ^= 1; sys.stdout.buffer.write(d)' hc.gz > hbad.gz
	run ! gzip -d -c hbad.gz
	[[ "$output" == *"header checksum 0x"*" != computed checksum 0x"* ]]
	want="${output#*: header checksum }"
	run -3 --separate-stderr "$A" -d -c hbad.gz
	[ "$stderr" = "accel-compress: hbad.gz: gzip member at byte offset 0: header checksum $want" ]
	[ -z "$output" ]
}

@test "trailing garbage after a large member: the output, a warning, status 2, as gzip -d" {
	gzip -6 -c "$CORPUS" > a.gz
	{ cat a.gz; printf 'garbage!'; } > g.gz
	run gzip -d -c g.gz
	[ "$status" -eq 2 ]
	run --separate-stderr "$A" -d -T4 -c g.gz
	[ "$status" -eq 2 ]
	[ "$stderr" = "accel-compress: g.gz: decompression OK, trailing garbage ignored" ]
	"$A" -d -T4 -c g.gz 2>/dev/null | cmp - "$CORPUS"
}

# broken FILE WHAT: gzip -d fails, and so does accel-compress -d on 1, 2
# and 4 threads, with large and small chunks: exit 3, one line naming the member's byte offset and WHAT, no
# -o file left; with -c, what is written is a prefix of what gzip -d writes.
broken() {
	run gzip -d -c "$1"
	[ "$status" -ne 0 ]
	for t in -T1 -T2 -T4 "$SMALL2" "$SMALL4" "$PIPE2" "$PIPE4"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$A" -d $t "$1" -o out
		echo "$t status $status; stderr: $stderr"
		[ "$status" -eq 3 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" =~ ^accel-compress:\ .*byte\ offset\ [0-9]+ ]]
		[ ! -e out ]
		[ -z "$(find . -name '.out.*')" ]
	done
	[ -z "$2" ] || [[ "$stderr" == *"$2"* ]]
	# To standard output: no byte beyond those gzip -d writes before its
	# error, and the same ones (the batch after the damage, decoded while
	# the one before it was written, is never written).
	gzip -d -c "$1" > gref 2>/dev/null || true
	for t in -T2 "$SMALL2" "$PIPE2" "$PIPE4"; do
		# shellcheck disable=SC2086
		run sh -c '"$0" -d $1 -c "$2" > part' "$A" "$t" "$1"
		[ "$status" -eq 3 ]
		k=$(stat -c %s part)
		echo "$t: $k bytes, gzip -d $(stat -c %s gref)"
		[ "$k" -le "$(stat -c %s gref)" ]
		cmp -n "$k" part gref
	done
}

@test "damage: a flipped byte, truncation, a bad CRC32, a bad ISIZE" {
	gzip -6 -c "$CORPUS" > a.gz
	n=$(stat -c %s a.gz)
	for at in $((n / 3)) $((n / 2)) $((n * 3 / 4)); do
		cp a.gz x.gz
		printf '\377' | dd of=x.gz bs=1 seek="$at" conv=notrunc status=none
		printf '\000' | dd of=x.gz bs=1 seek="$((at + 1))" conv=notrunc status=none
		broken x.gz
	done
	head -c $((n / 2)) a.gz > half.gz
	broken half.gz truncated
	head -c $((n - 3)) a.gz > short.gz
	broken short.gz truncated
	cp a.gz crc.gz
	printf '\125' | dd of=crc.gz bs=1 seek=$((n - 8)) conv=notrunc status=none
	run gzip -d -c crc.gz
	[[ "$output" == *"crc error"* ]]
	broken crc.gz
	[[ "$stderr" == *"CRC32"* ]]
	cp a.gz len.gz
	printf '\125' | dd of=len.gz bs=1 seek=$((n - 4)) conv=notrunc status=none
	run gzip -d -c len.gz
	[[ "$output" == *"length error"* ]]
	broken len.gz
	[[ "$stderr" == *"ISIZE"* ]]
}

@test "--memory too small for parallel chunks: the same bytes, serially" {
	gzip -6 -c "$CORPUS" > a.gz
	"$A" -d -T4 --memory 1M -c a.gz | cmp - "$CORPUS"
	"$A" -d -T4 --memory 64M -c a.gz | cmp - "$CORPUS"
}

# bgzf IN OUT [BSIZE_DELTA]: IN as BGZF blocks of 65280 bytes (SAM/BAM
# Format Specification 4.1: FEXTRA with 'BC', BSIZE the block's size less
# 1) and the empty EOF block, as bgzip writes them; BSIZE_DELTA added to
# the second block's BSIZE (a size that lies).
bgzf() {
	/usr/bin/python3 - "$1" "$2" "${3:-0}" <<'PY'
import struct, sys, zlib
src, out, delta = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'wb'), int(sys.argv[3])
def block(d, k):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(d) + c.flush()
    bsize = 18 + len(body) + 8 - 1 + (delta if k == 1 else 0)
    out.write(struct.pack('<BBBBIBBHBBHH', 31, 139, 8, 4, 0, 0, 255, 6, 66, 67, 2, bsize) + body +
              struct.pack('<II', zlib.crc32(d), len(d)))
k = 0
for i in range(0, len(src), 65280):
    block(src[i:i + 65280], k)
    k += 1
block(b'', k)
PY
}

@test "BGZF (bgzip's blocks): one unit a block, gzip -d's bytes; a size that lies is decoded serially; damage is exit 3" {
	bgzf "$CORPUS" c.bgz
	gzip -d -c c.bgz | cmp - "$CORPUS"
	for t in 1 2 4; do
		"$A" -d -c -T "$t" c.bgz | cmp - "$CORPUS"
		"$A" -d -T "$t" < c.bgz | cmp - "$CORPUS"
	done
	blocks=$(( ($(stat -c %s "$CORPUS") + 65279) / 65280 + 1 ))
	run --separate-stderr "$A" -v -d -c c.bgz
	[[ "$stderr" == *": $blocks units, $(stat -c %s c.bgz) bytes in, $(stat -c %s "$CORPUS") bytes out"* ]]
	[[ "$stderr" != *"processed sequentially"* ]]
	for d in -1 1 1000; do
		bgzf "$CORPUS" "lie$d.bgz" "$d"
		"$A" -d -c -T 2 "lie$d.bgz" | cmp - "$CORPUS"
	done
	cp c.bgz bad.bgz
	printf 'x' | dd of=bad.bgz bs=1 seek=$(( $(stat -c %s c.bgz) / 2 )) conv=notrunc status=none
	run ! gzip -d -c bad.bgz
	run -3 --separate-stderr sh -c '"$0" -d -c bad.bgz > /dev/null' "$A"
	[[ "$stderr" == "accel-compress: bad.bgz: gzip member"*"at byte offset "* ]]
}

@test "many small members of no size (small files concatenated): gzip -d's bytes, each inflated whole" {
	split -b 50000 "$CORPUS" part.
	for f in part.*; do gzip -c -n "$f"; done > cat.gz
	[ "$(ls part.* | wc -l)" -gt 100 ]
	"$A" -d -c -T 2 cat.gz | cmp - "$CORPUS"
	"$A" -d -T 2 < cat.gz | cmp - "$CORPUS"
	gzip -d -c cat.gz | cmp - "$CORPUS"
}
