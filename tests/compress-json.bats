#!/usr/bin/env bats
# accel-compress --json outside --list: the -v report (route, devices,
# per-input statistics, probes) as one JSON document, the last thing on
# stderr, through libcore's report interface (accel_report_run).

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	PLUGINS="$ROOT/build/tests/plugins"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	{ seq 1 40000; head -c 100000 /dev/urandom | base64; } > a
}

@test "--json: compression's route, device, statistics and probes; stdout holds only the compressed bytes" {
	run --separate-stderr "$A" -c --json -T2 -B 64K a
	[ "$status" -eq 0 ]
	"$A" -c -T2 -B 64K a > ref.zst
	"$A" -c --json -T2 -B 64K a 2> report.json > got.zst
	cmp ref.zst got.zst
	jq -e '.schema_version == 1' report.json
	jq -e '.routes | length == 1 and .[0].operation == "zstd.compress" and .[0].engines[0].name == "cpu"' report.json
	jq -e '[.devices[].id] == ["cpu0"]' report.json
	size=$(stat -c %s a)
	out=$(stat -c %s got.zst)
	jq -e --argjson s "$size" --argjson o "$out" \
		'.runs | length == 1 and .[0].input == "a" and .[0].bytes_in == $s and .[0].bytes_out == $o' report.json
	units=$(( (size + 65535) / 65536 ))
	jq -e --argjson u "$units" '.runs[0].units == $u and .runs[0].engines[0].units == $u and .runs[0].engines[0].name == "cpu"' report.json
	jq -e '[.probes[] | select(.name == "cpu")][0].ok == true' report.json
	jq -e '.seconds >= 0' report.json
}

@test "--json: one run per input, decompression's route named by the format found" {
	"$A" -o a.zst a
	cp a b
	"$A" -c --json a b 2> two.json > ab.zst
	jq -e '[.runs[].input] == ["a", "b"]' two.json
	"$A" -d --json -o back a.zst 2> d.json
	cmp a back
	jq -e '.routes[0].operation == "zstd.decompress" and .runs[0].input == "a.zst"' d.json
	"$A" -F gzip -o a.gz a
	"$A" -d --json -t a.gz 2> g.json
	jq -e '.routes[0].operation == "gzip.decompress"' g.json
}

@test "--json: a failed run prints its error line, then the report; the exit status is the run's" {
	"$A" -o a.zst a
	head -c 3000 a.zst > cut.zst
	run --separate-stderr "$A" -c -d --json cut.zst
	[ "$status" -eq 3 ]
	first=$(head -n 1 <<< "$stderr")
	[[ "$first" == "accel-compress: cut.zst: "* ]]
	tail -n +2 <<< "$stderr" | jq -e '.routes[0].operation == "zstd.decompress" and (.runs | length == 1)'
}

@test "--json: a test engine's failures and the retries are counted per engine" {
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT='test:*' \
		"$A" --json -T2 -B 64K -b test:other0 --fallback cpu a -o t.zst
	[ "$status" -eq 0 ]
	"$A" -c -d t.zst | cmp - a
	json=$(sed -n '/^{/,$p' <<< "$stderr")
	jq -e '.runs[0].retried == 3' <<< "$json"
	jq -e '[.runs[0].engines[] | select(.name == "test:other0")][0] | .failures == 3 and .dropped == true' <<< "$json"
	jq -e '[.devices[].id] | index("other0") != null' <<< "$json"
}
