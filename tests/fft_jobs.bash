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
