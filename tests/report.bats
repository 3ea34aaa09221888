#!/usr/bin/env bats
# Reports (libcore/report.c, libcore/require.c) through accel-detect: on the
# recorded sysroots, the table, -v, --json, -F gres, -F nfd, --routes and
# --require print byte for byte what tests/fixtures/report/expected holds
# (recorded from accel-detect before the reports moved into libcore), and
# the JSON parses with its documented keys.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	REP="$ROOT/tests/fixtures/report"
	cd "$BATS_TEST_TMPDIR"
	# Only the backends that read the sysroots, so no library of this
	# machine shows in the reports.
	sh "$REP/isolate.sh" "$ROOT/build" bin 2>err || skip "$(cat err)"
}

@test "reports: every case of tests/fixtures/report/cases prints the recorded bytes, status and stderr" {
	"$REP/record.sh" bin/accel-detect got
	[ "$(ls got | wc -l)" -eq "$(ls "$REP/expected" | wc -l)" ]
	diff -r "$REP/expected" got
}

@test "reports: the recording fails when the report changes (a changed case is found)" {
	"$REP/record.sh" bin/accel-detect got
	cp -r "$REP/expected" want
	chmod -R u+w want
	sed -i 's/^Name=gpu Type=h100 File=\/dev\/nvidia1$/Name=gpu Type=h100 File=\/dev\/nvidia9/' want/005
	run diff -r want got
	[ "$status" -eq 1 ]
	[[ "$output" == *"File=/dev/nvidia9"* ]]
}

@test "reports: the JSON document has the keys accel.h documents, in their order" {
	run --separate-stderr env ACCEL_SYSROOT="$ROOT/tests/fixtures/sysroot-gpu" bin/accel-detect --json --routes zstd.compress
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -c 'keys_unsorted')" = '["schema_version","host","devices","routes","probes","seconds"]' ]
	[ "$(echo "$output" | jq -c '.host | keys_unsorted')" = '["hostname","kernel","sysroot","accel_version"]' ]
	[ "$(echo "$output" | jq -c '.devices[1] | keys_unsorted')" = \
	  '["id","class","vendor","model","driver","software","pci_address","numa_node","memory_bytes","apis","properties"]' ]
	[ "$(echo "$output" | jq -c '.routes[0].engines[0] | keys_unsorted')" = '["rank","name","usable","expected_mbps","reason"]' ]
	[ "$(echo "$output" | jq -c '.probes[0] | keys_unsorted')" = '["name","origin","probed","ok","reason","seconds","notes"]' ]
	[ "$(echo "$output" | jq '.schema_version')" = 1 ]
}
