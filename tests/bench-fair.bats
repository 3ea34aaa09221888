#!/usr/bin/env bats
# accel-bench's fairness: with --vs our program runs as the peer runs and
# the ratio is program over peer; latency percentiles; the memcpy ceiling;
# --level's cases. Timings are never asserted; every run is tiny.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-bench"
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

@test "--vs --json: our program beside the peer, the ratio is program MB/s over peer MB/s" {
	command -v sha256sum > /dev/null && command -v zstd > /dev/null || skip "sha256sum or zstd is not installed"
	run -0 "$A" --vs --json --repeat 2 --warmup 0 --size 64K sha256 sha3-256 zstd.compress
	echo "$output" > out.json
	python3 - out.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 2
cs = {c["operation"]: c for c in d["cases"] if c["engine"] in ("openssl:cpu0", "cpu")}
want = {"sha256": ("accel-crypt hash -b openssl:cpu0 --fallback none -T 0 -a sha256", "sha256sum"),
        "zstd.compress": ("accel-compress -b cpu --fallback none -T 0 -q -3 -F zstd -c", "zstd -q -3 -T")}
for op, (prog, peer) in want.items():
    c = cs[op]
    p, q = c["program"], c["peer"]
    assert p["command"] == prog and q["command"].startswith(peer), (p["command"], q["command"])
    for x in (p, q):
        assert set(x) >= {"command", "startup_seconds", "seconds", "mbps", "cpu_seconds_per_byte"}, x
        assert x["startup_seconds"] > 0 and len(x["seconds"]) == 2 and x["cpu_seconds_per_byte"] >= 0
        assert 0 < x["mbps"]["min"] <= x["mbps"]["median"] <= x["mbps"]["max"]
        # whole runs: the MB/s of the median run, start-up not taken off
        med = sum(sorted(x["seconds"])) / 2
        assert abs(x["mbps"]["median"] - c["bytes"] / 1e6 / med) <= 1e-9 * x["mbps"]["median"], x
    assert "ratio" not in p
    r = p["mbps"]["median"] / q["mbps"]["median"]
    assert abs(q["ratio"] - r) <= 1e-9 * r, (q["ratio"], r)
# no peer for sha3-256: our program still runs, no ratio
c = cs["sha3-256"]
assert c["peer"] is None and c["program"]["command"].endswith("-a sha3-256"), c
EOF
}

@test "--vs --csv: the program's columns, and the ratio from them" {
	command -v sha256sum > /dev/null || skip "sha256sum is not installed"
	run -0 "$A" --vs --csv --repeat 1 --warmup 0 --size 64K -b openssl sha256
	[ "$(awk -F, '{ print NF }' <<< "${lines[0]}")" -eq 33 ]
	[[ "${lines[0]}" == *,peer,peer_startup_seconds,peer_mbps_median,peer_cpu_seconds_per_byte,ratio,level,latency_p50_seconds,latency_p90_seconds,latency_p99_seconds,program,program_startup_seconds,program_mbps_median,program_cpu_seconds_per_byte,reference,reference_mbps,inferences_per_second_median,frames_per_second_median,resolution ]]
	IFS=, read -r -a f <<< "${lines[1]}"
	[ "${f[15]}" = sha256sum ]
	[ "${f[20]}" = "" ]
	[ "${f[24]}" = "accel-crypt hash -b openssl --fallback none -T 0 -a sha256" ]
	# printed with 6 significant digits each
	python3 -c 'import sys; r, g, p = map(float, sys.argv[1:]); assert abs(r - g / p) <= 2e-5 * r, (r, g / p)' \
		"${f[19]}" "${f[26]}" "${f[17]}"
}

@test "without our programs beside accel-bench: the peer runs, no program, no ratio" {
	command -v zstd > /dev/null || skip "zstd is not installed"
	mkdir bin
	cp "$A" bin/
	ln -s "$ROOT/build/lib" bin/lib
	run -0 --separate-stderr bin/accel-bench --vs --json --repeat 1 --warmup 0 --size 64K zstd.compress
	[ -z "$stderr" ]
	python3 -c '
import json, sys
c = json.load(sys.stdin)["cases"][0]
assert c["program"] is None and c["peer"]["command"].startswith("zstd -q -3") and c["peer"]["ratio"] is None, c' <<< "$output"
	run -0 bin/accel-bench --vs --repeat 1 --warmup 0 --size 64K zstd.compress
	[[ "${lines[1]}" =~ \ -\ +-/[0-9.]+\ +zstd\ -q\ -3\ -T[0-9]+\ -c\ +[0-9.]+\ +-$ ]]
}

@test "latency percentiles: p50 <= p90 <= p99 by nearest rank, in JSON, CSV, and the table for small sizes" {
	run -0 "$A" --json --repeat 7 --warmup 0 --size 64K md5
	python3 -c '
import json, math, sys
c = json.load(sys.stdin)["cases"][0]
l, t = c["latency_seconds"], sorted(c["seconds"])
assert set(l) == {"p50", "p90", "p99"} and 0 < l["p50"] <= l["p90"] <= l["p99"], l
# nearest rank of 7 runs: the 4th, 7th and 7th
assert (l["p50"], l["p90"], l["p99"]) == (t[3], t[6], t[6]), (l, t)' <<< "$output"
	run -0 "$A" --csv --repeat 3 --warmup 0 --size 64K md5
	IFS=, read -r -a f <<< "${lines[1]}"
	python3 -c 'import sys; a, b, c = map(float, sys.argv[1:]); assert 0 < a <= b <= c' "${f[21]}" "${f[22]}" "${f[23]}"
	run -0 "$A" --repeat 1 --warmup 0 --size 64K md5
	[[ "${lines[0]}" == *" MIN-MAX "*" P99 MS "* ]]
	run -0 "$A" --repeat 1 --warmup 0 --size 1M md5
	[[ "${lines[0]}" != *"P99"* ]]
}

@test "the machine's ceiling: memcpy on one thread and on every core, in JSON and under the table" {
	run -0 "$A" --json --repeat 1 --warmup 0 --size 64K md5
	python3 -c '
import json, sys
c = json.load(sys.stdin)["machine"]["ceiling"]
assert set(c) == {"memcpy_mbps_1t", "memcpy_mbps_all", "cores"}, c
assert c["memcpy_mbps_1t"] > 0 and c["memcpy_mbps_all"] > 0 and c["cores"] == int(sys.argv[1]), c' "$(nproc)" <<< "$output"
	run -0 "$A" --repeat 1 --warmup 0 --size 64K md5
	[[ "${lines[-1]}" =~ ^ceiling:\ memcpy\ [0-9]+\ MB/s\ on\ 1\ thread,\ [0-9]+\ MB/s\ on\ $(nproc)\;\ $(nproc)\ cores$ ]]
	# CSV has rows of cases only
	run -0 "$A" --csv --repeat 1 --warmup 0 --size 64K md5
	[ "${#lines[@]}" -eq 2 ]
}

@test "--level 1,3: a case per level, the peer and our program at that level" {
	command -v zstd > /dev/null || skip "zstd is not installed"
	run -0 "$A" --vs --json --repeat 1 --warmup 0 --size 64K --level 1,3 -b cpu zstd.compress sha256
	python3 -c '
import json, sys
cs = json.load(sys.stdin)["cases"]
# sha256 is no codec: one case, no level
assert [(c["operation"], c["level"]) for c in cs] == [("zstd.compress", 1), ("zstd.compress", 3), ("sha256", None)], cs
for c in cs[:2]:
    L = c["level"]
    assert c["peer"]["command"].startswith("zstd -q -%d -T" % L), c["peer"]["command"]
    assert " -q -%d -F zstd -c" % L in c["program"]["command"], c["program"]["command"]' <<< "$output"
}

@test "--level: the decoder reads data compressed at its case's level" {
	run -0 "$A" --json --repeat 1 --warmup 0 --size 256K --level 1,19 -b cpu 'zstd.*'
	python3 -c '
import json, sys
cs = {(c["operation"], c["level"]): c for c in json.load(sys.stdin)["cases"]}
assert sorted(cs) == [("zstd.compress", 1), ("zstd.compress", 19), ("zstd.decompress", 1), ("zstd.decompress", 19)]
for L in (1, 19):
    assert cs["zstd.decompress", L]["input_bytes"] == cs["zstd.compress", L]["output_bytes"], L
assert cs["zstd.decompress", 1]["input_bytes"] != cs["zstd.decompress", 19]["input_bytes"]
' <<< "$output"
	run -0 "$A" --json --repeat 1 --warmup 0 --size 64K --level 1 md5
	[ "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["cases"][0]["level"])' <<< "$output")" = None ]
	run -0 "$A" --csv --repeat 1 --warmup 0 --size 64K -b cpu lz4.compress
	[ "$(cut -d, -f21 <<< "${lines[1]}")" = 1 ]
}

@test "--level out of range: exit 2 with one line" {
	run -2 --separate-stderr "$A" --level 0 zstd.compress
	[ "${stderr_lines[0]}" = "accel-bench: --level: '0' is not a level (1-19)" ]
	run -2 --separate-stderr "$A" --level 1,12 'gzip.*'
	[ "${stderr_lines[0]}" = "accel-bench: --level: 12 is not a gzip level (1-9)" ]
	run -2 --separate-stderr "$A" --level 13 lz4.compress
	[ "${stderr_lines[0]}" = "accel-bench: --level: 13 is not a lz4 level (1-12)" ]
	run -0 "$A" --list --level 12 'lz4.*'
}
