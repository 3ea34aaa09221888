#!/usr/bin/env bats
# accel-bench: the operations a pattern chooses, the cases per engine and
# size, --repeat's samples, the CSV and JSON of accel-bench(1) and --vs's
# ratios against the peers installed here. Timings are never asserted;
# every run is small (--size 64K, --repeat 2).

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-bench"
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

CSV_HEADER="operation,engine,size,size_unit,input_bytes,bytes,setup_seconds,repeats,mbps_min,mbps_median,mbps_max,gflops_median,msamples_per_second_median,cpu_seconds_per_byte,peak_rss_bytes,peer,peer_startup_seconds,peer_mbps_median,peer_cpu_seconds_per_byte,ratio,level,latency_p50_seconds,latency_p90_seconds,latency_p99_seconds,program,program_startup_seconds,program_mbps_median,program_cpu_seconds_per_byte,reference,reference_mbps,inferences_per_second_median,frames_per_second_median,resolution"

@test "--json: the schema's keys, one case per operation, engine and size, each run a sample" {
	run -0 "$A" --json --repeat 2 --size 64K,128K sha256 lz4.decompress
	echo "$output" > out.json
	python3 - out.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 2, d["schema_version"]
assert isinstance(d["accel_version"], str) and d["accel_version"]
assert {"host", "devices", "ceiling"} <= set(d["machine"]), d["machine"].keys()
assert any(dev["class"] == "cpu" for dev in d["machine"]["devices"])
assert set(d["settings"]) == {"time_seconds", "repeat", "warmup", "threads", "vs"}, d["settings"]
assert d["settings"]["repeat"] == 2 and d["not_measured"] == []
keys = {"operation", "engine", "engines_ran", "size", "size_unit", "level", "input_bytes", "bytes", "output_bytes",
        "setup_seconds", "repeats", "seconds", "mbps", "latency_seconds", "transforms", "gflops", "msamples_per_second",
        "cpu_seconds_per_byte", "peak_rss_bytes", "program", "peer", "reference", "resolution",
        "inferences_per_second", "frames_per_second"}
got = [(c["operation"], c["size"]) for c in d["cases"]]
assert got == [("lz4.decompress", 65536), ("lz4.decompress", 131072), ("sha256", 65536), ("sha256", 131072)], got
for c in d["cases"]:
    assert set(c) == keys, set(c) ^ keys
    assert c["size_unit"] == "bytes" and c["bytes"] == c["size"]
    assert c["repeats"] == 2 and len(c["seconds"]) == 2
    m = c["mbps"]
    assert 0 < m["min"] <= m["median"] <= m["max"], m
    assert c["setup_seconds"] > 0 and c["peak_rss_bytes"] > 0 and c["cpu_seconds_per_byte"] >= 0
    assert c["gflops"] is None and c["transforms"] is None and c["peer"] is None and c["reference"] is None
    assert c["resolution"] is None and c["inferences_per_second"] is None and c["frames_per_second"] is None
    assert c["engines_ran"], c
# the decoder reads our compressed corpus: fewer bytes than it gives
lz = [c for c in d["cases"] if c["operation"] == "lz4.decompress"]
assert all(c["input_bytes"] < c["bytes"] for c in lz), lz
EOF
}

@test "--json for FFTs: N as the size, transforms, GFLOPS and Msamples/s" {
	"$A" --list fft.c2c | grep -q fftw || skip "no fftw engine here"
	run -0 "$A" --json --repeat 2 --size 256 -b fftw fft.c2c fft.r2c
	echo "$output" > out.json
	python3 - out.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert [c["operation"] for c in d["cases"]] == ["fft.c2c", "fft.r2c"]
for c in d["cases"]:
    assert c["size"] == 256 and c["size_unit"] == "samples"
    # 16 MiB of cf32 (8 bytes a sample) or f32 (4) in frames of 256
    per = 8 if c["operation"] == "fft.c2c" else 4
    assert c["transforms"] == (16 << 20) // (256 * per) and c["input_bytes"] == 16 << 20, c
    assert 0 < c["gflops"]["min"] <= c["gflops"]["median"] <= c["gflops"]["max"]
    assert c["msamples_per_second"]["median"] > 0
EOF
}

@test "--csv: the header, then one row per case with every field" {
	run -0 "$A" --csv --repeat 2 --size 64K,96K md5 sha1
	[ "${lines[0]}" = "$CSV_HEADER" ]
	[ "${#lines[@]}" -eq 5 ]
	for i in 1 2 3 4; do
		[ "$(awk -F, '{ print NF }' <<< "${lines[$i]}")" -eq 33 ]
		[[ "${lines[$i]}" == @(md5|sha1),openssl:cpu0,@(65536|98304),bytes,* ]]
		# repeats
		[ "$(cut -d, -f8 <<< "${lines[$i]}")" = 2 ]
	done
}

@test "a pattern chooses the operations it matches, in the toolkit's order" {
	run -0 "$A" --csv --repeat 1 --size 64K '*.decompress'
	[ "$(tail -n +2 <<< "$output" | cut -d, -f1)" = "$(printf 'zstd.decompress\ngzip.decompress\nlz4.decompress')" ]
	run -0 "$A" --list 'sha*' md5
	[ "$(cut -d' ' -f1 <<< "$output")" = "$(printf 'sha256\nsha512\nsha3-256\nsha1\nmd5')" ]
}

@test "an operation that matches nothing: exit 2, one line naming the operations" {
	run -2 --separate-stderr "$A" --repeat 1 'zstd.*' nosuch.op
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "accel-bench: no operation matches 'nosuch.op' (operations: zstd.compress, zstd.decompress, gzip.compress, "*", fft.c2c, fft.r2c, fft.c2r"* ]]
}

@test "--repeat N gives N samples" {
	run -0 "$A" --json --repeat 5 --warmup 0 --size 64K sha256
	[ "$(python3 -c 'import json, sys; c = json.load(sys.stdin)["cases"][0]; print(c["repeats"], len(c["seconds"]))' <<< "$output")" = "5 5" ]
}

@test "--list: the operations, their engines, and what is not measured yet" {
	run -0 "$A" --list
	[[ "${lines[0]}" =~ ^zstd\.compress\ +cpu$ ]]
	grep -Eq '^age\.encrypt +openssl:cpu0' <<< "$output"
	# every operation accel-detect routes is listed, the video stages
	# (accel-transcode's), onnx.stream (onnx.run on a stream, where
	# onnx.run is), and no other
	[ "$(cut -d' ' -f1 <<< "$output" | sort)" = "$({ "$ROOT/build/accel-detect" --routes | sed -n 's/^route for \([^ ]*\) .*/\1/p'
		printf '%s\n' h264.decode hevc.decode h264.encode hevc.encode av1.encode vp9.encode
		! grep -q '^onnx\.run ' <<< "$output" || echo onnx.stream; } | sort)" ]
	if grep -q '^onnx.info ' <<< "$output"; then
		grep -Eq '^onnx\.info +not measured yet$' <<< "$output"
	fi
	run -0 "$A" --list -b openssl,cpu 'fft.*' sha256
	[[ "${lines[0]}" =~ ^sha256\ +openssl,\ cpu$ ]]
	run -0 "$A" --list -b openssl 'fft.*' sha256
	[[ "${lines[1]}" =~ ^fft\.c2c\ +no\ engine\ of\ --backend\ can\ run\ it$ ]]
}

@test "nothing to measure: exit 1 with one line; usage errors exit 2" {
	run -1 --separate-stderr "$A" -b openssl 'fft.*'
	[ "$stderr" = "accel-bench: nothing to measure: no engine of --backend can run the operations" ]
	run -2 "$A" --size 12Q sha256
	[[ "${lines[0]}" == "accel-bench: --size: '12Q' is not a size"* ]]
	run -2 "$A" --list --json
	run -2 "$A" --size 1 fft.c2c
	if "$A" --list onnx.info | grep -q 'not measured yet'; then
		run -1 --separate-stderr "$A" onnx.info
		[ "$stderr" = "accel-bench: nothing to measure: the operations are not measured yet" ]
	fi
}

@test "--vs: the peer's ratio where it is installed" {
	command -v sha256sum > /dev/null || skip "sha256sum is not installed"
	run -0 "$A" --vs --repeat 2 --size 256K sha256 sha3-256
	[[ "${lines[1]}" =~ ^sha256\ .*\ sha256sum\ +[0-9.]+\ +[0-9.]+x$ ]]
	# no peer for sha3-256
	[[ "${lines[2]}" =~ ^sha3-256\ .*\ -\ +-\ +-$ ]]
	command -v zstd > /dev/null || skip "zstd is not installed"
	run -0 "$A" --vs --csv -T 2 --repeat 2 --size 256K zstd.compress
	IFS=, read -r -a f <<< "${lines[1]}"
	[ "${f[15]}" = "zstd -q -3 -T2 -c" ]
	python3 -c 'import sys; assert float(sys.argv[1]) > 0 and float(sys.argv[2]) > 0' "${f[17]}" "${f[19]}"
}

@test "--vs age: age encrypts and decrypts beside ours" {
	command -v age > /dev/null && command -v age-keygen > /dev/null || skip "age is not installed"
	run -0 "$A" --vs --json --repeat 2 --size 128K 'age.*'
	python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [c["peer"]["command"] for c in d["cases"]] == ["age -r", "age -d -i"], d["cases"]
assert all(c["peer"]["ratio"] > 0 and len(c["peer"]["seconds"]) == 2 for c in d["cases"])' <<< "$output"
}

@test "the inputs are made in TMPDIR and removed at the end" {
	run -0 "$A" --repeat 1 --size 64K 'zstd.*' sha256
	[ -z "$(ls -A "$TMPDIR")" ]
}

@test "a signal that ends the run removes the inputs" {
	"$A" --time 60 --size 64K sha256 > /dev/null 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		[ -n "$(find "$TMPDIR" -type f)" ] && break
		sleep 0.1
	done
	[ -n "$(find "$TMPDIR" -type f)" ]
	kill -TERM "$pid"
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 143 ]
	[ -z "$(ls -A "$TMPDIR")" ]
}

@test "the completions offer the operations accel-bench measures, as --list names them" {
	run -0 "$A" --list
	measured=$(grep -v 'not measured yet$' <<< "$output" | awk '{ print $1 }' | sort)
	[ "$(wc -l <<< "$measured")" -ge 20 ]
	words=$(sed -n "s/^\tCOMPREPLY=(\$(compgen -W '\([^']*\)' -- \"\$cur\"))\$/\1/p" "$ROOT/completions/bash/accel-bench" |
		tr ' ' '\n' | sort)
	[ "$words" = "$measured" ] || { diff <(echo "$words") <(echo "$measured"); false; }
	grep -q "^complete -c accel-bench -f -a 'zstd.compress " "$ROOT/completions/fish/accel-bench.fish"
	grep -q "^  '\*:operand:(zstd.compress " "$ROOT/completions/zsh/_accel-bench"
}
