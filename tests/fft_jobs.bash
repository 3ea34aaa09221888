# fft_jobs.bash - what the accel-fft bats files share (loaded with `load
# fft_jobs`): jobs run one by one and checked against numpy in one process.
# The file's setup sets F (accel-fft), REF (tests/fixtures/fft/ref.py) and
# T; ENGINE, when set, names the engine (-b ENGINE --fallback none), else
# FFTW plans with --plan estimate.

# engine PREFIX: the full name of the first engine whose name begins
# PREFIX: (vkfft.opencl: vkfft.opencl:gpu1) on the route for fft.c2c of
# accel-detect --json (every backend probed), or nothing. -b takes an
# engine on a software device (PoCL, lavapipe) only by its full name.
engine() {
	"$ROOT/build/accel-detect" --json --routes fft.c2c 2>/dev/null |
		jq -r --arg p "$1:" '[.routes[0].engines[].name | select(startswith($p))][0] // empty'
}

# add OPTIONS... IN: run accel-fft on IN into a file of its own and list
# the job for verify.
add() {
	local in="${!#}" opts=("${@:1:$#-1}") how=(--plan estimate)
	[ -z "${ENGINE:-}" ] || how=(-b "$ENGINE" --fallback none)
	jobs=$((${jobs:-0} + 1))
	"$F" "${how[@]}" "${opts[@]}" -o "$T/o$jobs" "$in"
	echo "${opts[*]} $in $T/o$jobs" >> "$T/list"
}

# verify: numpy checks every job add listed (relative L2 within 1e-5),
# and each was checked.
verify() {
	run $REF checks "$T/list"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c ' rel_l2 ' <<< "$output")" -eq "$jobs" ]
}

# inprocess ENGINE: 19 jobs run one after the other in one process by the
# test driver (build/tests/fft-inprocess) on ENGINE and listed for verify,
# each differing from the one before in one thing (window, its parameter,
# dB offset, output kind, averaging, shift, direction, scaling, hop,
# decimation, N, sample type), the last of the first's shape: an engine
# that keeps its worker contexts between the jobs of a process must serve
# each as a context made for it would. Its inputs are of one unit each.
inprocess() {
	[ -f "$T/x" ] || $REF gen cf32 30000 11 "$T/x"
	[ -f "$T/r" ] || $REF gen f32 30000 12 "$T/r"
	[ -f "$T/c" ] || $REF gen ci16 30000 13 "$T/c"
	local opts
	: > "$T/batch"
	while read -r opts; do
		jobs=$((${jobs:-0} + 1))
		echo "$opts $T/o$jobs" | tee -a "$T/list" >> "$T/batch"
	done <<-LIST
	-n 1000 -w hann --out db $T/x
	-n 1000 -w hann --out db $T/x
	-n 1000 -w blackman --out db $T/x
	-n 1000 -w kaiser:6 --out db $T/x
	-n 1000 -w kaiser:7 --out db $T/x
	-n 1000 -w kaiser:7 --out db --db-offset 10 $T/x
	-n 1000 -w kaiser:7 --out power $T/x
	-n 1000 -w kaiser:7 --out power --average 4 $T/x
	-n 1000 --shift $T/x
	-n 1000 $T/x
	-n 1000 -i $T/x
	-n 1000 -i --norm ortho $T/x
	-n 1000 --hop 500 $T/x
	-n 1000 --decimate 3 --out mag $T/x
	-n 500 $T/x
	-t f32 -n 1000 $T/r
	-t f32 -n 1000 --full $T/r
	-t ci16 -n 1000 --out power $T/c
	-n 1000 -w hann --out db $T/x
	LIST
	ACCEL_BACKEND_PATH="$ROOT/build/plugins" "$ROOT/build/tests/fft-inprocess" "$1" "$T/batch"
}
