#!/usr/bin/env bats
# accel-compress end to end: round trips, interop with zstd/gzip/pigz/lz4,
# damaged input, output files, fault injection and fallback, --list, -t,
# EPIPE. Every fixture is made here, in a temporary folder.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	PLUGINS="$ROOT/build/tests/plugins"
	# a folder of our own: bats keeps its files for `run` in BATS_TEST_TMPDIR
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

# gen N FILE: N bytes that compress somewhat (text and random base64 mixed).
gen() {
	{ seq 1 "$(( $1 / 8 + 10 ))"; head -c "$(( $1 / 2 + 10 ))" /dev/urandom | base64; } | head -c "$1" > "$2"
}

# corpus FILE: about 4 MiB of the machine's shared libraries.
corpus() {
	find /usr/lib/x86_64-linux-gnu -maxdepth 1 -name '*.so*' -type f -size +100k | sort | head -n 40 |
		xargs cat | head -c 4194304 > "$1"
	[ "$(stat -c %s "$1")" -gt 1000000 ]
}

# decompress FORMAT FILE: decompress with the reference tool to stdout.
ref_decompress() {
	case "$1" in
	zstd) zstd -q -d -c "$2" ;;
	gzip) gzip -d -c "$2" ;;
	pigz) pigz -d -c "$2" ;;
	lz4) lz4 -q -d -c "$2" ;;
	esac
}

# roundtrip FORMAT THREADS FILE: ours both ways, and the reference tool reads ours.
roundtrip() {
	local fmt=$1 t=$2 f=$3
	"$A" -F "$fmt" -T "$t" -B 64K < "$f" > "$f.$fmt" || { echo "compress $fmt -T$t $f failed"; return 1; }
	"$A" -d -T "$t" < "$f.$fmt" > "$f.out" || { echo "decompress $fmt -T$t $f failed"; return 1; }
	cmp "$f" "$f.out" || { echo "round trip $fmt -T$t $f differs"; return 1; }
	ref_decompress "$fmt" "$f.$fmt" | cmp "$f" - || { echo "$fmt -d cannot read our $f.$fmt"; return 1; }
	if [ "$fmt" = gzip ]; then
		pigz -d -c "$f.$fmt" | cmp "$f" - || { echo "pigz -d cannot read our $f.$fmt"; return 1; }
	fi
}

sizes() {
	gen 0 s0; gen 1 s1; gen 65535 s65535; gen 65536 s65536; gen 65537 s65537; gen 327803 s327803
	echo s0 s1 s65535 s65536 s65537 s327803
}

@test "zstd round trips: sizes 0, 1, chunk-1, chunk, chunk+1, several chunks; -T1 -T2 -T0" {
	for f in $(sizes); do for t in 1 2 0; do roundtrip zstd "$t" "$f"; done; done
}

@test "gzip round trips: sizes 0, 1, chunk-1, chunk, chunk+1, several chunks; -T1 -T2 -T0" {
	for f in $(sizes); do for t in 1 2 0; do roundtrip gzip "$t" "$f"; done; done
}

@test "lz4 round trips: sizes 0, 1, chunk-1, chunk, chunk+1, several chunks; -T1 -T2 -T0" {
	for f in $(sizes); do for t in 1 2 0; do roundtrip lz4 "$t" "$f"; done; done
}

@test "corpus sample round trips in every format, default chunk size and levels" {
	corpus c
	for fmt in zstd gzip lz4; do
		for lvl in "" -1 -9; do
			"$A" -c -F "$fmt" $lvl c > "c.$fmt"
			ref_decompress "$fmt" "c.$fmt" | cmp c -
			"$A" -c -d "c.$fmt" | cmp c -
		done
	done
	"$A" -c -19 -B 1M -T2 c | "$A" -d | cmp c -
	"$A" --ultra -22 -B 256K < c | zstd -d -c | cmp c -
}

@test "output of several inputs is one stream; '-' reads stdin" {
	gen 100000 a; gen 70000 b
	"$A" -c -B 64K a - b < b > ab.zst
	"$A" -c -d ab.zst | cmp <(cat a b b) -
}

@test "-o FILE writes the file and nothing to stdout" {
	gen 200000 a
	run "$A" -B 64K a -o a.zst
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	"$A" -d a.zst -o a.out
	cmp a a.out
	[ "$(ls -A | sort | tr '\n' ' ')" = "a a.out a.zst " ]
}

@test "interop: zstd frames, concatenated frames, skippable frames, one big frame" {
	gen 300000 a; gen 200000 b
	zstd -q -c a > one.zst
	"$A" -c -d one.zst | cmp a -
	zstd -q -c a > two.zst; zstd -q -c --no-check b >> two.zst
	"$A" -c -d two.zst | cmp <(cat a b) -
	# skippable frames (magic 0x184D2A50..5F) between and after
	zstd -q -c a > skip.zst
	printf '\x5f\x2a\x4d\x18\x00\x00\x00\x00' >> skip.zst
	zstd -q -c b >> skip.zst
	printf '\x53\x2a\x4d\x18\x03\x00\x00\x00abc' >> skip.zst
	"$A" -c -d skip.zst | cmp <(cat a b) -
	zstd -q -c - < a > stream.zst   # no content size in the header
	"$A" -c -d -T2 stream.zst | cmp a -
	# one frame larger than a decompression unit (64 MiB) is decoded sequentially
	seq 1 12000000 > big
	[ "$(stat -c %s big)" -gt 67108864 ]
	zstd -q -1 -T2 --single-thread -c big > big.zst
	[ "$(zstd -l big.zst | awk 'NR==2 {print $1}')" = 1 ]
	"$A" -c -d big.zst | cmp big -
}

@test "interop: a zstd stream that starts with a skippable frame" {
	gen 300000 a
	printf '\x50\x2a\x4d\x18\x05\x00\x00\x00hello' > skip.zst
	zstd -q -c a >> skip.zst
	zstd -q -d -c skip.zst | cmp a -
	run --separate-stderr "$A" -d skip.zst -o out
	echo "status $status; stderr: $stderr"
	[ "$status" -eq 0 ]
	cmp a out
	printf '\x50\x2a\x4d\x18\x01\x00\x00\x00!' > skip.lz4
	lz4 -q -c a >> skip.lz4
	lz4 -q -d -c skip.lz4 | cmp a -
	"$A" -c -d skip.lz4 | cmp a -
}

@test "interop: gzip, multi-member gzip (cat a.gz b.gz), pigz" {
	gen 300000 a; gen 200000 b
	gzip -c a > a.gz; gzip -9 -c b > b.gz
	"$A" -c -d a.gz | cmp a -
	cat a.gz b.gz > ab.gz
	"$A" -c -d ab.gz | cmp <(cat a b) -
	"$A" -d -T2 < ab.gz | cmp <(cat a b) -
	pigz -p 2 -b 64 -c a > a.pigz
	"$A" -c -d a.pigz | cmp a -
	pigz -p 2 -i -b 32 -c b > b.pigz
	cat a.pigz b.pigz a.gz > mixed.gz
	"$A" -c -d mixed.gz | cmp <(cat a b a) -
	# ours followed by gzip's, in one file
	"$A" -c -F gzip -B 64K a > ours.gz
	cat ours.gz b.gz > ours-then-gzip.gz
	"$A" -c -d ours-then-gzip.gz | cmp <(cat a b) -
	gzip -d -c ours-then-gzip.gz | cmp <(cat a b) -
}

@test "-0 is the default level and --fast[=N] the levels below 1, as zstd and lz4 take them: their bytes" {
	seq 1 200000 > s
	for l in -0 --fast --fast=5 "--fast=5 -3" "-3 --fast=2"; do
		"$A" -T1 $l -c s > ours.zst
		zstd -q $l -c s > theirs.zst
		cmp ours.zst theirs.zst
	done
	[ "$(stat -c %s ours.zst)" -gt "$(zstd -q -c s | wc -c)" ]
	"$A" -F lz4 --fast=8 -c s | lz4 -q -d -c | cmp - s
	[ "$("$A" -F lz4 --fast=8 -c s | wc -c)" -gt "$("$A" -F lz4 -c s | wc -c)" ]
	"$A" -F gzip --fast -c s | gzip -d -c | cmp - s
	cmp <("$A" -F gzip --fast -c s) <("$A" -F gzip -1 -c s)
	run -2 "$A" --fast=0 -c s
	[ "${lines[0]}" = "accel-compress: --fast=0 is out of range (1-65537)" ]
}

@test "interop: lz4 frames, concatenated, small blocks, skippable" {
	gen 300000 a; gen 200000 b
	lz4 -q -c a > a.lz4
	"$A" -c -d a.lz4 | cmp a -
	lz4 -q -B4 --content-size -c b > b.lz4
	"$A" -c -d b.lz4 | cmp b -
	lz4 -q -BD --no-frame-crc -c a > dep.lz4
	"$A" -c -d dep.lz4 | cmp a -
	cat a.lz4 b.lz4 > ab.lz4
	printf '\x51\x2a\x4d\x18\x02\x00\x00\x00xy' >> ab.lz4
	"$A" -c -d -T2 ab.lz4 | cmp <(cat a b) -
	lz4 -q -c - < a > stream.lz4
	"$A" -c -d stream.lz4 | cmp a -
	# a content size of 0 with its flag set is unknown, as lz4 -d reads it;
	# one short of the truth is damage (the header checksum made anew:
	# XXH32 of the descriptor, second byte, lz4 Frame Format 1.6.x)
	/usr/bin/python3 - b.lz4 <<'PY'
import struct, sys
def xxh32(data, seed=0):
    P1, P2, P3, P4, P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    M = 0xffffffff
    rotl = lambda x, r: ((x << r) | (x >> (32 - r))) & M
    n, i = len(data), 0
    if n >= 16:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed & M, (seed - P1) & M]
        while i + 16 <= n:
            for k in range(4):
                v[k] = rotl((v[k] + struct.unpack_from('<I', data, i + 4 * k)[0] * P2) & M, 13) * P1 & M
            i += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 4 <= n:
        h = rotl((h + struct.unpack_from('<I', data, i)[0] * P3) & M, 17) * P4 & M
        i += 4
    while i < n:
        h = rotl((h + data[i] * P5) & M, 11) * P1 & M
        i += 1
    h ^= h >> 15; h = h * P2 & M; h ^= h >> 13; h = h * P3 & M; h ^= h >> 16
    return h
src = open(sys.argv[1], 'rb').read()
assert src[4] & 0x08
size = struct.unpack_from('<Q', src, 6)[0]
for name, value in (('cs0.lz4', 0), ('csm1.lz4', size - 1)):
    d = bytearray(src)
    struct.pack_into('<Q', d, 6, value)
    d[14] = xxh32(bytes(d[4:14])) >> 8 & 0xff
    open(name, 'wb').write(d)
PY
	lz4 -q -d -c cs0.lz4 | cmp b -
	"$A" -c -d cs0.lz4 | cmp b -
	run ! lz4 -q -d -c csm1.lz4
	run -3 --separate-stderr "$A" -c -d csm1.lz4
	[ "$stderr" = "accel-compress: csm1.lz4: lz4 frame: more data than the header's content size, 199999 bytes at byte offset 0 (unit 0)" ]
}

@test "lz4 program's frames (independent blocks, no size) decode in parts on every worker: lz4 -d's bytes" {
	gen 10000000 a
	lz4 -q -c a > a7.lz4                      # 4 MiB blocks, content checksum
	lz4 -q -B4 -c a > a4.lz4                  # 64 KiB blocks, 64 to a part
	lz4 -q -B5 -BX --no-frame-crc -c a > a5.lz4
	: | lz4 -q -c > e.lz4
	printf '\x50\x2a\x4d\x18\x01\x00\x00\x00!' > skip
	cat a7.lz4 e.lz4 skip a4.lz4 > cat.lz4
	lz4 -q -d -c cat.lz4 | cmp - <(cat a a)
	for f in a7 a4 a5; do
		for t in 1 2 4; do
			"$A" -d -c -T "$t" "$f.lz4" | cmp a -
			"$A" -d -T "$t" < "$f.lz4" | cmp a -
		done
		run --separate-stderr "$A" -v -d -c "$f.lz4"
		[[ "$stderr" == *": 3 units, "* ]]
	done
	"$A" -d -c -T 2 cat.lz4 | cmp - <(cat a a)
	"$A" -d -T 2 < cat.lz4 | cmp - <(cat a a)
	"$A" -d -c e.lz4 | cmp - /dev/null
}

@test "lz4 frames decoded in parts: a damaged block, block checksum, content checksum, size or end is exit 3" {
	gen 10000000 a
	lz4 -q -c a > a.lz4
	lz4 -q -BX -c a > x.lz4
	n=$(stat -c %s a.lz4)
	# the content checksum: the parts before the last are written
	cp a.lz4 ck.lz4
	printf '\x00\x00\x00\x00' | dd of=ck.lz4 bs=1 seek=$((n - 4)) conv=notrunc status=none
	run ! lz4 -q -d -c ck.lz4
	run -3 --separate-stderr sh -c '"$0" -d -c -T 2 ck.lz4 > o.out' "$A"
	[[ "$stderr" == "accel-compress: ck.lz4: lz4 frame at byte offset 0: content checksum mismatch (XXH32 "*", the frame says 00000000)" ]]
	[ "$(stat -c %s o.out)" -eq 8388608 ]
	cmp -n 8388608 o.out a
	damaged ck.lz4
	# a byte of the second block changed: its checksum, or the content's
	flip_middle x.lz4
	run -3 --separate-stderr "$A" -d -c x.lz4
	[[ "$stderr" == "accel-compress: x.lz4: lz4 frame: the block at byte offset "*" fails its checksum, in the unit at byte offset "*" (unit 1)" ]]
	damaged x.lz4
	cp a.lz4 m.lz4; flip_middle m.lz4
	run ! lz4 -q -d -c m.lz4
	damaged m.lz4
	# cut inside a block, and before the end mark
	head -c $((n / 2)) a.lz4 > h.lz4
	run -3 --separate-stderr "$A" -d -c h.lz4
	[ "$stderr" = "accel-compress: h.lz4: lz4 frame at byte offset 0 is truncated at byte offset $((n / 2))" ]
	damaged h.lz4
	head -c $((n - 8)) a.lz4 > t.lz4
	damaged t.lz4
	cat a.lz4 | head -c $((n - 2)) | "$A" -d > p.out && false
	[ "$(stat -c %s p.out)" -eq 8388608 ]
	# a stated content size over the parallel limit (64 MiB) that lies
	head -c 70000000 /dev/zero > z
	lz4 -q --content-size -c z > z.lz4
	rm z
	"$A" -d -c -T 2 z.lz4 | cmp - <(head -c 70000000 /dev/zero)
	/usr/bin/python3 - z.lz4 <<'PY'
import struct, sys, xxhash
d = bytearray(open(sys.argv[1], 'rb').read())
assert d[4] & 0x08
struct.pack_into('<Q', d, 6, 70000001)
d[14] = xxhash.xxh32(bytes(d[4:14])).intdigest() >> 8 & 0xff
open('zlie.lz4', 'wb').write(d)
PY
	run ! lz4 -q -d -c zlie.lz4
	run -3 --separate-stderr "$A" -d -c zlie.lz4
	[ "$stderr" = "accel-compress: zlie.lz4: lz4 frame at byte offset 0: 70000000 bytes decoded, header says 70000001" ]
	damaged zlie.lz4
}

@test "interop: checksums are written by default and --no-check drops them" {
	gen 100000 a
	"$A" -c a | zstd -l -v - 2>&1 | grep -q 'Check: XXH64' ||
		"$A" -c a > a.zst && zstd -lv a.zst | grep -q 'Check: XXH64'
	"$A" -c --no-check a > n.zst
	zstd -lv n.zst | grep -q 'Check: None'
	"$A" -c -F lz4 a > a.lz4
	"$A" -l a.lz4 | grep -q ' xxh32 '
	"$A" -c -F lz4 --no-check a > n.lz4
	"$A" -l n.lz4 | grep -q ' none '
	lz4 -d -c n.lz4 | cmp a -
}

# damaged FILE: decompress FILE to -o out; expect exit 3, one line naming a
# byte offset, and neither out nor a temporary beside it.
damaged() {
	run --separate-stderr "$A" -d "$1" -o out
	echo "status $status; stderr: $stderr"
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" =~ ^accel-compress:\ .*byte\ offset\ [0-9]+ ]]
	[ ! -e out ]
	[ -z "$(find . -name '.out.*')" ]
}

flip_middle() {
	local n; n=$(stat -c %s "$1")
	printf "$(printf '\\%03o' $(( ($(od -An -tu1 -j $((n / 2)) -N1 "$1") ^ 0x55) )))" |
		dd of="$1" bs=1 seek=$((n / 2)) conv=notrunc status=none
}

@test "corrupted input (a flipped byte in the middle): exit 3, offset, no -o file" {
	gen 400000 a
	for fmt in zstd gzip lz4; do
		"$A" -c -F "$fmt" -B 64K a > "bad.$fmt"
		flip_middle "bad.$fmt"
		run ! cmp -s <("$A" -c -F "$fmt" -B 64K a) "bad.$fmt"
		damaged "bad.$fmt"
	done
	# streams of the other tools go through the sequential decoders
	gzip -c a > bad-gzip.gz; flip_middle bad-gzip.gz; damaged bad-gzip.gz
	zstd -q -c a > bad-zstd.zst; flip_middle bad-zstd.zst; damaged bad-zstd.zst
	lz4 -q -c a > bad-lz4.lz4; flip_middle bad-lz4.lz4; damaged bad-lz4.lz4
}

@test "a frame damaged in the middle: the frames before it are written, at any -T, as zstd -d writes them" {
	gen 2000000 a
	"$A" -c -F zstd -B 64K a > bad.zst
	flip_middle bad.zst
	run ! sh -c 'zstd -q -d -c bad.zst > z.out'
	for t in 1 2 4; do
		for i in 1 2 3; do
			run -3 sh -c '"$0" -d -c -T "$1" bad.zst > o.out' "$A" $t
			[[ "$output" =~ \(unit\ ([0-9]+)\)$ ]]
			# Every unit before the bad one, whole: a prefix of the
			# input, and of what zstd -d writes.
			[ "$(stat -c %s o.out)" = $(( BASH_REMATCH[1] * 65536 )) ]
			[ "${BASH_REMATCH[1]}" -gt 0 ]
			cmp -n "$(stat -c %s o.out)" o.out a
			cmp -n "$(stat -c %s o.out)" o.out z.out
		done
	done
	# A damaged gzip member in a multi-member file: the members before it.
	"$A" -c -F gzip -B 64K a > bad.gz
	flip_middle bad.gz
	run -3 sh -c '"$0" -d -c bad.gz > g.out' "$A"
	[[ "$output" =~ \(unit\ ([0-9]+)\)$ ]]
	[ "$(stat -c %s g.out)" = $(( BASH_REMATCH[1] * 65536 )) ]
	cmp -n "$(stat -c %s g.out)" g.out a
}

@test "truncated input (half, or all but the last byte): exit 3, offset, no -o file" {
	gen 400000 a
	for fmt in zstd gzip lz4; do
		"$A" -c -F "$fmt" -B 64K a > "full.$fmt"
		n=$(stat -c %s "full.$fmt")
		head -c $((n / 2)) "full.$fmt" > "half.$fmt"
		damaged "half.$fmt"
		head -c $((n - 1)) "full.$fmt" > "short.$fmt"
		damaged "short.$fmt"
	done
	gzip -c a | head -c 100000 > t.gz; damaged t.gz
	zstd -q -c a | head -c 100000 > t.zst; damaged t.zst
	lz4 -q -c a | head -c 100000 > t.lz4; damaged t.lz4
}

@test "not compressed, empty, or trailing garbage: exit 3" {
	gen 1000 a
	run --separate-stderr "$A" -c -d a
	[ "$status" -eq 3 ]
	[ "$stderr" = "accel-compress: a: not in a known format (zstd, gzip or lz4) at byte offset 0" ]
	: > empty
	run --separate-stderr "$A" -c -d empty
	[ "$status" -eq 3 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	"$A" -c a > g.zst
	echo garbage >> g.zst
	damaged g.zst
}

# garbage_as_gzip FILE: accel-compress -d and gzip -d on FILE give the same
# output (ours.out) and status, and the same line on stderr but the program
# name; $status and $stderr are ours.
garbage_as_gzip() {
	local theirs
	run --separate-stderr gzip -d -c "$1"
	# (gzip starts its warning with an empty line)
	theirs="$status:$(grep -v '^$' <<< "$stderr" | sed 's/^gzip: /accel-compress: /')"
	gzip -d -c "$1" > theirs.out || true
	"$A" -d -c "$1" > ours.out || true
	run --separate-stderr "$A" -d -c "$1"
	echo "$1: ours $status:$stderr, gzip's $theirs"
	[ "$status:$stderr" = "$theirs" ]
	cmp ours.out theirs.out
}

@test "gzip data then trailing garbage: decoded, a warning, status 2, as gzip -d" {
	gen 100000 a
	gzip -c a > a.gz
	"$A" -c -F gzip a > ours.gz
	for g in a.gz ours.gz; do
		cat "$g" > g1.gz; printf 'garbage!' >> g1.gz
		cat "$g" > g2.gz; head -c 5000 /dev/zero >> g2.gz; printf 'x' >> g2.gz
		# a zstd skippable frame is no gzip member
		cat "$g" > g3.gz; printf '\x50\x2a\x4d\x18\0\0\0\0' >> g3.gz
		for f in g1.gz g2.gz g3.gz; do
			garbage_as_gzip "$f"
			[ "$status" -eq 2 ]
			[ "$stderr" = "accel-compress: $f: decompression OK, trailing garbage ignored" ]
			cmp ours.out a
		done
		# zeros alone are padding: nothing said, status 0
		cat "$g" > z.gz; head -c 700 /dev/zero >> z.gz
		garbage_as_gzip z.gz
		[ "$status" -eq 0 ] && [ -z "$stderr" ]
	done
	# -o FILE is kept, -q says nothing, -t tests, the next FILE is decoded
	run --separate-stderr "$A" -d g1.gz -o out
	[ "$status" -eq 2 ]
	cmp out a
	run --separate-stderr "$A" -q -f -d g1.gz z.gz -o both
	[ "$status" -eq 2 ] && [ -z "$stderr" ]
	cmp both <(cat a a)
	run --separate-stderr "$A" -t g1.gz
	[ "$status" -eq 2 ]
	[ "$stderr" = "accel-compress: g1.gz: decompression OK, trailing garbage ignored" ]
	# a lone byte after a member is one cut short (gzip: "unexpected end
	# of file", status 1): an error, in a later FILE too, that leaves no -o FILE
	{ cat ours.gz; printf 'x'; } > x.gz
	run gzip -d -c x.gz
	[ "$status" -eq 1 ]
	run --separate-stderr "$A" -f -d g1.gz x.gz -o bad
	[ "$status" -eq 3 ]
	[ "${stderr_lines[1]}" = "accel-compress: x.gz: unexpected end of input at byte offset $(stat -c %s x.gz)" ]
	[ ! -e bad ]
}

@test "zstd and lz4 data then trailing garbage: an error, as zstd -d and lz4 -d say" {
	gen 100000 a
	for fmt in zstd lz4; do
		"$fmt" -q -c a > "g.$fmt"
		printf 'garbage!' >> "g.$fmt"
		run ref_decompress "$fmt" "g.$fmt"
		[ "$status" -ne 0 ]
		run --separate-stderr "$A" -d "g.$fmt" -o out
		[ "$status" -eq 3 ]
		[ "$stderr" = "accel-compress: g.$fmt: trailing data is not in $fmt format at byte offset $(( $(stat -c %s "g.$fmt") - 8 ))" ]
		[ ! -e out ]
	done
}

@test "lz4 legacy frames (lz4 -l) decode as lz4 -d decodes them" {
	gen 100000 a
	# over 8 MiB: a legacy frame of several blocks
	{ seq 1 1500000; head -c 1000000 /dev/urandom | base64; } > big
	: > empty
	for f in a big empty; do
		lz4 -q -l -c "$f" > "$f.lz4"
		"$A" -c -d "$f.lz4" | cmp - "$f"
		"$A" -d < "$f.lz4" | cmp - "$f"
		lz4 -q -d -c "$f.lz4" | cmp - "$f"
	done
	# blocks of 8 MiB decode in parallel, a part each; one damaged is exit 3
	run --separate-stderr "$A" -v -d -c big.lz4
	[[ "$stderr" == *": 2 units, $(stat -c %s big.lz4) bytes in, $(stat -c %s big) bytes out"* ]]
	n=$(stat -c %s big.lz4)
	head -c $((n - 100)) big.lz4 > cut.lz4
	run ! lz4 -q -d -c cut.lz4
	run -3 --separate-stderr "$A" -d -c cut.lz4
	[ "$stderr" = "accel-compress: cut.lz4: lz4 legacy block at byte offset $((8 + $(od -An -tu4 -j4 -N4 big.lz4))) is truncated at byte offset $((n - 100))" ]
	damaged cut.lz4
	# legacy frames among frames and skippable frames, in one stream
	lz4 -q -c a > a.frame.lz4
	printf '\x50\x2a\x4d\x18\x02\0\0\0hi' > skip
	cat a.lz4 a.frame.lz4 skip big.lz4 a.lz4 > mixed.lz4
	lz4 -q -d -c mixed.lz4 | cmp - <(cat a a big a)
	"$A" -c -d mixed.lz4 | cmp - <(cat a a big a)
	"$A" -t mixed.lz4
	# listed: one frame each, its content size unknown (never stated)
	run --separate-stderr "$A" -l a.lz4
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" =~ ^\ +1\ +0\ +$(stat -c %s a.lz4)\ +unknown\ .*\ none\ +lz4\ +a.lz4$ ]]
	# truncated in a block, and in a block size: corrupt input, as lz4 -d says
	head -c 2000 a.lz4 > cut.lz4
	run lz4 -q -d -c cut.lz4
	[ "$status" -ne 0 ]
	run --separate-stderr "$A" -c -d cut.lz4
	[ "$status" -eq 3 ]
	[ "$stderr" = "accel-compress: cut.lz4: lz4 legacy block at byte offset 4 is truncated at byte offset 2000" ]
	{ cat a.lz4; printf '\x10\0'; } > cut2.lz4
	run lz4 -q -d -c cut2.lz4
	[ "$status" -ne 0 ]
	run --separate-stderr "$A" -d cut2.lz4 -o out
	[ "$status" -eq 3 ]
	[ ! -e out ]
}

@test "an existing -o FILE is kept without -f and replaced with -f" {
	gen 100000 a
	echo precious > out
	run --separate-stderr "$A" a -o out
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: out already exists; use -f to overwrite it" ]
	[ "$(cat out)" = precious ]
	[ -z "$(find . -name '.out.*')" ]
	"$A" -f a -o out
	"$A" -c -d out | cmp a -
	# decompression too
	echo precious > plain
	run "$A" -d out -o plain
	[ "$status" -eq 1 ]
	[ "$(cat plain)" = precious ]
}

@test "fault injection: the test engine fails on chunk 2, --fallback cpu: identical output" {
	gen 500000 a
	for fmt in zstd gzip lz4; do
		"$A" -c -F "$fmt" -B 64K -b cpu a > "cpu.$fmt"
		run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT=test:2 \
			"$A" -F "$fmt" -B 64K -b test:other0 --fallback cpu a -o "test.$fmt"
		[ "$status" -eq 0 ]
		[ "$stderr" = "accel-compress: warning: test:other0: unit 2 failed: injected fault (ACCEL_FAULT); retrying on cpu" ]
		cmp "cpu.$fmt" "test.$fmt"
		# and when decompressing
		ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT='test:0,3-4' \
			"$A" -c -q -d -b test:other0 --fallback cpu "cpu.$fmt" | cmp a -
	done
}

@test "fault injection: every unit fails on the test engine: dropped, output still identical" {
	gen 500000 a
	"$A" -c -B 64K a > cpu.zst
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT='test:*' \
		"$A" -v -B 64K -b test:other0 --fallback cpu a -o test.zst
	[ "$status" -eq 0 ]
	cmp cpu.zst test.zst
	[[ "$stderr" == *"(engine dropped for the rest of the run)"* ]]
	[[ "$stderr" =~ test:other0\ +workers\ 1,\ units\ 0,.*failures\ 3,.*dropped ]]
	[[ "$stderr" =~ cpu\ +workers\ [1-9][0-9]*,\ units\ 8,.*retried\ here\ 3[[:space:]] ]]
}

@test "fault injection: --fallback next moves to the next engine of -b" {
	gen 300000 a
	"$A" -c -B 64K a > cpu.zst
	ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT=test:1 "$A" -c -q -B 64K -b test:other0,cpu --fallback next a > next.zst
	cmp cpu.zst next.zst
	# nothing after the last engine: the run fails (both serve the stream,
	# so both fail unit 1)
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT='cpu:1;test:1' \
		"$A" -B 64K -b test:other0,cpu --fallback next a -o out
	[ "$status" -eq 1 ]
	[ ! -e out ]
}

@test "fault injection: --fallback none fails with exit 1 and leaves no output file" {
	gen 300000 a
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT=test:2 \
		"$A" -B 64K -b test:other0 --fallback none a -o out
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: a: test:other0: unit 2 (byte offset 131072) failed: injected fault (ACCEL_FAULT); --fallback none" ]
	[ ! -e out ]
	[ -z "$(find . -name '.out.*')" ]
	# the CPU itself failing has nowhere to go
	run --separate-stderr env ACCEL_FAULT=cpu:0 "$A" -B 64K a -o out
	[ "$status" -eq 1 ]
	[ ! -e out ]
}

@test "a malformed ACCEL_FAULT is an error, not ignored" {
	gen 1000 a
	run --separate-stderr env ACCEL_FAULT='cpu:x' "$A" a -o out
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"ACCEL_FAULT is malformed"* ]]
	[ ! -e out ]
}

@test "a plugin with a wrong ABI is a reason in -v, never a crash" {
	gen 1000 a
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" "$A" -v -b badabi,cpu a -o out
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"badabi           left out: plugin built for backend ABI 112, this libaccel has ABI 12"* ]]
	"$A" -c -d out | cmp a -
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" "$A" -c -b badabi a
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: no engine can run zstd.compress (try -v for the reasons)" ]
}

@test "auto never routes to the software test engine; -b test:other0 does, -b test says to name it in full" {
	gen 2000000 a
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" "$A" -v a -o out
	[ "$status" -eq 0 ]
	[[ "${stderr_lines[1]}" == "  1. cpu "* ]]
	[[ "$stderr" == *"test:other0      software device: never preferred"* ]]
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" "$A" -f -v -b test:other0 a -o out
	[[ "${stderr_lines[1]}" == "  1. test:other0      named by --backend (software device)" ]]
	"$A" -c -d out | cmp a -
	# By its backend alone (the option or the environment), it is not
	# taken: one line names it in full, exit 1, no output.
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" "$A" -b test a -o out2
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: --backend test: only a software device (test:other0); name it in full to use it" ]
	[ ! -e out2 ]
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_BACKEND=test "$A" a -o out2
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: --backend test: only a software device (test:other0); name it in full to use it" ]
	[ ! -e out2 ]
	# Beside an engine it can take, the list runs there.
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" "$A" -v -b test,cpu a -o out2
	[ "$status" -eq 0 ]
	[ "${stderr_lines[1]}" = "  1. cpu              named by --backend" ]
	[ "${stderr_lines[2]}" = "  -  test:other0      left out: software device: name it in full (test:other0) to use it" ]
	cmp out out2
}

@test "--list counts frames, sizes and ratio" {
	gen 327803 a
	"$A" -c -B 64K a > a.zst
	run --separate-stderr "$A" --list a.zst
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = " Frames  Skips     Compressed   Uncompressed   Ratio  Check  Format Filename" ]
	read -r frames skips csize usize ratio check format name <<< "${lines[1]}"
	[ "$frames" = 6 ] && [ "$skips" = 0 ] && [ "$usize" = 327803 ] && [ "$csize" = "$(stat -c %s a.zst)" ]
	[ "$check" = xxh64 ] && [ "$format" = zstd ] && [ "$name" = a.zst ]
	"$A" -c -F gzip -B 64K a > a.gz
	printf '\x50\x2a\x4d\x18\x01\x00\x00\x00!' > s.zst; cat a.zst >> s.zst
	run "$A" -l a.gz s.zst
	read -r frames skips csize usize ratio check format name <<< "${lines[1]}"
	[ "$frames" = 6 ] && [ "$check" = crc32 ] && [ "$format" = gzip ]
	read -r frames skips csize usize ratio check format name <<< "${lines[2]}"
	[ "$frames" = 6 ] && [ "$skips" = 1 ] && [ "$csize" = "$(stat -c %s s.zst)" ]
	# a gzip member of another tool is measured by inflating it
	gzip -c a > g.gz
	run "$A" -l g.gz
	read -r frames skips csize usize ratio check format name <<< "${lines[1]}"
	[ "$frames" = 1 ] && [ "$usize" = 327803 ] && [ "$csize" = "$(stat -c %s g.gz)" ]
}

@test "--list --json is JSON with schema_version and the frame list" {
	gen 327803 a
	"$A" -c -F lz4 -B 64K a > a.lz4
	run --separate-stderr "$A" --list --json a.lz4
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.schema_version == 1'
	echo "$output" | jq -e '.files | length == 1'
	echo "$output" | jq -e '.files[0] | .name == "a.lz4" and .format == "lz4" and .frames == 6
		and .skippable_frames == 0 and .uncompressed_bytes == 327803 and .check == "xxh32"'
	echo "$output" | jq -e --argjson n "$(stat -c %s a.lz4)" '.files[0].compressed_bytes == $n'
	echo "$output" | jq -e '[.files[0].frame_list[].uncompressed_bytes] == [65536,65536,65536,65536,65536,123]'
	echo "$output" | jq -e '.files[0].frame_list[0].offset == 0'
}

@test "--list of a damaged file: exit 3" {
	gen 300000 a
	"$A" -c -B 64K a | head -c 100000 > t.zst
	run --separate-stderr "$A" -l t.zst
	[ "$status" -eq 3 ]
	[[ "$stderr" =~ byte\ offset\ [0-9]+ ]]
}

@test "-t tests without writing; damaged input fails it" {
	gen 300000 a
	"$A" -c -F gzip -B 64K a > a.gz
	run --separate-stderr "$A" -t a.gz
	[ "$status" -eq 0 ]
	[ -z "$output" ] && [ -z "$stderr" ]
	flip_middle a.gz
	run --separate-stderr "$A" -t a.gz
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	[[ "$stderr" =~ byte\ offset\ [0-9]+ ]]
	[ "$(ls -A | sort | tr '\n' ' ')" = "a a.gz " ]
}

@test "a reader that goes away (| head -c 10): exit 0, no message" {
	gen 8000000 a
	"$A" -c -B 64K a > a.zst
	run bash -c '"$1" -c -d -B 64K "$2" 2>err | head -c 10 > /dev/null; echo "${PIPESTATUS[0]}"; cat err' _ "$A" a.zst
	[ "$output" = 0 ]
	run bash -c '"$1" -c -B 64K -T2 "$2" 2>err | head -c 10 > /dev/null; echo "${PIPESTATUS[0]}"; cat err' _ "$A" a
	[ "$output" = 0 ]
}

@test "binary output to a terminal is refused without -f" {
	# script(1) gives the program a pseudo-terminal as stdout.
	printf 'hello' > in
	run script -qec "'$A' -c in; echo rc=\$?" /dev/null
	[[ "$output" == *"refusing to write compressed data to a terminal"* ]]
	[[ "$output" == *"rc=1"* ]]
	# with -f the frame goes to the terminal
	run script -qec "'$A' -c -f in; echo rc=\$?" /dev/null
	[[ "$output" == *"rc=0"* ]]
	[[ "$output" != *"refusing"* ]]
}

@test "--help lists every option" {
	run --separate-stderr "$A" --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[0]}" = "Usage: accel-compress [options] [FILE...]" ]
	for o in "-d, --decompress" "-z, --compress" "-LEVEL" "--ultra" "-F, --format FORMAT" "-o, --output FILE" \
		"-c, --stdout" "-f, --force" "-B, --chunk-size SIZE" "--no-check" "-l, --list" "-t, --test" "--json" \
		"-b, --backend LIST" "--fallback POLICY" "-T, --threads N" "-v, --verbose" "-q, --quiet" \
		"--progress" "--no-progress" "-h, --help" "-V, --version"; do
		grep -qF -- "  $o " <<< "$output" || { echo "--help lacks '$o'"; false; }
	done
	run ! grep -q -- '--help-man\|--completion' <<< "$output"
	run "$A" -V
	[ "${lines[0]}" = "accel-compress 0.1.0" ]
}
