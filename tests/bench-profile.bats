#!/usr/bin/env bats
# accel-bench --save feeds the router: the profile it writes is read by
# every program, whose -v says a measured figure decided the route; a
# profile edited to rank one engine above another (or two within a factor
# of four) changes what auto picks (or shares); removed, the priors decide;
# from another machine, it is ignored, then replaced. Timings are never
# asserted: the figures that decide are written into the profile by jq.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-bench"
	C="$ROOT/build/accel-compress"
	K="$ROOT/build/accel-crypt"
	F="$ROOT/build/accel-fft"
	D="$ROOT/build/accel-detect"
	export TMPDIR="$BATS_TEST_TMPDIR/tmp" XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
	P="$XDG_CACHE_HOME/accel/profile.json"
	mkdir -p "$TMPDIR"
	cd "$BATS_TEST_TMPDIR"
	seq 1 10000 > in
	RUN=(--repeat 1 --warmup 0 --size 64K)
}

# figure OP [FILE]: the profile's MB/s for OP as the route prints it.
figure() {
	jq -r --arg op "$1" '.entries[] | select(.operation == $op) | .mb_per_s' "${2:-$P}" | awk '{ printf "%.0f", $1 }'
}

# set_mbps OP ENGINE MBPS: edit the profile's figure for OP on ENGINE.
set_mbps() {
	jq --arg op "$1" --arg en "$2" --argjson v "$3" \
		'(.entries[] | select(.operation == $op and .engine == $en) | .mb_per_s) = $v' "$P" > p.tmp
	mv p.tmp "$P"
}

@test "--save: each case under the operation the programs route, its engine and size class; their -v says the figure decided" {
	run -0 --separate-stderr "$A" --save -b cpu "${RUN[@]}" zstd.compress zstd.decompress age.encrypt sha256 fft.c2c
	[ "$stderr" = "accel-bench: profile $P: 5 measurements saved" ]
	[ "$(jq -c '[.schema_version, [.entries[] | [.operation, .engine, .size_class]]]' "$P")" = \
	  '[2,[["zstd.compress","cpu","small"],["zstd.decompress","cpu","small"],["age.encrypt","openssl:cpu0","small"],["sha256","openssl:cpu0","small"],["fft.c2c","fftw:cpu0","medium"]]]' ]
	model=$(jq -r .machine.cpu_model "$P")
	[ "$(jq -r '.entries[0].engine_key' "$P")" = "cpu@cpu:$model" ]
	[ "$(jq '[.entries[] | select(.mb_per_s > 0)] | length' "$P")" -eq 5 ]

	"$C" -v -c in 2> err > in.zst
	grep -qxE "  1\. cpu +measured $(figure zstd.compress) MB/s \(profile, small jobs\)" err
	"$C" -v -d -c in.zst 2> err | cmp - in
	grep -qxE "  1\. cpu +measured $(figure zstd.decompress) MB/s \(profile, small jobs\)" err
	"$K" keygen -o key 2> /dev/null
	"$K" -v -r "$("$K" keygen -y key)" -o in.age in 2> err
	grep -qxE "  1\. openssl:cpu0 +measured $(figure age.encrypt) MB/s \(profile, small jobs\)" err
	"$K" hash -v -a sha256 in > sum 2> err
	grep -qxE "  1\. openssl:cpu0 +measured $(figure sha256) MB/s \(profile, small jobs\)" err
	head -c 64K /dev/zero > z
	"$F" -v -n 256 -o spectrum z 2> err
	grep -qxE "  1\. fftw:cpu0 +measured $(figure fft.c2c) MB/s \(profile, medium jobs\)" err
	# -q: the profile is written, nothing said
	run -0 --separate-stderr "$A" --save -q -b cpu "${RUN[@]}" sha256
	[ -z "$stderr" ]
}

@test "--save merges: the same operation, engine and size class replaced, the others kept; --save=FILE and ACCEL_PROFILE" {
	ACCEL_PROFILE="$PWD/p.json" run -0 --separate-stderr "$A" --save -b cpu "${RUN[@]}" sha256
	[ "$stderr" = "accel-bench: profile $PWD/p.json: 1 measurement saved" ]
	[ ! -e "$P" ]
	jq '.entries[0].mb_per_s = 12345' p.json > p.tmp && mv p.tmp p.json
	run -0 --separate-stderr "$A" --save="$PWD/p.json" -b cpu --repeat 1 --warmup 0 --size 64K,2M zstd.compress
	[ "$stderr" = "accel-bench: profile $PWD/p.json: 2 measurements saved" ]
	[ "$(jq -c '[.entries[] | [.operation, .size_class]]' p.json)" = \
	  '[["sha256","small"],["zstd.compress","small"],["zstd.compress","medium"]]' ]
	[ "$(figure sha256 p.json)" = 12345 ]
	run -0 --separate-stderr "$A" --save="$PWD/p.json" -b cpu "${RUN[@]}" sha256
	[ "$(jq -c '[.entries[] | [.operation, .size_class]]' p.json)" = \
	  '[["sha256","small"],["zstd.compress","small"],["zstd.compress","medium"]]' ]
	[ "$(figure sha256 p.json)" != 12345 ]
}

@test "--save: a case of engines together is no engine's figure" {
	[ -f "$ROOT/build/tests/plugins/accel_test.so" ] || skip "the test plugin is not built"
	export ACCEL_BACKEND_PATH="$ROOT/build/tests/plugins"
	run -0 --separate-stderr "$A" --save -b cpu+test:other0 "${RUN[@]}" zstd.compress
	[ "$stderr" = "accel-bench: profile $P: 0 measurements saved (no case ran on one engine)" ]
	[ ! -e "$P" ]
	run -0 --separate-stderr "$A" --save -b cpu+test:other0,test:other0 "${RUN[@]}" zstd.compress
	[ "$stderr" = "accel-bench: profile $P: 1 measurement saved" ]
	[ "$(jq -c '[.entries[] | .engine]' "$P")" = '["test:other0"]' ]
}

@test "--save: a file that is no profile is not replaced; --save= and --save --list are usage errors" {
	echo 'not json' > p.json
	run -1 --separate-stderr "$A" --save=p.json -b cpu "${RUN[@]}" sha256
	[ "$stderr" = "accel-bench: profile p.json: not valid JSON: not replaced" ]
	[[ "$output" == *"sha256 "* ]]
	[ "$(cat p.json)" = "not json" ]
	[ -z "$(find . -maxdepth 1 -name '.p.json.*')" ]
	run -2 --separate-stderr "$A" --save= sha256
	[ "${stderr_lines[0]}" = "accel-bench: --save: an empty file name" ]
	run -2 --separate-stderr "$A" --save --list sha256
	[ "${stderr_lines[0]}" = "accel-bench: --save: --list measures nothing to save" ]
	[ -z "$output" ]
}

@test "a profile from another machine: -v says it is ignored in one line, --save replaces it saying so" {
	"$A" --save -q -b cpu "${RUN[@]}" zstd.compress
	model=$(jq -r .machine.cpu_model "$P")
	[ -n "$model" ] || skip "the CPU model is not known here"
	jq '.machine.cpu_model = "Not This CPU 9000"' "$P" > p.tmp && mv p.tmp "$P"
	"$C" -v -c in 2> err > in.zst
	[ "$(grep -c ignored err)" -eq 1 ]
	grep -qxF "  profile $P ignored: measured on another machine (CPU 'Not This CPU 9000', this one '$model')" err
	grep -qE '^  1\. cpu +prior ' err
	run -0 --separate-stderr "$A" --save -b cpu "${RUN[@]}" sha256
	[ "${#stderr_lines[@]}" -eq 2 ]
	[ "${stderr_lines[0]}" = "accel-bench: profile $P: measured on another machine (CPU 'Not This CPU 9000', this one '$model'): replaced" ]
	[ "${stderr_lines[1]}" = "accel-bench: profile $P: 1 measurement saved" ]
	[ "$(jq -c '[.machine.cpu_model, [.entries[] | .operation]]' "$P")" = "[\"$model\",[\"sha256\"]]" ]
	"$C" -v -c in 2> err > in.zst
	[ "$(grep -c ignored err || true)" -eq 0 ]
	grep -qE '^  1\. cpu +prior ' err
}

# A CUDA device for fft.c2c beside fftw: a real one, else the test double
# of the driver and cuFFT (tests/fakecuda), else the test is skipped.
need_gpu() {
	[ -f "$ROOT/build/plugins/accel_cufft.so" ] || skip "the cufft plugin is not built"
	if ! "$D" --routes -b cufft fft.c2c 2>/dev/null | grep -q 'cufft:gpu'; then
		[ -e "$ROOT/build/tests/fakecuda/libcuda.so.1" ] || skip "no CUDA device"
		export LD_LIBRARY_PATH="$ROOT/build/tests/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
		"$D" --routes -b cufft fft.c2c 2>/dev/null | grep -q 'cufft:gpu' || skip "no CUDA device"
	fi
}

@test "fftw and cufft as accel-bench measured them: the figure that wins leads, removed the priors lead, within 4x they share the stream" {
	need_gpu
	run -0 --separate-stderr "$A" --save -b fftw,cufft --repeat 1 --warmup 0 --size 256 fft.c2c
	[ "$stderr" = "accel-bench: profile $P: 2 measurements saved" ]
	[ "$(jq -c '[.entries[] | [.operation, .engine[:6], .size_class]]' "$P")" = \
	  '[["fft.c2c","fftw:c","medium"],["fft.c2c","cufft:","medium"]]' ]
	gpu=$(jq -r '.entries[1].engine' "$P")
	# The other engines of a GPU here (VkFFT's, ranked by their priors)
	# measured too and set slow, so that the two this test weighs lead.
	local others e
	others=$("$D" --routes -b vkfft fft.c2c 2>/dev/null | sed -n 's/^  [0-9]*\. \(vkfft[.a-z]*:[a-z0-9]*\) .*/\1/p' | paste -sd, -)
	if [ -n "$others" ]; then
		"$A" --save -b "$others" --repeat 1 --warmup 0 --size 256 fft.c2c 2>/dev/null
		for e in ${others//,/ }; do
			set_mbps fft.c2c "$e" 1
		done
	fi
	# 32 MiB of samples: a medium job
	head -c 32M /dev/zero > z
	set_mbps fft.c2c fftw:cpu0 10
	set_mbps fft.c2c "$gpu" 1000
	"$F" -v -n 256 -o b z 2> err
	grep -qxE "  1\. $gpu +measured 1000 MB/s \(profile, medium jobs\)" err
	grep -qxE "  2\. fftw:cpu0 +measured 10 MB/s \(profile, medium jobs\)" err
	[ "$(grep -c 'serve the stream together' err)" -eq 0 ]
	# within a factor of four: both serve the stream, the output the same
	set_mbps fft.c2c fftw:cpu0 100
	set_mbps fft.c2c "$gpu" 40
	"$F" -v -n 256 -o c z 2> err
	grep -qxE "  1\. fftw:cpu0 +measured 100 MB/s \(profile, medium jobs\)" err
	grep -qxE "  2\. $gpu +measured 40 MB/s \(profile, medium jobs\)" err
	grep -qxF "  engines 1 to 2 serve the stream together: the profile measured each at 25% of the best or more" err
	# fftw ends the job within the GPU's start-up (1000 MB/s x 0.3 s is
	# more than 32 MiB): cufft is not even started
	set_mbps fft.c2c fftw:cpu0 1000
	set_mbps fft.c2c "$gpu" 10
	"$F" -v -n 256 -o a z 2> err
	grep -qxE "  1\. fftw:cpu0 +measured 1000 MB/s \(profile, medium jobs\)" err
	grep -qxE "  -  cufft +left out: not probed: fftw:cpu0 at 1000 MB/s ends a job of 33554432 bytes within a device's 0\.3 s of start-up \(name it with --backend to use it\)" err
	[ "$(grep -c 'serve the stream together' err)" -eq 0 ]
	cmp a c
	# removed: the priors decide, fftw first (2000 MB/s or more also ends
	# it within the start-up)
	rm "$P"
	"$F" -v -n 256 -o d z 2> err
	grep -qE "^  1\. fftw:cpu0 +prior " err
	grep -qE "^  -  cufft +left out: not probed: fftw:cpu0 at [0-9]+ MB/s ends a job of 33554432 bytes within a device's 0\.3 s of start-up \(name it with --backend to use it\)$" err
	# 1 GiB from a pipe, a job of unknown size: ranked by the priors,
	# cufft's (6000 MB/s) at most fftw's (1000 MB/s a core) leaving it
	# unprobed
	head -c 1G /dev/zero | "$F" -v -n 256 -o e 2> err
	local fftw
	fftw=$(sed -n 's/^  1\. fftw:cpu0 *prior \([0-9]*\) MB\/s .*/\1/p' err)
	if [ -n "$fftw" ] && [ "$fftw" -ge 6000 ]; then
		grep -qxE "  -  cufft +left out: not probed: fftw:cpu0 at $fftw MB/s is ahead of its best prior, 6000 MB/s, unmeasured \(name it with --backend to use it\)" err
	else
		grep -qE "^  [12]\. $gpu +prior 6000 MB/s " err
	fi
	[ "$(grep -c 'measured [0-9]' err)" -eq 0 ]
	cmp a d
}
