#!/usr/bin/env bats
# accel-bench --compare: the verdicts on synthetic baselines made from a real
# run's results (figures scaled with python3), missing cases, the JSON diff,
# files that are not results, and examples/ci-bench.sh. Timings are never
# asserted: a comparison of saved files (--against) is exact, and where the
# cases run again the baseline's figures are out of any machine's reach
# (1e12 MB/s: 64 KiB in 65 femtoseconds; 1e-9 MB/s: 64 KiB in two years).

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-bench"
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

HEADER="OPERATION        ENGINE                  SIZE BASELINE MB/S    NOW MB/S   CHANGE    NOISE  VERDICT"

# A real run of sha256 and md5 at 64 KiB into FILE, one run per case (no
# spread) unless more options are given.
results() {
	local out=$1
	shift
	[ $# -gt 0 ] || set -- --repeat 1
	"$A" --json --warmup 0 --size 64K "$@" sha256 md5 > "$out"
}

# scale IN OUT PY: OUT is IN with each case's MB/s {min, median, max} set by
# the python expression PY of m (the case's mbps) and c (the case).
scale() {
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["cases"]:
    m = c["mbps"]
    c["mbps"] = eval(sys.argv[3], {}, {"m": m, "c": c})
json.dump(d, open(sys.argv[2], "w"), indent=1)
EOF
}

@test "a baseline 3x better than a real run: exit 5 and the regressed lines" {
	results now.json
	scale now.json base.json '{k: 3 * v for k, v in m.items()}'
	run -5 --separate-stderr "$A" --compare base.json --against now.json
	[ -z "$stderr" ]
	[ "${lines[0]}" = "$HEADER" ]
	[[ "${lines[1]}" =~ ^sha256\ +openssl:cpu0\ +64K\ +[0-9.]+\ +[0-9.]+\ +-66\.7%\ +0\.0%\ +regressed$ ]]
	[[ "${lines[2]}" =~ ^md5\ +openssl:cpu0\ +64K\ +[0-9.]+\ +[0-9.]+\ +-66\.7%\ +0\.0%\ +regressed$ ]]
	[ "${lines[3]}" = "2 cases: 2 regressed, 0 improved, 0 same, 0 missing (bound 10%)" ]
	[ "${#lines[@]}" -eq 4 ]
	# the bound: a fall of 66.7% is within 70%
	run -0 "$A" --compare base.json --against now.json --max-regression 70%
	[[ "${lines[1]}" =~ -66\.7%\ +0\.0%\ +same$ ]]
	# the other way round it is an improvement
	run -0 "$A" --compare now.json --against base.json --max-regression 2.5
	[[ "${lines[1]}" =~ \+200\.0%\ +0\.0%\ +improved$ ]]
	[ "${lines[3]}" = "2 cases: 0 regressed, 2 improved, 0 same, 0 missing (bound 2.5%)" ]
}

@test "the results against themselves: exit 0, every case the same" {
	results now.json --repeat 3
	run -0 --separate-stderr "$A" --compare now.json --against now.json
	[ -z "$stderr" ]
	[[ "${lines[1]}" =~ ^sha256\ +openssl:cpu0\ +64K\ +[0-9.]+\ +[0-9.]+\ +\+0\.0%\ +[0-9.]+%\ +same$ ]]
	[[ "${lines[2]}" =~ ^md5\ .*\ \+0\.0%\ +[0-9.]+%\ +same$ ]]
	[ "${lines[3]}" = "2 cases: 0 regressed, 0 improved, 2 same, 0 missing (bound 10%)" ]
}

@test "a fall within the noise of the runs is not a regression" {
	results now.json
	# ranges that overlap: the baseline's slowest run below now's
	scale now.json over.json '{"min": 0.5 * m["max"], "median": 3 * m["median"], "max": 4 * m["max"]}'
	run -0 "$A" --compare over.json --against now.json
	[[ "${lines[1]}" =~ ^sha256\ .*\ -66\.7%\ +87\.5%\ +same$ ]]
	# disjoint ranges, but a spread (99%) larger than the fall (33.3%)
	scale now.json wide.json '{"min": 1.1 * m["max"], "median": 1.5 * m["median"], "max": 110 * m["max"]}'
	run -0 "$A" --compare wide.json --against now.json
	[[ "${lines[1]}" =~ ^sha256\ .*\ -33\.3%\ +99\.0%\ +same$ ]]
	# the same fall with a narrow spread is one
	scale now.json narrow.json '{"min": 1.4 * m["max"], "median": 1.5 * m["median"], "max": 1.6 * m["max"]}'
	run -5 "$A" --compare narrow.json --against now.json
	[[ "${lines[1]}" =~ ^sha256\ .*\ -33\.3%\ +12\.5%\ +regressed$ ]]
}

@test "a case on one side only is reported as missing, and exit 0" {
	results now.json
	python3 - now.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
b = dict(d, cases=[d["cases"][0]])
n = dict(d, cases=[d["cases"][1]])
json.dump(b, open("only-sha256.json", "w"))
json.dump(n, open("only-md5.json", "w"))
EOF
	run -0 --separate-stderr "$A" --compare only-sha256.json --against only-md5.json
	[ -z "$stderr" ]
	[[ "${lines[1]}" =~ ^sha256\ +openssl:cpu0\ +64K\ +[0-9.]+\ +-\ +-\ +-\ +missing$ ]]
	[[ "${lines[2]}" =~ ^md5\ +openssl:cpu0\ +64K\ +-\ +[0-9.]+\ +-\ +-\ +missing$ ]]
	[ "${lines[3]}" = "2 cases: 0 regressed, 0 improved, 0 same, 2 missing (bound 10%)" ]
	# run again: an engine this machine lacks is missing now
	scale now.json base.json '{k: 1e-9 for k in m}'
	python3 - base.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["cases"][1]["engine"] = "nosuch:gpu7"
json.dump(d, open(sys.argv[1], "w"))
EOF
	run -0 "$A" --compare base.json
	[[ "${lines[1]}" =~ ^sha256\ +openssl:cpu0\ .*\ improved$ ]]
	[[ "${lines[2]}" =~ ^md5\ +nosuch:gpu7\ +64K\ +0\.0\ +-\ +-\ +-\ +missing$ ]]
	[ "${lines[3]}" = "2 cases: 0 regressed, 1 improved, 0 same, 1 missing (bound 10%)" ]
}

@test "run again: the baseline's cases and settings, exit 5 on a regression" {
	results now.json --repeat 2
	# sha256 out of reach, md5 below any machine
	python3 - now.json base.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["cases"][0]["mbps"] = {"min": 1e12, "median": 1e12, "max": 1e12}
d["cases"][1]["mbps"] = {"min": 1e-9, "median": 1e-9, "max": 1e-9}
json.dump(d, open(sys.argv[2], "w"))
EOF
	run -5 --separate-stderr "$A" --compare base.json --json
	[ -z "$stderr" ]
	echo "$output" > diff.json
	python3 - diff.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
got = [(c["operation"], c["verdict"], c["now"]["repeats"]) for c in d["cases"]]
# the baseline's cases only, with its 2 runs each
assert got == [("sha256", "regressed", 2), ("md5", "improved", 2)], got
assert d["now"]["file"] is None and d["baseline"]["file"] == "base.json"
EOF
	# the command line's settings win; OPERATION chooses among the cases
	run -0 "$A" --compare base.json --json --repeat 3 md5
	python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [(c["operation"], c["now"]["repeats"]) for c in d["cases"]] == [("md5", 3)], d["cases"]' <<< "$output"
	run -5 "$A" --compare base.json -b openssl:cpu0 --size 64K
	[[ "${lines[1]}" =~ ^sha256\ .*\ regressed$ ]]
	[ "${lines[3]}" = "2 cases: 1 regressed, 1 improved, 0 same, 0 missing (bound 10%)" ]
	run -2 --separate-stderr "$A" --compare base.json 'fft.*'
	[ "${stderr_lines[0]}" = "accel-bench: no case of base.json matches 'fft.*'" ]
	run -1 --separate-stderr "$A" --compare base.json --size 1M
	[ "$stderr" = "accel-bench: nothing to compare: no case of base.json is chosen by the operations, -b and --size given" ]
}

@test "--json: the diff's schema, naming the cases" {
	results now.json
	scale now.json base.json '{k: 3 * v for k, v in m.items()}'
	python3 - base.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["cases"][1]["operation"] = "sha1"
json.dump(d, open(sys.argv[1], "w"))
EOF
	run -5 "$A" --compare base.json --against now.json --json --max-regression 20%
	echo "$output" > diff.json
	python3 - diff.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"schema_version", "accel_version", "baseline", "now", "same_machine",
                  "max_regression_percent", "cases", "summary"}, d.keys()
assert d["schema_version"] == 1 and d["accel_version"]
assert d["baseline"]["file"] == "base.json" and d["now"]["file"] == "now.json"
assert set(d["baseline"]) == {"file", "accel_version", "machine"}
assert d["same_machine"] is True and d["max_regression_percent"] == 20
keys = {"operation", "engine", "size", "size_unit", "resolution", "verdict", "missing_in", "baseline", "now",
        "change_percent", "noise_percent"}
for c in d["cases"]:
    assert set(c) == keys, set(c) ^ keys
got = [(c["operation"], c["engine"], c["size"], c["verdict"], c["missing_in"]) for c in d["cases"]]
assert got == [("sha256", "openssl:cpu0", 65536, "regressed", None),
               ("sha1", "openssl:cpu0", 65536, "missing", "now"),
               ("md5", "openssl:cpu0", 65536, "missing", "baseline")], got
s = d["cases"][0]
assert abs(s["change_percent"] + 200 / 3) < 1e-6 and s["noise_percent"] == 0, s
# cJSON writes 15 significant digits where they read back within an
# epsilon, so the figures are equal to that precision, not to the bit.
assert abs(s["baseline"]["median"] - 3 * s["now"]["median"]) <= 1e-9 * s["baseline"]["median"], s
assert s["now"]["repeats"] == 1
assert d["cases"][1]["now"] is None and d["cases"][1]["change_percent"] is None
assert d["summary"] == {"cases": 3, "same": 0, "regressed": 1, "improved": 0, "missing": 2}, d["summary"]
EOF
}

@test "a baseline from another machine is compared, with one line saying so" {
	results now.json
	python3 - now.json other.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
cpu = next(x for x in d["machine"]["devices"] if x["class"] == "cpu")
cpu["model"] = "Other CPU 9000"
json.dump(d, open(sys.argv[2], "w"))
EOF
	run -0 --separate-stderr "$A" --compare other.json --against now.json
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "accel-bench: warning: other.json was measured on another machine (cpu Other CPU 9000, "*"; now.json: cpu "*"): a change may be the machine's" ]]
	[[ "${lines[1]}" =~ \ same$ ]]
	run -0 --separate-stderr "$A" --compare other.json --against now.json --json
	[ "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["same_machine"])' <<< "$output")" = False ]
}

@test "a file that is not accel-bench's results: one line, exit 1; usage errors exit 2" {
	results now.json
	echo 'not json {' > text.json
	echo '{"schema_version": 1, "devices": []}' > detect.json
	python3 -c '
import json
d = json.load(open("now.json"))
json.dump(dict(d, schema_version=9), open("future.json", "w"))
del d["cases"][1]["mbps"]
json.dump(d, open("nombps.json", "w"))'
	run -1 --separate-stderr "$A" --compare text.json --against now.json
	[ "$stderr" = "accel-bench: text.json: not an accel-bench JSON document (not JSON: line 1)" ]
	[ -z "$output" ]
	run -1 --separate-stderr "$A" --compare now.json --against detect.json
	[ "$stderr" = "accel-bench: detect.json: not an accel-bench JSON document (no cases)" ]
	run -1 --separate-stderr "$A" --compare future.json
	[ "$stderr" = "accel-bench: future.json: schema_version 9 is not known here (this accel-bench reads 1 to 2)" ]
	run -1 --separate-stderr "$A" --compare nombps.json --against now.json
	[ "$stderr" = "accel-bench: nombps.json: not an accel-bench JSON document (case 2: no mbps min <= median <= max)" ]
	run -1 --separate-stderr "$A" --compare nosuch.json
	[ "$stderr" = "accel-bench: cannot read nosuch.json: No such file or directory" ]
	run -2 --separate-stderr "$A" --against now.json
	[ "${stderr_lines[0]}" = "accel-bench: --against is an option of --compare" ]
	run -2 --separate-stderr "$A" --compare now.json --max-regression 100%
	[ "${stderr_lines[0]}" = "accel-bench: --max-regression: '100%' is not a percentage under 100 (10%, 2.5)" ]
	run -2 --separate-stderr "$A" --compare now.json --csv
	[ "${stderr_lines[0]}" = "accel-bench: --compare prints a table or --json: not --csv" ]
	run -0 "$A" --help
	[[ "$output" == *"Exit status: 0 success, 1 failure, 2 usage error, 5 regression found."* ]]
}

@test "examples/ci-bench.sh: the first run makes the baseline, later ones fail on a regression" {
	S="$ROOT/examples/ci-bench.sh"
	export ACCEL_BUILD="$ROOT/build"
	run -0 --separate-stderr "$S" baseline/bench.json bench.json --repeat 2 --warmup 0 --size 64K sha256 md5
	[ "$output" = "ci-bench: no baseline yet: baseline/bench.json is this run's results" ]
	cmp baseline/bench.json bench.json
	python3 -c 'import json; assert len(json.load(open("bench.json"))["cases"]) == 2'
	# a baseline below any machine: the step passes
	scale bench.json baseline/bench.json '{k: 1e-9 for k in m}'
	run -0 --separate-stderr "$S" baseline/bench.json bench.json --repeat 2 --warmup 0 --size 64K sha256 md5
	[ -z "$stderr" ]
	[ "${lines[0]}" = "$HEADER" ]
	[ "${lines[3]}" = "2 cases: 0 regressed, 2 improved, 0 same, 0 missing (bound 10%)" ]
	# out of reach: the step fails with accel-bench's 5
	scale bench.json baseline/bench.json '{k: 1e12 for k in m}'
	MAX_REGRESSION=20% run -5 --separate-stderr "$S" baseline/bench.json bench.json --repeat 2 --warmup 0 --size 64K sha256 md5
	[ "${lines[3]}" = "2 cases: 2 regressed, 0 improved, 0 same, 0 missing (bound 20%)" ]
	[ "$stderr" = "ci-bench: a case regressed against baseline/bench.json: see the table" ]
	# a measurement that fails fails the step, and leaves no results
	rm bench.json
	run -1 --separate-stderr "$S" baseline/bench.json bench.json --size 12Q sha256
	[ "${stderr_lines[-1]}" = "ci-bench: the measurement failed" ]
	[ ! -e bench.json ] && [ ! -e bench.json.tmp ]
}
