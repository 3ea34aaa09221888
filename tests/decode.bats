#!/usr/bin/env bats
# accel-compress -d never loses data silently: sizes in frame headers are
# hints checked against what decoding finds, the switch between parallel and
# sequential decoding happens at frame boundaries, skippable-only input,
# bounded memory (gzip members over the parallel limit, --list, zstd
# windows and --long). Every fixture is made here, most crafted in python3.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

# gen N FILE: N bytes that compress somewhat.
gen() {
	{ seq 1 "$(( $1 / 8 + 10 ))"; head -c "$(( $1 / 2 + 10 ))" /dev/urandom | base64; } | head -c "$1" > "$2"
}

# limited KB CMD...: run CMD with at most KB KiB of address space, so a
# reservation of gigabytes fails. Sanitizer builds reserve terabytes of
# shadow memory and cannot run so: there the limit is left out.
limited() {
	local kb=$1
	shift
	if ldd "$A" | grep -q 'lib[at]san'; then
		"$@"
	else
		(ulimit -v "$kb" && "$@")
	fi
}

# no_output_file: a failed run with -o out left nothing behind.
no_output_file() {
	[ ! -e out ]
	[ -z "$(find . -name '.out.*')" ]
}

# gzip_ac MODE IN OUT: rewrite the 'AC' field of the first member of our
# gzip file IN (members of 64 KiB of content):
#   half     the member size reaches into the middle of the second member
#   span     the member size covers the second member exactly
#   short    the member size ends before the first member's trailer
#   content  the content size is one more than the member holds
#   huge     the content size is 4 GiB - 1
# and with bytes that are not a member put after a member, inside the
# member size (its last 4 bytes the field's content size, as after a
# member; the field's content size made so where it must be):
#   garbage  8 bytes of text after the last member
#   mid      the same after the first member, the others after them
#   zeros    8 zero bytes after the last member (content size field 0)
#   member   zeros, then another tool's member after the member size
#   lone     one byte after the last member
gzip_ac() {
	python3 - "$@" <<'EOF'
import struct, sys
mode, src, dst = sys.argv[1:4]
data = open(src, 'rb').read()
ms, i = [], 0
while i < len(data):
    size = struct.unpack_from('<I', data, i + 16)[0]
    ms.append(bytearray(data[i:i + size]))
    i += size
assert len(ms) >= 3
m = ms[0]
if mode == 'half':
    struct.pack_into('<I', m, 16, len(ms[0]) + len(ms[1]) // 2)
elif mode == 'span':
    struct.pack_into('<I', m, 16, len(ms[0]) + len(ms[1]))
elif mode == 'short':
    struct.pack_into('<I', m, 16, len(ms[0]) - 8)
elif mode == 'content':
    struct.pack_into('<I', m, 20, struct.unpack_from('<I', m, 20)[0] + 1)
elif mode == 'huge':
    struct.pack_into('<I', m, 20, 0xffffffff)
elif mode in ('garbage', 'mid', 'zeros', 'member', 'lone'):
    m = ms[0] if mode == 'mid' else ms[-1]
    if mode in ('garbage', 'mid'):
        extra = b'junk' + bytes(m[20:24])
    elif mode in ('zeros', 'member'):
        extra = bytes(8)
        struct.pack_into('<I', m, 20, 0)
    else:
        extra = b'\x01'
        m[20:24] = m[-3:] + extra
    struct.pack_into('<I', m, 16, len(m) + len(extra))
    m += extra
    if mode == 'member':
        ms.append(bytearray(open(sys.argv[4], 'rb').read()))
open(dst, 'wb').write(b''.join(ms))
EOF
}

# zstd_bomb WLOG NBLOCKS [fcs] > FILE: one zstd frame asking for a window of
# 2^WLOG bytes, made of NBLOCKS RLE blocks of 128 KiB of 'A'; with "fcs"
# the header states the content size (so it is decoded in parallel).
zstd_bomb() {
	python3 - "$@" <<'EOF'
import struct, sys
wlog, n = int(sys.argv[1]), int(sys.argv[2])
fcs = len(sys.argv) > 3
out = bytearray(b'\x28\xb5\x2f\xfd')
out += bytes([0xc0 if fcs else 0x00, (wlog - 10) << 3])
if fcs:
    out += struct.pack('<Q', n * 131072)
for i in range(n):
    out += struct.pack('<I', (131072 << 3) | (1 << 1) | (i == n - 1))[:3] + b'A'
sys.stdout.buffer.write(out)
EOF
}

# lz4_content IN OUT DELTA: the lz4 frame IN (with a content size) stating
# DELTA bytes more, its header checksum made right again.
lz4_content() {
	# Debian's python3, for its python3-xxhash
	/usr/bin/python3 - "$@" <<'EOF'
import struct, sys
from xxhash import xxh32_intdigest as xxh32
src, dst, delta = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = bytearray(open(src, 'rb').read())
flg = d[4]
assert flg & 0x08, 'no content size'
struct.pack_into('<Q', d, 6, struct.unpack_from('<Q', d, 6)[0] + delta)
end = 6 + 8 + (4 if flg & 1 else 0)
d[end] = (xxh32(bytes(d[4:end])) >> 8) & 0xff
open(dst, 'wb').write(d)
EOF
}

# zstd_content IN OUT DELTA: our zstd frame IN stating DELTA bytes more content.
zstd_content() {
	python3 - "$@" <<'EOF'
import struct, sys
src, dst, delta = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = bytearray(open(src, 'rb').read())
fhd = d[4]
single, flag = fhd >> 5 & 1, fhd >> 6
at = 5 + (0 if single else 1) + [0, 1, 2, 4][fhd & 3]
size = [1 if single else 0, 2, 4, 8][flag]
fmt = {1: '<B', 2: '<H', 4: '<I', 8: '<Q'}[size]
struct.pack_into(fmt, d, at, struct.unpack_from(fmt, d, at)[0] + delta)
open(dst, 'wb').write(d)
EOF
}

@test "gzip 'AC' sizes that do not end a member: sequential decoding, the bytes gzip -d gives" {
	gen 300000 a
	"$A" -c -F gzip -B 64K a > a.gz
	for mode in half short content huge; do
		gzip_ac "$mode" a.gz "$mode.gz"
		gzip -d -c "$mode.gz" > ref
		cmp ref a
		run --separate-stderr "$A" -d "$mode.gz" -o out
		echo "$mode: $status $stderr"
		[ "$status" -eq 0 ] && [ -z "$stderr" ]
		cmp out ref
		rm out
		# -t agrees, and one thread or many make no difference
		"$A" -t -T1 "$mode.gz"
		"$A" -d -T4 -c "$mode.gz" | cmp - ref
	done
}

@test "a gzip 'AC' size that spans the next member exactly: both members decoded, as gzip -d does" {
	gen 300000 a
	"$A" -c -F gzip -B 64K a > a.gz
	gzip_ac span a.gz span.gz
	gzip -d -c span.gz | cmp - a
	run --separate-stderr "$A" -d span.gz -o out
	[ "$status" -eq 0 ]
	cmp out a
	run --separate-stderr "$A" -t span.gz
	[ "$status" -eq 0 ]
	# a span that ends inside the second member is an error, never short output
	head -c -12 span.gz > cut.gz
	run --separate-stderr "$A" -d cut.gz -o out2
	[ "$status" -eq 3 ]
	[ ! -e out2 ]
}

@test "bytes that are not a member inside a gzip 'AC' size end the data as gzip -d ends it" {
	gen 300000 a
	"$A" -c -F gzip -B 64K a > a.gz
	printf 'another member\n' | gzip -c > b.gz
	for mode in garbage mid zeros member lone; do
		gzip_ac "$mode" a.gz "$mode.gz" b.gz
		run --separate-stderr gzip -d -c "$mode.gz"
		ref_status=$status
		printf '%s' "$output" > ref
		gzip -d -c "$mode.gz" > ref 2>/dev/null || :
		for t in 1 2 4; do
			run --separate-stderr "$A" -d -T "$t" "$mode.gz" -o out
			echo "$mode -T $t: $status $stderr (gzip: $ref_status)"
			case $mode in
			garbage | mid | member)
				[ "$status" -eq 2 ] && [ "$ref_status" -eq 2 ]
				[[ "$stderr" == *"decompression OK, trailing garbage ignored"* ]]
				cmp out ref ;;
			zeros)
				[ "$status" -eq 0 ] && [ "$ref_status" -eq 0 ] && [ -z "$stderr" ]
				cmp out a ;;
			lone)
				[ "$status" -ne 0 ] && [ "$ref_status" -eq 1 ]
				[[ "$stderr" == *"unexpected end of input"* ]]
				no_output_file ;;
			esac
			rm -f out
			# from a pipe the bytes after the member size cannot be
			# read again: the same output, and a warning at most
			run --separate-stderr sh -c "cat '$mode.gz' | '$A' -d -T $t -c > piped"
			[ "$mode" = lone ] || cmp piped ref
		done
	done
	# mid: only the first member's content, as gzip -d gives; a member
	# cut short after the garbage is never read by gzip -d, nor reported
	gzip_ac mid a.gz mid.gz
	[ "$(gzip -d -c mid.gz 2>/dev/null | wc -c)" -eq 65536 ]
	head -c -12 mid.gz > midcut.gz
	# and one whose last member keeps 5 bytes of its header
	python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
i = last = 0
while i < len(d) and d[i:i + 2] == b"\x1f\x8b":
    last, i = i, i + struct.unpack_from("<I", d, i + 16)[0]
open(sys.argv[2], "wb").write(d[:last + 5])' mid.gz midhead.gz
	for f in midcut.gz midhead.gz; do
		run gzip -d -c "$f"
		[ "$status" -eq 2 ]
		for t in 1 2 4 1 2 4; do
			run --separate-stderr "$A" -d -T "$t" -c "$f"
			echo "$f -T $t: $status $stderr"
			[ "$status" -eq 2 ]
			[[ "$stderr" == *"trailing garbage ignored"* ]]
			"$A" -d -T "$t" -c "$f" 2>/dev/null | cmp - <(head -c 65536 a)
		done
	done
}

@test "a lying gzip content size reserves no gigabytes" {
	gen 300000 a
	"$A" -c -F gzip -B 64K a > a.gz
	gzip_ac huge a.gz huge.gz
	run --separate-stderr limited 1000000 "$A" -d -T4 huge.gz -o out
	[ "$status" -eq 0 ]
	cmp out a
}

@test "zstd and lz4 content sizes that lie: exit 3 and no file, as the reference fails too" {
	gen 300000 a
	"$A" -c -B 64K a > a.zst
	"$A" -c -F lz4 -B 64K a > a.lz4
	for delta in 1 -1; do
		zstd_content a.zst "z$delta.zst" "$delta"
		run ! zstd -q -d -c "z$delta.zst" > /dev/null
		run --separate-stderr "$A" -d "z$delta.zst" -o out
		echo "zstd $delta: $status $stderr"
		[ "$status" -eq 3 ]
		[[ "$stderr" == "accel-compress: z$delta.zst: zstd frame: "*" at byte offset 0 (unit 0)" ]]
		no_output_file
		lz4_content a.lz4 "l$delta.lz4" "$delta"
		run ! lz4 -q -d -c "l$delta.lz4" > /dev/null
		run --separate-stderr "$A" -d "l$delta.lz4" -o out
		echo "lz4 $delta: $status $stderr"
		[ "$status" -eq 3 ]
		[[ "$stderr" == "accel-compress: l$delta.lz4: lz4 frame"*"at byte offset "* ]]
		no_output_file
	done
}

@test "a frame with content within the parallel limit but longer itself is decoded sequentially, lz4's of independent blocks in parts" {
	head -c 64M /dev/urandom > r
	gen 100000 s
	zstd -q -c r > r.zst
	lz4 -q --content-size -c r > r.lz4
	lz4 -q -BD --content-size -c r > d.lz4
	"$A" -c -F lz4 -B 64M r > o.lz4
	[ "$(stat -c %s r.zst)" -gt 67108864 ] && [ "$(stat -c %s o.lz4)" -gt 67108864 ]
	for f in r.zst d.lz4 r.lz4 o.lz4; do
		run --separate-stderr "$A" -d -v "$f" -o out
		echo "$f: $status $stderr"
		[ "$status" -eq 0 ]
		if [ "$f" = r.zst ] || [ "$f" = d.lz4 ]; then
			[[ "$stderr" == *"1 region(s) processed sequentially"* ]]
		else
			[[ "$stderr" == *": 16 units, $(stat -c %s "$f") bytes in, 67108864 bytes out"* ]]
			[[ "$stderr" != *"processed sequentially"* ]]
		fi
		cmp out r
		rm out
	done
	# parallel, sequential, parallel, sequential: frames around the switch
	"$A" -c -B 64K s > s.zst
	cat s.zst r.zst s.zst r.zst s.zst > mix.zst
	zstd -q -d -c mix.zst > ref
	"$A" -c -d mix.zst | cmp - ref
	"$A" -c -F lz4 -B 64K s > s.lz4
	cat s.lz4 r.lz4 s.lz4 o.lz4 > mix.lz4
	lz4 -q -d -c mix.lz4 > ref
	"$A" -c -d mix.lz4 | cmp - ref
}

@test "a frame stating little content but longer than the parallel limit: the sequential decoder judges it" {
	head -c 64M /dev/urandom > r
	zstd -q -c r > r.zst
	zstd_content r.zst small.zst -67000000
	run --separate-stderr "$A" -d small.zst -o out
	echo "$status $stderr"
	[ "$status" -eq 3 ]
	[[ "$stderr" == "accel-compress: small.zst: zstd frame: "*" at byte offset "* ]]
	no_output_file
}

@test "input holding only skippable frames decompresses to nothing, exit 0, as zstd -d" {
	printf '\x50\x2a\x4d\x18\x03\x00\x00\x00abc' > skip.zst
	printf '\x5f\x2a\x4d\x18\x00\x00\x00\x00' >> skip.zst
	zstd -q -d -c skip.zst > ref
	[ ! -s ref ]
	run --separate-stderr "$A" -d skip.zst -o out
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	[ -f out ] && [ ! -s out ]
	run --separate-stderr "$A" -d -c < skip.zst
	[ "$status" -eq 0 ] && [ -z "$output" ] && [ -z "$stderr" ]
	"$A" -t skip.zst
	# still an error: empty input, and skippable frames followed by garbage
	: > empty
	run --separate-stderr "$A" -c -d empty
	[ "$status" -eq 3 ]
	[ "$stderr" = "accel-compress: empty: unexpected end of input (empty)" ]
	cp skip.zst junk.zst; echo garbage >> junk.zst
	run --separate-stderr "$A" -c -d junk.zst
	[ "$status" -eq 3 ]
	[ "$stderr" = "accel-compress: junk.zst: not in a known format (zstd, gzip or lz4) at byte offset 19" ]
}

@test "a gzip member over the parallel limit is decoded sequentially in bounded memory" {
	head -c 100M /dev/zero > z
	"$A" -c -F gzip -B 128M z > z.gz
	[ "$(stat -c %s z.gz)" -lt 1000000 ]
	run --separate-stderr limited 400000 "$A" -d -v -T2 z.gz -o out
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"1 region(s) processed sequentially"* ]]
	cmp out z
}

@test "--list lists many frames in constant memory, text and JSON unchanged" {
	printf '\x28\xb5\x2f\xfd\x24\x00\x01\x00\x00\x99\xe9\xd8\x51' > e.zst  # what zstd makes of nothing
	zstd -q -t e.zst
	python3 -c 'import sys; e = open("e.zst", "rb").read(); sys.stdout.buffer.write(e * 300000)' > many.zst
	run --separate-stderr limited 100000 "$A" -l --json many.zst
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.files[0].frames == 300000 and (.files[0].frame_list | length) == 300000'
	echo "$output" | jq -e '.files[0].frame_list[299999] == {"offset": 3899987, "compressed_bytes": 13, "uncompressed_bytes": 0}'
	run --separate-stderr limited 100000 "$A" -l -v many.zst
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	[ "${#lines[@]}" -eq 300002 ]
	read -r frames skips csize usize ratio check format name <<< "${lines[1]}"
	[ "$frames" = 300000 ] && [ "$csize" = 3900000 ] && [ "$usize" = 0 ] && [ "$name" = many.zst ]
	[ "${lines[2]}" = "    frame 0 at 0: 13 -> 0" ]
	[ "${lines[300001]}" = "    frame 299999 at 3899987: 13 -> 0" ]
}

@test "--list --json streams several files, a damaged one left out with exit 3" {
	gen 200000 a
	"$A" -c -B 64K a > a.zst
	cat a | zstd -q -c > u.zst  # content size unknown
	head -c 1000 a.zst > t.zst
	run --separate-stderr "$A" -l --json a.zst t.zst u.zst
	[ "$status" -eq 3 ]
	[[ "$stderr" =~ ^accel-compress:\ t\.zst:\ .*byte\ offset\ [0-9]+$ ]]
	echo "$output" | jq -e '[.files[].name] == ["a.zst", "u.zst"]'
	echo "$output" | jq -e '.files[1].uncompressed_bytes == null and .files[1].frame_list[0].uncompressed_bytes == null'
	echo "$output" | jq -e '[.files[0].frame_list[].uncompressed_bytes] == [65536, 65536, 65536, 3392]'
	run --separate-stderr "$A" -l -v u.zst
	[ "${lines[2]}" = "    frame 0 at 0: $(stat -c %s u.zst) -> unknown" ]
}

@test "a zstd window over the limit is refused with zstd -d's words, exit 1, no file" {
	zstd_bomb 28 10 > seq.zst
	zstd_bomb 28 10 fcs > par.zst
	run ! zstd -q -d -c seq.zst > /dev/null
	run --separate-stderr "$A" -d seq.zst -o out
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: seq.zst: zstd frame at byte offset 0: Frame requires too much memory for decoding (a window of 256 MiB, limit 128 MiB; use --long=28 or --memory=256M)" ]
	no_output_file
	run --separate-stderr "$A" -d par.zst -o out
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: par.zst: zstd frame: Frame requires too much memory for decoding (a window of 256 MiB, limit 128 MiB; use --long=28 or --memory=256M) at byte offset 0 (unit 0)" ]
	no_output_file
	# --long=N raises the limit, as for zstd -d
	for f in seq.zst par.zst; do
		zstd -q -d --long=28 -c "$f" > ref
		[ "$(stat -c %s ref)" -eq 1310720 ]
		"$A" -c -d --long=28 "$f" | cmp - ref
		run --separate-stderr "$A" -c -d --long=27 "$f"
		[ "$status" -eq 1 ]
	done
	# windows zstd cannot decode at all
	zstd_bomb 32 1 > huge.zst
	run --separate-stderr "$A" -c -d --long=31 huge.zst
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: huge.zst: zstd frame at byte offset 0: Frame requires too much memory for decoding (a window of 4096 MiB; zstd decodes windows up to 2048 MiB)" ]
}

@test "the window bomb of the issue: 2 GiB window refused before any allocation" {
	zstd_bomb 31 22500 > bomb.zst
	[ "$(stat -c %s bomb.zst)" -lt 100000 ]
	run --separate-stderr limited 500000 "$A" -d bomb.zst -o out
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"Frame requires too much memory for decoding (a window of 2048 MiB, limit 128 MiB; use --long=31 or --memory=2048M)" ]]
	no_output_file
}

@test "--long: 27 alone, 10-31 with =N, anything else a usage error" {
	zstd_bomb 27 2 > w27.zst
	zstd_bomb 28 2 > w28.zst
	"$A" -c -d --long w27.zst | cmp - <(zstd -q -d -c w27.zst)
	run --separate-stderr "$A" -c -d --long w28.zst
	[ "$status" -eq 1 ]
	"$A" -c -d --long=28 w28.zst | cmp - <(zstd -q -d --long=28 -c w28.zst)
	for bad in 9 32 x ''; do
		run --separate-stderr "$A" -c -d "--long=$bad" w27.zst
		[ "$status" -eq 2 ]
		[ "${stderr_lines[0]}" = "accel-compress: --long: '$bad' is not a window log from 10 to 31" ]
	done
	"$A" --help | grep -q -- '--long\[=N\]'
}
