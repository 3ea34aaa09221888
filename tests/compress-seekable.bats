#!/usr/bin/env bats
# accel-compress --seekable (zstd's seekable format: a seek table frame after
# the frames) and -d --range OFFSET:LENGTH: exact bytes at frame boundaries,
# inside frames, across frames, empty and past the end; zstd -d reads the
# file as plain zstd; the table's bytes checked against the spec
# (compress-seekable/table.py, as no Debian package reads the format;
# Debian's python3 for python3-xxhash); a
# table that lies is exit status 3 and no output; without a table (another
# file, a pipe) the frames are walked from the start.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	T="$BATS_TEST_DIRNAME/compress-seekable"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	# 1 MiB random (frames longer than their content), then text: 8 frames
	# of 1 MiB at -B 1M, the last 348863 bytes.
	head -c 1048576 /dev/urandom > in
	seq 1 2000000 | head -c 6640319 >> in
	[ "$(stat -c %s in)" -eq 7688895 ]
	"$A" --seekable -B 1M in -o s.zst
}

# slice FILE OFFSET [LENGTH]: bytes OFFSET .. OFFSET+LENGTH of FILE (to the end without LENGTH).
slice() {
	python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); o = int(sys.argv[2]); n = int(sys.argv[3]) if len(sys.argv) > 3 else len(d)
sys.stdout.buffer.write(d[o:o + n])' "$@"
}

# range OFFSET LENGTH [ARGS]: --range on s.zst gives the same bytes as slice.
range() {
	"$A" -dc --range "$1:$2" "${@:3}" s.zst > got
	slice in "$1" "$2" > want
	cmp got want
}

@test "--seekable round trips; zstd -d reads it; the table is the spec's, checksums XXH64's" {
	"$A" -dc s.zst | cmp - in
	zstd -dc s.zst | cmp - in
	run /usr/bin/python3 "$T/table.py" s.zst in
	[ "$status" -eq 0 ]
	[ "$output" = "frames 8 checksums 1" ]
	# --no-check: entries without checksums, descriptor 0.
	"$A" --seekable --no-check -B 1M in -o n.zst
	run /usr/bin/python3 "$T/table.py" n.zst in
	[ "$output" = "frames 8 checksums 0" ]
	zstd -dc n.zst | cmp - in
	# An empty input: one empty frame in the table.
	: > e
	"$A" --seekable e -o e.zst
	run /usr/bin/python3 "$T/table.py" e.zst e
	[ "$output" = "frames 1 checksums 1" ]
	[ "$("$A" -dc e.zst | wc -c)" -eq 0 ]
}

@test "--range: frame boundaries, inside a frame, across frames, sizes with suffixes" {
	range 0 1048576
	range 1048576 1048576
	range 1048570 20
	range 3000000 5000
	range 100 3145728
	range 5242880 2446015
	"$A" -dc --range 1M:1K s.zst | cmp - <(slice in 1048576 1024)
	"$A" -dc --range 5M: s.zst | cmp - <(slice in 5242880)
	# -v says the seek table was used and which frames were decoded.
	run -0 "$A" -d -v --range 3000000:5000 s.zst -o out
	[[ "$output" == *"s.zst: --range: seek table of 8 frames; frames 2 to 2 decoded"* ]]
	cmp out <(slice in 3000000 5000)
}

@test "--range: zero length and past the end write nothing or what there is, exit 0" {
	run -0 "$A" -dc --range 4096:0 s.zst
	[ -z "$output" ]
	range 7688890 100
	[ "$(stat -c %s got)" -eq 5 ]
	run -0 "$A" -dc --range 7688895:10 s.zst
	[ -z "$output" ]
	run -0 "$A" -dc --range 1G:1 s.zst
	[ -z "$output" ]
	"$A" -t --range 2M:1M s.zst
}

@test "--range without a seek table: another file and a pipe give the same bytes, -v says how" {
	"$A" -B 1M in -o p.zst
	zstd -q -c in > z.zst
	for f in p.zst z.zst; do
		"$A" -dc --range 3000000:5000 "$f" | cmp - <(slice in 3000000 5000)
		"$A" -dc --range 5M: < "$f" | cmp - <(slice in 5242880)
	done
	cat s.zst | "$A" -dc --range 1048570:20 | cmp - <(slice in 1048570 20)
	run -0 "$A" -d -v --range 3000000:5000 p.zst -o out
	[[ "$output" == *"p.zst: --range: no seek table (none at the end of the input); frames read from the start, 2 before the range skipped by their headers without decoding"* ]]
	run -0 bash -c "cat s.zst | '$A' -d -v --range 3000000:5000 -o out2"
	[[ "$output" == *"stdin: --range: no seek table (not a regular file); frames read from the start, 2 before the range skipped"* ]]
	cmp out2 <(slice in 3000000 5000)
	# gzip and lz4 too, decoded and cut.
	"$A" -F gzip -B 1M in -o g.gz
	"$A" -dc --range 3000000:5000 g.gz | cmp - <(slice in 3000000 5000)
	"$A" -F lz4 -B 1M -c in | "$A" -dc --range 7000000: | cmp - <(slice in 7000000)
}

@test "a seek table that lies is exit status 3, nothing written; zstd -d still reads the file" {
	for w in dsize shift count checksum reserved huge; do
		python3 "$T/lie.py" s.zst l.zst "$w"
		zstd -dc l.zst | cmp - in
		run -3 "$A" -d --range 5M:10 l.zst -o out
		[[ "$output" == "accel-compress: l.zst: seek table"* ]]
		[ ! -e out ]
	done
	# A frame in the range that does not match its entry.
	python3 "$T/lie.py" s.zst l.zst dsize
	run -3 "$A" -dc --range 0:10 l.zst
	[ "${lines[0]}" = "accel-compress: l.zst: seek table entry 0 does not match the frame at byte offset 0" ]
	# A file cut short: the footer is gone, frames walked, the cut found.
	head -c "$(($(stat -c %s s.zst) / 2))" s.zst > cut.zst
	run -3 "$A" -dc --range 5M:10 cut.zst
	[[ "$output" == *"truncated"* ]]
}

@test "frames that do not state their size (zstd of a pipe): measured, so a lying entry is still caught" {
	split -b 1000000 in part.
	args=()
	for p in part.*; do
		zstd -q -c < "$p" > "$p.zst"
		args+=("$p" "$p.zst")
	done
	python3 "$T/build.py" u.zst "${args[@]}"
	zstd -dc u.zst | cmp - in
	"$A" -d --range 3500000:1000000 u.zst -o out
	cmp out <(slice in 3500000 1000000)
	run -0 "$A" -l u.zst
	[ "${lines[2]}" = "    seekable: a seek table of 8 frames" ]
	python3 "$T/build.py" l.zst "${args[@]}" --lie 1
	zstd -dc l.zst | cmp - in
	run -3 "$A" -dc --range 3500000:1000000 l.zst
	[ "$output" = "accel-compress: l.zst: seek table entry 1 does not match the frame at byte offset $(stat -c %s part.aa.zst)" ]
}

@test "-l shows the seek table; --seekable and --range refuse what they cannot do" {
	run -0 "$A" -l s.zst
	[ "${lines[2]}" = "    seekable: a seek table of 8 frames with checksums" ]
	"$A" -l --json s.zst | jq -e '.files[0].seek_table == {"frames": 8, "checksums": true} and .files[0].skippable_frames == 1'
	"$A" -B 1M in -o p.zst
	"$A" -l --json p.zst | jq -e '.files[0].seek_table == null'
	python3 "$T/lie.py" s.zst l.zst count
	run -0 "$A" -l l.zst
	[[ "${lines[2]}" == "    seek table: unusable (seek table: "* ]]
	run -2 "$A" --seekable -F gzip in
	[[ "${lines[0]}" == *"--seekable: only the zstd format has a seek table (not gzip)" ]]
	run -2 "$A" -d --seekable s.zst
	run -2 "$A" --range 0:1 in
	[[ "${lines[0]}" == *"--range needs -d (or -t)" ]]
	run -2 "$A" -dc --range 12 s.zst
	[[ "${lines[0]}" == *"--range: '12' is not OFFSET:LENGTH"* ]]
	run -2 "$A" -dc --range 1X:2 s.zst
	run -2 "$A" -d --rm --range 0:1 s.zst
	[ -e s.zst ]
}
