#!/bin/sh
# Benchmark (not a test): accel-fft's CPU engine (fftw:cpu0) side by side
# with FFTW called directly on the same plan and batch (tests/bench/
# fft-direct.c, built here), for N = 256, 1024, 4096, 65536 and 2^20 on
# ACCEL_BENCH_MB MiB of cf32 samples (default 64) read from a file:
# GFLOPS (5 N log2 N per frame), input GB/s, and the time ratio (our
# streaming overhead). The peer transforms the file held in memory (best of
# three passes) with one thread. accel-fft runs with -T 1 (one worker, as
# the peer; the reader and the writer are threads of their own, so the
# ratio can dip below 1 when they overlap the transforms) and -T 0 (all
# cores). Two times of each run (-v): "run", from the first read to the last
# write (the read() copies out of the page cache and the pipeline's fill and
# drain included; the process's start-up, plugin loading and driver probing
# are not: "wall" says that), and "engine", the worker's busy time
# (conversion, window, transform, output rows: what the peer does, plus the
# output; summed over the workers with -T 0); -o /dev/null. Then the plan
# time of accel-fft on one frame, cold (no wisdom: FFTW_MEASURE plans) and
# warm (wisdom cached). Best of ACCEL_BENCH_RUNS runs (3). Then each device
# engine accel-detect routes fft.c2c to (VkFFT on OpenCL: on PoCL here, a
# software device), named with -b, once per N after a warm-up run (its
# kernels compiled and cached by the driver). Then the fused chain, "cu8
# in, averaged dB out" (--average 16 --out db, ACCEL_BENCH_CHAIN_MB MiB of
# cu8, default 16): fftw:cpu0 (-T 0) and each device engine on the same
# job, in GFLOPS and input GB/s, with the bytes each unit moves to and from
# the device: raw samples and frame numbers up, finished rows down (what
# was moved before the chain ran on the device, complex floats of every
# frame both ways, beside it). Then CUDA (see below).
set -eu
B=${ACCEL_BUILD:-build}
A="$B/accel-fft"
runs=${ACCEL_BENCH_RUNS:-3}
mb=${ACCEL_BENCH_MB:-64}
work=$(mktemp -d "${TMPDIR:-/tmp}/accel-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
direct="$work/fft-direct"
# shellcheck disable=SC2046
${CC:-cc} -O2 -std=gnu11 -Ilibcore/include -o "$direct" tests/bench/fft-direct.c -L"$B/lib" -laccel \
	-Wl,-rpath,"$PWD/$B/lib" $(pkg-config --cflags --libs fftw3f) -lm
head -c $((mb * 1048576)) /dev/urandom > "$work/x.cf32"
bytes=$(stat -c %s "$work/x.cf32")

gflops() { awk -v n="$1" -v f="$2" -v s="$3" 'BEGIN { printf "%.2f", 5 * n * log(n) / log(2) * f / s / 1e9 }'; }
gbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.2f", b / s / 1e9 }'; }

printf '%-8s %-22s %8s %8s %9s   %s\n' "N" "engine" "GFLOPS" "in GB/s" "seconds" "time per frame vs direct FFTW"
for n in 256 1024 4096 65536 1048576; do
	frames=$((bytes / 8 / n))
	used=$((frames * n * 8))
	# Plans first (the wisdom both sides import), then the timed runs.
	"$A" -n "$n" -o /dev/null "$work/x.cf32"
	dline=$(for i in $(seq "$runs"); do "$direct" "$n" "$work/x.cf32"; done | sort -n | head -n 1)
	ds=$(echo "$dline" | cut -d' ' -f1)
	dframes=$(echo "$dline" | cut -d' ' -f2)
	batch=$(echo "$dline" | cut -d' ' -f3)
	printf '%-8s %-22s %8s %8s %9.4f   batch %s frames\n' "$n" "fftw direct (1 thread)" \
		"$(gflops "$n" "$dframes" "$ds")" "$(gbps $((dframes * n * 8)) "$ds")" "$ds" "$batch"
	for t in 1 0; do
		bs="" be="" bw=""
		for i in $(seq "$runs"); do
			t0=$(date +%s.%N)
			"$A" -v -T "$t" -n "$n" -o /dev/null "$work/x.cf32" 2> "$work/log"
			t1=$(date +%s.%N)
			st=$(sed -n 's/.* bytes out in \([0-9.]*\) s .*/\1/p' "$work/log")
			se=$(sed -n 's/^  fftw:cpu0 .* busy \([0-9.]*\) s.*/\1/p' "$work/log")
			bs=$(awk -v a="$bs" -v b="$st" 'BEGIN { print (a == "" || b < a) ? b : a }')
			be=$(awk -v a="$be" -v b="$se" 'BEGIN { print (a == "" || b < a) ? b : a }')
			bw=$(awk -v a="$bw" -v b="$(awk -v x="$t0" -v y="$t1" 'BEGIN { print y - x }')" 'BEGIN { print (a == "" || b < a) ? b : a }')
		done
		ratio() { awk -v a="$1" -v f="$frames" -v d="$ds" -v df="$dframes" 'BEGIN { printf "%.2f", (a / f) / (d / df) }'; }
		printf '%-8s %-22s %8s %8s %9.4f   run %sx, engine %sx (-T %s; engine busy %.4f s, wall %.3f s)\n' "$n" \
			"accel-fft fftw:cpu0" "$(gflops "$n" "$frames" "$bs")" "$(gbps "$used" "$bs")" "$bs" \
			"$(ratio "$bs")" "$(ratio "$be")" "$t" "$be" "$bw"
	done
done

engines=$("$B/accel-detect" --routes fft.c2c 2>/dev/null | sed -n 's/^  [-0-9.]* *\(vkfft\.[a-z]*:[a-z0-9]*\) .*/\1/p' | sort -u)
for e in $engines; do
	for n in 256 1024 4096 65536 1048576; do
		frames=$((bytes / 8 / n))
		used=$((frames * n * 8))
		head -c $((n * 8 * 4)) "$work/x.cf32" > "$work/warm"
		"$A" -b "$e" --fallback none -n "$n" -o /dev/null "$work/warm"
		"$A" -v -b "$e" --fallback none -n "$n" -o /dev/null "$work/x.cf32" 2> "$work/log" || { echo "$e: N=$n failed"; continue; }
		st=$(sed -n 's/.* bytes out in \([0-9.]*\) s .*/\1/p' "$work/log")
		printf '%-8s %-22s %8s %8s %9.4f\n' "$n" "$e" "$(gflops "$n" "$frames" "$st")" "$(gbps "$used" "$st")" "$st"
	done
done

# CUDA (cufft:gpuN): cuFFT alone on the same cf32 file (complex rows out),
# then the fused chain as a waterfall would run it (cu8 in, averaged dB
# out: -t cu8 -n 1024 --average 16 --out db), on the device and with
# ACCEL_CUFFT_CHAIN=host, in input GB/s against the host-to-device
# bandwidth tests/bench/fft-cuda-bw.c measures with cuMemcpyHtoDAsync from
# pinned memory (the issue's aim: the fused chain at 70% of it or more).
cuda=$("$B/accel-detect" --routes fft.c2c 2>/dev/null | sed -n 's/^  [-0-9.]* *\(cufft:gpu[0-9]*\) .*/\1/p' | head -n 1)
if [ -z "$cuda" ]; then
	echo "cuda: skipped: no CUDA device"
else
	${CC:-cc} -O2 -std=gnu11 -o "$work/fft-cuda-bw" tests/bench/fft-cuda-bw.c -ldl
	bw=$("$work/fft-cuda-bw" 256) || bw="0 0"
	h2d=${bw% *}
	echo "cuda: $cuda, host to device $h2d GB/s, device to host ${bw#* } GB/s (pinned, cuMemcpy*Async)"
	for n in 256 1024 4096 65536 1048576; do
		frames=$((bytes / 8 / n))
		used=$((frames * n * 8))
		head -c $((n * 8 * 4)) "$work/x.cf32" > "$work/warm"
		"$A" -b "$cuda" --fallback none -n "$n" -o /dev/null "$work/warm"
		"$A" -v -b "$cuda" --fallback none -n "$n" -o /dev/null "$work/x.cf32" 2> "$work/log" || { echo "$cuda: N=$n failed"; continue; }
		st=$(sed -n 's/.* bytes out in \([0-9.]*\) s .*/\1/p' "$work/log")
		printf '%-8s %-22s %8s %8s %9.4f\n' "$n" "$cuda" "$(gflops "$n" "$frames" "$st")" "$(gbps "$used" "$st")" "$st"
	done
	head -c $((mb * 4 * 1048576)) /dev/urandom > "$work/x.cu8"
	u8bytes=$(stat -c %s "$work/x.cu8")
	for chain in device ACCEL_CUFFT_CHAIN=host; do
		best=""
		for i in $(seq "$runs"); do
			env ${chain#device} "$A" -v -b "$cuda" --fallback none -t cu8 -n 1024 --average 16 --out db \
				-o /dev/null "$work/x.cu8" 2> "$work/log"
			st=$(sed -n 's/.* bytes out in \([0-9.]*\) s .*/\1/p' "$work/log")
			best=$(awk -v a="$best" -v b="$st" 'BEGIN { print (a == "" || b < a) ? b : a }')
		done
		awk -v b="$u8bytes" -v s="$best" -v h="$h2d" -v c="${chain#ACCEL_CUFFT_CHAIN=}" -v e="$cuda" 'BEGIN {
			printf "cu8 -n 1024 --average 16 --out db on %s, chain on the %s: %.2f GB/s of input, %s of host to device\n", e, c, b / s / 1e9, (h > 0 ? sprintf("%.0f%%", 100 * b / s / 1e9 / h) : "? (not measured)") }'
	done
fi

echo
cmb=${ACCEL_BENCH_CHAIN_MB:-16}
head -c $((cmb * 1048576)) /dev/urandom > "$work/x.cu8"
cbytes=$(stat -c %s "$work/x.cu8")
printf 'fused chain: %s MiB of cu8 in, --average 16 --out db out\n' "$cmb"
printf '%-8s %-22s %8s %8s %9s   %s\n' "N" "engine" "GFLOPS" "in GB/s" "seconds" "per unit: up, down (host chain: up, down)"
for n in 1024 65536; do
	frames=$((cbytes / 2 / n))
	for e in fftw:cpu0 $engines; do
		job="-t cu8 -n $n --average 16 --out db"
		# shellcheck disable=SC2086
		head -c $((n * 2 * 32)) "$work/x.cu8" | "$A" -b "$e" --fallback none $job -o /dev/null
		# shellcheck disable=SC2086
		"$A" -v -b "$e" --fallback none $job -o /dev/null "$work/x.cu8" 2> "$work/log" || { echo "$e: N=$n failed"; continue; }
		st=$(sed -n 's/.* bytes out in \([0-9.]*\) s .*/\1/p' "$work/log")
		line=$(grep "^  $e " "$work/log")
		units=$(echo "$line" | sed -n 's/.* units \([0-9]*\),.*/\1/p')
		in=$(echo "$line" | sed -n 's/.* in \([0-9]*\) B,.*/\1/p')
		out=$(echo "$line" | sed -n 's/.* out \([0-9]*\) B,.*/\1/p')
		moved=""
		if [ "$e" != fftw:cpu0 ]; then
			moved=$(awk -v u="$units" -v i="$in" -v o="$out" -v f="$frames" -v n="$n" 'BEGIN {
				printf "%.0f B, %.0f B (%.0f B, %.0f B)", i / u + 4 * f / u, o / u, f * n * 8 / u, f * n * 8 / u }')
		fi
		printf '%-8s %-22s %8s %8s %9.4f   %s\n' "$n" "$e" "$(gflops "$n" "$frames" "$st")" "$(gbps "$cbytes" "$st")" \
			"$st" "$moved"
	done
done

echo
printf '%-8s %12s %12s\n' "N" "plan cold s" "plan warm s"
for n in 1024 65536 1048576; do
	head -c $((n * 8)) "$work/x.cf32" > "$work/one"
	rm -rf "$XDG_CACHE_HOME"
	t0=$(date +%s.%N)
	"$A" -T 1 -n "$n" -o /dev/null "$work/one"
	t1=$(date +%s.%N)
	"$A" -T 1 -n "$n" -o /dev/null "$work/one"
	t2=$(date +%s.%N)
	awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "%-8s %12.3f %12.3f\n", n, b - a, c - b }'
done
