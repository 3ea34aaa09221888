# common.bash - what every bats file shares, loaded first (`load lib/common`):
# the environment reset, so that no test inherits a developer's settings.
# Every ACCEL_* variable goes (the programs read ACCEL_BACKEND,
# ACCEL_BACKEND_PATH, ACCEL_FALLBACK, ACCEL_THREADS, ACCEL_MEMORY,
# ACCEL_FAULT, ACCEL_PROFILE, ACCEL_PROBE_TIMEOUT, ACCEL_SYSROOT,
# ACCEL_CUFFT_CHAIN, ACCEL_ONNXRUNTIME_LIB), NO_COLOR too, and the profile and
# FFTW wisdom that the programs read from ~/.cache are looked for in the
# file's own temporary folder instead. A file's setup sets what it needs.

for v in $(compgen -v ACCEL_); do
	unset "$v"
done
unset v NO_COLOR
export XDG_CACHE_HOME="$BATS_FILE_TMPDIR/cache"
