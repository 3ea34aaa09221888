#!/bin/sh
# Benchmark (not a test): accel-crypt's age payloads beside age, and its
# hashes beside sha256sum, sha512sum, b2sum, sha1sum and md5sum, with
# `openssl speed` as the ceiling of each (in memory), on SIZE bytes (64M)
# of this machine's files: a thin call of accel-bench --vs (accel-bench(1)).
# More accel-bench options follow on the command line.
set -eu
B=${ACCEL_BUILD:-build}
exec "$B/accel-bench" --vs --size "${SIZE:-64M}" "$@" 'age.*' sha256 sha512 sha3-256 blake2b512 sha1 md5
