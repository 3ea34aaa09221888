#!/usr/bin/env bats
# accel-compress's gzip levels: 1-3 through ISA-L, 4-12 through libdeflate
# (backends/cpu/gzip.c). Every level round trips and gzip -d and pigz -d read
# it; at -6 the size is within 2% of gzip -6 and pigz -6 on real files; our
# decoder still cuts libdeflate's members into parallel units. Sizes are
# compared, never times.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

# binaries FILE [BYTES]: the machine's shared libraries (4 MiB unless told).
binaries() {
	find /usr/lib/x86_64-linux-gnu -maxdepth 1 -name '*.so*' -type f -size +100k | sort | head -n 60 |
		xargs cat | head -c "${2:-4194304}" > "$1"
	[ "$(stat -c %s "$1")" -gt 1000000 ]
}

# text FILE [BYTES]: the C headers of /usr/include (8 MiB unless told).
text() {
	find /usr/include -name '*.h' -type f | sort | xargs cat | head -c "${2:-8388608}" > "$1"
	[ "$(stat -c %s "$1")" -gt 1000000 ]
}

# within PERCENT OURS THEIRS: OURS is at most PERCENT% larger than THEIRS.
within() {
	python3 -c 'import sys; p, a, b = map(float, sys.argv[1:]); sys.exit(0 if a <= b * (1 + p / 100) else 1)' "$@" ||
		{ echo "$2 bytes is more than $1% over $3"; return 1; }
}

@test "every gzip level 1-12 round trips; gzip -d and pigz -d read it identically" {
	binaries b 1500000; text t 2500000
	cat b t > c
	for l in 1 2 3 4 5 6 7 8 9 10 11 12; do
		"$A" -F gzip -"$l" -T2 -B 1M -c c > "c$l.gz" || { echo "-$l failed"; return 1; }
		"$A" -d -c -T2 "c$l.gz" | cmp c - || { echo "-$l: our round trip differs"; return 1; }
		gzip -d -c "c$l.gz" | cmp c - || { echo "-$l: gzip -d differs"; return 1; }
		pigz -d -c "c$l.gz" | cmp c - || { echo "-$l: pigz -d differs"; return 1; }
		gzip -t "c$l.gz"
	done
	# the levels order the sizes: ISA-L's best above libdeflate's 4, 9 above 12
	[ "$(stat -c %s c3.gz)" -gt "$(stat -c %s c4.gz)" ]
	[ "$(stat -c %s c9.gz)" -gt "$(stat -c %s c12.gz)" ]
	# empty input and one byte, at both libraries' levels
	for l in 1 6 12; do
		: > e; "$A" -F gzip -"$l" -c e | gzip -d -c | cmp e -
		printf x > x; "$A" -F gzip -"$l" -c x | pigz -d -c | cmp x -
	done
}

@test "-6 is within 2% of gzip -6 and pigz -6 on binaries and text, at the default chunk size" {
	binaries b; text t
	for f in b t; do
		ours=$("$A" -F gzip -6 -T2 -c "$f" | wc -c)
		within 2 "$ours" "$(gzip -6 -c "$f" | wc -c)"
		within 2 "$ours" "$(pigz -6 -p 2 -c "$f" | wc -c)"
	done
}

@test "gzip levels outside 1-12: usage error (exit 2), nothing written" {
	printf 'abc' > a
	run --separate-stderr "$A" -F gzip -13 a -o a.gz
	[ "$status" -eq 2 ]
	[ "$stderr" = "accel-compress: level -13 is out of range for gzip (1-12)
Try 'accel-compress --help' for more information." ]
	[ ! -e a.gz ]
	run --separate-stderr "$A" -F gzip --ultra -20 a
	[ "$status" -eq 2 ] && [ -z "$output" ]
	# zstd keeps 1-19
	"$A" -F zstd -13 -c a | zstd -d -c | cmp a -
}

@test "libdeflate members carry the AC field: decoded in parallel units, one per member" {
	text t
	"$A" -F gzip -6 -B 1M -c t > t.gz
	run -0 "$A" -l t.gz
	read -r frames _ <<< "${lines[1]}"
	[ "$frames" = 8 ]
	run -0 --separate-stderr "$A" -d -v -T2 t.gz -o t.out
	cmp t t.out
	grep -q "t.gz: 8 units," <<< "$stderr"
	! grep -q "processed sequentially" <<< "$stderr"
}

@test "the route names the library of the level; --version lists libdeflate" {
	run -0 "$A" -F gzip -2 -v -o /dev/null < /dev/null
	grep -q "^  1\. cpu .*(ISA-L igzip on" <<< "$output"
	run -0 "$A" -F gzip -v -o /dev/null < /dev/null
	grep -q "^  1\. cpu .*(libdeflate on" <<< "$output"
	"$A" --version | grep -qx "libdeflate $(pkg-config --modversion libdeflate) (build)"
}
