#!/usr/bin/env bats
# accel-bench: onnx.run on the real model `make deps` fetched (and its peer,
# infer-direct), and the video stages run by accel-transcode (and their
# peer, ffmpeg): their fields in the JSON of accel-bench(1), their sizes,
# their engines in --list, and onnx.run left out cleanly where its model is
# not here; --compare and --plot with their sizes. Timings are never
# asserted; every run is small (--repeat 1 --warmup 0, a batch of 1 or 2,
# clips of 64x64).

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-bench"
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

# have_model: the onnxruntime plugin, the library it loads and the model.
have_model() {
	[ -f "$ROOT/build/plugins/accel_onnxruntime.so" ] &&
		{ [ -f "$ROOT/build/deps/onnxruntime/lib/libonnxruntime.so.1" ] || pkg-config --exists libonnxruntime; } &&
		[ -f "$ROOT/build/deps/models/ocr/ch_ppocr_mobile_v2.0_cls_infer.onnx" ]
}

@test "onnx.run: the batch as the size, inferences/s and latency percentiles in --json" {
	have_model || skip "no ONNX Runtime or models: run make deps and make"
	run -0 "$A" --json --repeat 3 --warmup 0 --size 1,2 -T 1 -b onnxruntime.cpu onnx.run
	echo "$output" > out.json
	python3 - out.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 2 and d["not_measured"] == [], d["not_measured"]
assert [(c["operation"], c["engine"], c["size"]) for c in d["cases"]] == \
    [("onnx.run", "onnxruntime.cpu", 1), ("onnx.run", "onnxruntime.cpu", 2)], d["cases"]
for c in d["cases"]:
    assert c["size_unit"] == "batch" and c["resolution"] is None and c["frames_per_second"] is None
    # float32 items of 3x48x192, after a .npy header
    assert c["bytes"] == c["size"] * 3 * 48 * 192 * 4 and c["input_bytes"] > c["bytes"], c
    assert c["engines_ran"] == "onnxruntime.cpu:cpu0" and c["repeats"] == 3 and c["setup_seconds"] > 0
    i = c["inferences_per_second"]
    assert 0 < i["min"] <= i["median"] <= i["max"], i
    l = c["latency_seconds"]
    assert set(l) == {"p50", "p90", "p99"} and 0 < l["p50"] <= l["p90"] <= l["p99"] == max(c["seconds"]), l
    # a softmax of 2 classes per item, as .npy
    assert c["output_bytes"] > c["size"] * 2 * 4 and c["peer"] is None and c["program"] is None
EOF
	run -2 --separate-stderr "$A" --size 1025 onnx.run
	[ "${stderr_lines[0]}" = "accel-bench: --size: 1025 is not a batch for onnx.run (1 to 1024)" ]
}

@test "onnx.run --vs: ONNX Runtime's C API driven directly, its model load apart, the ratio ours over its runs" {
	have_model || skip "no ONNX Runtime or models: run make deps and make"
	[ -x "$ROOT/build/libexec/infer-direct" ] || skip "infer-direct is not built"
	run -0 "$A" --vs --json --repeat 2 --warmup 0 -T 1 onnx.run
	python3 -c '
import json, sys
c = json.load(sys.stdin)["cases"][0]
p = c["peer"]
assert p["command"] == "infer-direct --serve -T 1", p
assert len(p["seconds"]) == 2 and p["startup_seconds"] > 0 and p["ratio"] > 0, p
assert p["inferences_per_second"]["median"] > 0 and p["latency_seconds"]["p50"] > 0, p
# no program is started per run on either side: ours is the library call
assert c["program"] is None
assert abs(p["ratio"] - c["mbps"]["median"] / p["mbps"]["median"]) <= 1e-9 * p["ratio"], (p, c["mbps"])' <<< "$output"
	# the helper gone: no peer, no ratio; inferences/s the 31st column
	ACCEL_BENCH_INFER_DIRECT=/nonexistent run -0 "$A" --vs --csv --repeat 1 --warmup 0 onnx.run
	IFS=, read -r -a f <<< "${lines[1]},"
	[ "${#f[@]}" -eq 33 ]
	[ "${f[0]},${f[2]},${f[3]}" = onnx.run,1,batch ] && [ -z "${f[15]}" ] && [ -z "${f[19]}" ] && [ -z "${f[24]}" ]
	[ -n "${f[30]}" ] && [ -z "${f[31]}" ] && [ -z "${f[32]}" ]
}

@test "onnx.stream --vs: 32 batches run as accel-infer runs a stream, beside ONNX Runtime running the batch 32 times in a row" {
	have_model || skip "no ONNX Runtime or models: run make deps and make"
	[ -x "$ROOT/build/libexec/infer-direct" ] || skip "infer-direct is not built"
	run -0 "$A" --vs --json --repeat 2 --warmup 0 -T 2 --size 2 onnx.stream
	python3 -c '
import json, statistics, sys
c = json.load(sys.stdin)["cases"][0]
assert c["operation"] == "onnx.stream" and c["size"] == 2 and c["size_unit"] == "batch", c
# 32 arrays of 2 items of 3x48x192 float32 in, a softmax of 2 classes per item out
assert c["bytes"] == 32 * 2 * 3 * 48 * 192 * 4 and c["input_bytes"] > c["bytes"], c
assert c["output_bytes"] > 32 * 2 * 2 * 4, c
i = c["inferences_per_second"]["median"]
assert abs(i - 64 / statistics.median(c["seconds"])) <= 1e-6 * i, (i, c["seconds"])
p = c["peer"]
assert p["command"] == "infer-direct --serve -T 2" and len(p["seconds"]) == 2 and p["ratio"] > 0, p
assert abs(p["inferences_per_second"]["median"] - 64 / statistics.median(p["seconds"])) <= 1e-6 * i, p' <<< "$output"
	# Two runs at once, on one thread each: the stream has two workers.
	"$A" -v --repeat 1 --warmup 0 -T 2 --size 2 onnx.stream 2>&1 >/dev/null | grep -q "^  onnxruntime.cpu:cpu0 workers 2, units 32,"
	# Its figure is no single run's: --save keeps onnx.run's, not its.
	ACCEL_PROFILE="$BATS_TEST_TMPDIR/p.json" run -0 "$A" --save --repeat 1 --warmup 0 -T 2 onnx.run onnx.stream
	jq -e '[.entries[].operation] | index("onnx.run") != null and index("onnx.stream") == null' "$BATS_TEST_TMPDIR/p.json"
}

@test "onnx.run without its model: no engine here, left out of the run" {
	export ACCEL_BENCH_MODELS="$BATS_TEST_TMPDIR/none"
	run -0 "$A" --list onnx.run sha256
	[[ "${lines[0]}" =~ ^sha256\ +openssl:cpu0 ]]
	[[ "${lines[1]}" =~ ^onnx\.run\ +no\ engine\ here$ ]]
	run -0 --separate-stderr "$A" --json --repeat 1 --warmup 0 --size 64K onnx.run sha256
	[ -z "$stderr" ]
	[ "$(python3 -c 'import json, sys; d = json.load(sys.stdin); print([c["operation"] for c in d["cases"]], d["not_measured"])' <<< "$output")" = "['sha256'] []" ]
	run -1 --separate-stderr "$A" onnx.run
	[ "$stderr" = "accel-bench: nothing to measure: no engine here can run the operations" ]
}

@test "video stages: accel-transcode on a generated clip, frames/s, the resolution as the size" {
	run -0 "$A" --json --repeat 1 --warmup 0 --size 64x64,96x64 -T 1 h264.decode h264.encode
	echo "$output" > out.json
	python3 - out.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
got = [(c["operation"], c["resolution"], c["size"]) for c in d["cases"]]
assert got == [("h264.decode", "64x64", 4096), ("h264.decode", "96x64", 6144),
               ("h264.encode", "64x64", 4096), ("h264.encode", "96x64", 6144)], got
for c in d["cases"]:
    assert c["size_unit"] == "pixels" and c["engine"] == c["engines_ran"] == "ffmpeg:cpu0", c
    # 50 frames of 4:2:0
    assert c["bytes"] == 50 * c["size"] * 3 // 2 and c["setup_seconds"] > 0, c
    assert c["frames_per_second"]["median"] > 0 and c["inferences_per_second"] is None
    assert set(c["latency_seconds"]) == {"p50", "p90", "p99"} and c["program"] is None
    assert c["peak_rss_bytes"] > 0 and c["cpu_seconds_per_byte"] > 0
dec, enc = d["cases"][0], d["cases"][2]
# the decoder reads the clip accel-transcode encoded; the encoder the y4m
assert dec["input_bytes"] < dec["bytes"] and enc["input_bytes"] > enc["bytes"], (dec, enc)
assert 0 < enc["output_bytes"] < enc["bytes"] and enc["peer"] is None
EOF
	[ -z "$(ls -A "$TMPDIR")" ]
	run -2 --separate-stderr "$A" --size 64x63 h264.decode
	[[ "$stderr" == "accel-bench: --size: '64x63' is not a size ("* ]]
}

@test "video stages --vs: the ffmpeg program on the same clip, accel-transcode's runs as our program's" {
	command -v ffmpeg > /dev/null || skip "ffmpeg is not installed"
	run -0 "$A" --vs --csv --repeat 2 --warmup 0 --size 64x64 -T 1 h264.decode h264.encode
	[ "${#lines[@]}" -eq 3 ]
	IFS=, read -r -a f <<< "${lines[1]}"
	[ "${#f[@]}" -eq 33 ]
	[ "${f[0]},${f[2]},${f[3]},${f[15]},${f[32]}" = "h264.decode,4096,pixels,ffmpeg -threads 1 -f rawvideo,64x64" ]
	[ "${f[24]}" = "accel-transcode --hw none -T 1 --to rawvideo" ]
	# start-ups (peer, program), the ratio, frames/s; the program's MB/s is ours
	python3 -c 'import sys; assert all(float(x) > 0 for x in sys.argv[1:])' "${f[16]}" "${f[25]}" "${f[19]}" "${f[31]}"
	[ "${f[26]}" = "${f[9]}" ] && [ -z "${f[30]}" ]
	IFS=, read -r -a f <<< "${lines[2]}"
	[ "${f[0]},${f[15]},${f[24]}" = "h264.encode,ffmpeg -c:v libx264 -threads 1,accel-transcode --hw none -T 1 --to h264" ]
	python3 -c 'import sys; assert all(float(x) > 0 for x in sys.argv[1:])' "${f[19]}" "${f[31]}"
}

@test "av1.encode --vs as root: the peer's SVT-AV1 gets no real-time threads (CAP_SYS_NICE dropped), as accel-transcode's does not" {
	command -v ffmpeg > /dev/null || skip "ffmpeg is not installed"
	ffmpeg -hide_banner -encoders 2> /dev/null | grep -q libsvtav1 || skip "ffmpeg has no libsvtav1"
	[ "$(id -u)" = 0 ] || skip "not root: SVT-AV1 asks for no real-time threads"
	command -v setpriv > /dev/null || skip "no setpriv (util-linux)"
	# An ffmpeg first on PATH that writes its bounding set, then runs the
	# real one.
	mkdir bin
	printf '#!/bin/sh\ngrep CapBnd /proc/self/status >> "%s/capbnd"\nexec %s "$@"\n' "$PWD" "$(command -v ffmpeg)" > bin/ffmpeg
	chmod +x bin/ffmpeg
	PATH="$PWD/bin:$PATH" run -0 "$A" --vs --csv --repeat 1 --warmup 0 --size 64x64 -T 1 av1.encode
	IFS=, read -r -a f <<< "${lines[1]}"
	[ "${f[0]},${f[15]}" = "av1.encode,ffmpeg -c:v libsvtav1 -threads 1 (no RT)" ]
	# CAP_SYS_NICE is bit 23: off in every run of the peer.
	[ -s capbnd ]
	while read -r _ mask; do
		(( (16#$mask >> 23 & 1) == 0 ))
	done < capbnd
}

@test "--list: onnx.run and the video stages with their engines" {
	run -0 "$A" --list 'h264.*' '*.encode'
	[ "$(cut -d' ' -f1 <<< "$output" | tr '\n' ' ')" = "h264.decode h264.encode hevc.encode av1.encode vp9.encode " ]
	for l in "${lines[@]}"; do
		[[ "$l" =~ ^[a-z0-9]+\.(de|en)code\ +([a-z0-9.]+:[a-z]+[0-9]+, )*ffmpeg:cpu0$ ]]
	done
	run -0 "$A" --list -b ffmpeg h264.decode
	[[ "${lines[0]}" =~ ^h264\.decode\ +ffmpeg:cpu0$ ]]
	run -0 "$A" --list -b openssl h264.decode
	[[ "${lines[0]}" =~ ^h264\.decode\ +no\ engine\ of\ --backend\ can\ run\ it$ ]]
	have_model || skip "no ONNX Runtime or models: run make deps and make"
	run -0 "$A" --list onnx.run
	[[ "${lines[0]}" =~ ^onnx\.run\ +(.*, )?onnxruntime\.cpu:cpu0(,.*)?$ ]]
}

@test "--compare: a baseline of the video stages (and onnx.run) runs the same resolutions and batches again" {
	ops=(h264.decode)
	have_model && ops+=(onnx.run)
	run -0 "$A" --json --repeat 1 --warmup 0 --size 64x64,96x64,1,2 -T 1 -b ffmpeg:cpu0,onnxruntime.cpu "${ops[@]}"
	# every case far above any machine: improved, whatever the timings
	python3 -c '
import json, sys
d = json.load(sys.stdin)
for c in d["cases"]:
    c["mbps"] = {"min": 1e-9, "median": 1e-9, "max": 1e-9}
json.dump(d, open(sys.argv[1], "w"))' base.json <<< "$output"
	run -0 --separate-stderr "$A" --compare base.json --json
	python3 -c '
import json, sys
d = json.load(sys.stdin)
got = [(c["operation"], c["size"], c["size_unit"], c["verdict"], c["resolution"]) for c in d["cases"]]
want = [("h264.decode", 4096, "pixels", "improved", "64x64"), ("h264.decode", 6144, "pixels", "improved", "96x64")]
# in the toolkit order: onnx.run first
if len(sys.argv) > 1:
    want = [("onnx.run", 1, "batch", "improved", None), ("onnx.run", 2, "batch", "improved", None)] + want
assert got == want, got' "${ops[@]:1}" <<< "$output"
	# --size chooses by resolution; the table shows it as given
	run -0 "$A" --compare base.json --size 96x64 h264.decode
	[[ "${lines[1]}" =~ ^h264\.decode\ +ffmpeg:cpu0\ +96x64\ .*\ improved$ ]]
	[ "${#lines[@]}" -eq 3 ]
}

@test "--plot: the video stages' tics are their resolutions, onnx.run's its batches" {
	command -v gnuplot > /dev/null || skip "gnuplot is not installed"
	run -0 "$A" -q --repeat 1 --warmup 0 --size 64x64,96x64 -T 1 --plot x.svg h264.encode
	grep -o '>[^<>]*</text>' x.svg | sed 's/^>//; s/<\/text>$//' > texts
	grep -qx 64x64 texts
	grep -qx 96x64 texts
	grep -qx 'frame, W x H (pixels)' texts
	have_model || skip "no ONNX Runtime or models: run make deps and make"
	run -0 "$A" -q -f --repeat 1 --warmup 0 --size 1,2 -T 1 -b onnxruntime.cpu --plot x.svg onnx.run
	grep -o '>[^<>]*</text>' x.svg | sed 's/^>//; s/<\/text>$//' > texts
	grep -qx 'batch, items per run' texts
	grep -qx 1 texts
	grep -qx 2 texts
}
