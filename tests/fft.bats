#!/usr/bin/env bats
# accel-fft: accuracy against numpy (double precision), round trips,
# known answers, the output formats and bad input. The reference is
# tests/fixtures/fft/ref.py (numpy from /usr/bin/python3).

load lib/common
load fft_jobs

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	F="$ROOT/build/accel-fft"
	REF="/usr/bin/python3 $ROOT/tests/fixtures/fft/ref.py"
	T="$BATS_TEST_TMPDIR"
	export XDG_CACHE_HOME="$T/cache"
	/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "python3-numpy is not installed"
}

# check OPTIONS... IN: run accel-fft on IN with OPTIONS (--plan estimate)
# and compare with numpy; the error line goes to the test's output.
check() {
	local in="${@: -1}" opts=("${@:1:$#-1}")
	"$F" --plan estimate "${opts[@]}" -o "$T/out" -f "$in"
	$REF check "${opts[@]}" "$in" "$T/out"
}

@test "complex input, every size class: 2, primes, odd, powers of two up to 2^20" {
	for n in 2 3 5 7 17 97 256 1000 1024 4096 65537; do
		$REF gen cf32 $((n * 3 + n / 2)) $n "$T/x$n"
		add -n $n "$T/x$n"
	done
	$REF gen cf32 $((1 << 20)) 1 "$T/x"
	add -n $((1 << 20)) "$T/x"
	verify
	[[ "${lines[-1]}" == *"rows 1 bins 1048576 "* ]]
}

@test "real input gives N/2+1 bins (rfft), and all N with --full, even and odd N" {
	for n in 2 9 64 1001 4096; do
		$REF gen f32 $((n * 4)) $n "$T/x$n"
		add -t f32 -n $n "$T/x$n"
		add -t f32 -n $n --full "$T/x$n"
	done
	$REF gen f64 $((1 << 20)) 3 "$T/x"
	add -t f64 -n $((1 << 20)) "$T/x"
	verify
	[[ "${lines[0]}" == *"rows 4 bins 2 "* ]]
	[[ "${lines[1]}" == *"rows 4 bins 2 "* ]]
	[[ "${lines[6]}" == *"rows 4 bins 501 "* ]]
	[[ "${lines[7]}" == *"rows 4 bins 1001 "* ]]
	[[ "${lines[10]}" == *"rows 1 bins 524289 "* ]]
}

@test "every sample type is read as documented (scale, offset, I then Q)" {
	for t in cf32 ci16 ci8 cu8 f32 i16 u8 cf64 f64; do
		$REF gen $t 5000 7 "$T/x.$t"
		add -t $t -n 250 "$T/x.$t"
	done
	verify
	[ "$(grep -c ': rows 20 ' <<< "$output")" -eq 9 ]
}

@test "big-endian, 24- and 32-bit types (SigMF _be, ci32, i8; our i24) against numpy; _le and r are synonyms" {
	for t in cf32_be ci16_be f32_be i16_be cf64_be f64_be ci32 i32 ci32_be i32_be i8 i24 ci24; do
		$REF gen $t 5000 8 "$T/x.$t"
		add -t $t -n 250 "$T/x.$t"
	done
	$REF gen cf32 5000 9 "$T/x"
	add -t cf32_le -n 250 --out db "$T/x"
	add -t rf32_le -n 250 "$T/x"
	add -t ri16_be -n 250 -w hann "$T/x"
	verify
	[ "$(grep -c ': rows 20 ' <<< "$output")" -eq 14 ]
	[[ "${lines[14]}" == *": rows 40 bins 126 "* ]]
	[[ "${lines[15]}" == *": rows 80 bins 126 "* ]]
	# The same values in either byte order give the same bytes out.
	/usr/bin/python3 -c 'import numpy as np, sys; np.fromfile(sys.argv[1], "<f4").astype(">f4").tofile(sys.argv[2])' "$T/x" "$T/xbe"
	cmp <("$F" --plan estimate -n 100 -w hann "$T/x") <("$F" --plan estimate -t cf32_be -n 100 -w hann "$T/xbe")
	cmp <("$F" --plan estimate -n 100 "$T/x") <("$F" --plan estimate -t cf32_le -n 100 "$T/x")
	cmp <("$F" --plan estimate -t f32 -n 100 "$T/x") <("$F" --plan estimate -t rf32_le -n 100 "$T/x")
	cmp <("$F" --plan estimate -t u8 -n 100 "$T/x") <("$F" --plan estimate -t ru8 -n 100 "$T/x")
}

@test "8-bit types take no byte order (SigMF): cu8_le is exit 2 naming cu8; unknown names list the types" {
	$REF gen cu8 1000 10 "$T/x"
	run "$F" -t cu8_le -n 100 "$T/x"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "accel-fft: --type: 'cu8_le': 8-bit samples have no byte order (SigMF names them without _le or _be: cu8)" ]
	run "$F" -t ri8_be -n 100 "$T/x"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == *"SigMF names them without _le or _be: ri8)" ]]
	for t in i24_be cf16 rcf32 cu16_le; do
		run "$F" -t $t -n 100 "$T/x"
		[ "$status" -eq 2 ]
		[[ "${lines[0]}" == "accel-fft: --type: unknown sample type '$t' (one of cf32, ci16, ci8, cu8, f32, i16, u8, cf64, f64, i8, ci32, i32, ci24, i24, cf32_be, "* ]]
	done
}

@test "inverse transforms, every normalisation, both directions" {
	$REF gen cf32 6000 11 "$T/x"
	for norm in backward forward ortho none; do
		add -n 1000 --norm $norm "$T/x"
		add -n 1000 --norm $norm --inverse "$T/x"
	done
	$REF gen f32 6000 12 "$T/r"
	add -t f32 -n 600 --inverse "$T/r"
	verify
	[[ "${lines[-1]}" == *"bins 600 "* ]]
}

@test "every window, every output mode, with shift and dB offset" {
	$REF gen cf32 8192 13 "$T/x"
	: > "$T/list"
	for w in rect hann hamming blackman blackman-harris flattop kaiser:0 kaiser:8.6; do
		for out in complex mag power db; do
			"$F" --plan estimate -n 512 -w $w --out $out --shift --db-offset -12.5 -o "$T/$w.$out" "$T/x"
			echo "-n 512 -w $w --out $out --shift --db-offset -12.5 $T/x $T/$w.$out" >> "$T/list"
		done
	done
	$REF gen f32 8192 14 "$T/r"
	"$F" --plan estimate -t f32 -n 1023 -w hann --out db -o "$T/r.db" "$T/r"
	echo "-t f32 -n 1023 -w hann --out db $T/r $T/r.db" >> "$T/list"
	run $REF checks "$T/list"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'rel_l2' <<< "$output")" -eq 33 ]
}

@test "round trip: forward then inverse gives the input back within 1e-5" {
	for n in 7 1000 4096; do
		$REF gen cf32 $((n * 5)) $n "$T/x"
		"$F" --plan estimate -n $n "$T/x" | "$F" --plan estimate -n $n --inverse > "$T/y"
		run /usr/bin/python3 -c "
import numpy as np, sys
x = np.fromfile('$T/x', np.complex64).astype(complex); y = np.fromfile('$T/y', np.complex64)
e = np.linalg.norm(y - x) / np.linalg.norm(x); print(len(y), e); sys.exit(1 if len(x) != len(y) or e > 1e-5 else 0)"
		echo "n=$n: $output"
		[ "$status" -eq 0 ]
	done
}

@test "--inverse --real (c2r): half spectra to real rows as numpy.fft.irfft, every norm, odd and prime N, text and npy" {
	: > "$T/list"
	jobs=0
	for n in 2 7 1000 1001 4096; do
		$REF gen cf32 $(((n / 2 + 1) * 6)) $n "$T/h$n"
		add -i --real -n $n "$T/h$n"
	done
	$REF gen cf32 $((513 * 9 + 100)) 15 "$T/h"
	for norm in forward ortho none; do
		add -i --real -n 1024 --norm $norm "$T/h"
	done
	add -i --real -n 1024 --text "$T/h"
	add -i --real -n 1024 --npy "$T/h"
	add -i --real -n 1024 --decimate 2 "$T/h"
	add -i --real -n 1024 --pad "$T/h"
	$REF gen ci16 $((501 * 4)) 16 "$T/h16"
	add -t ci16 -i --real -n 1000 "$T/h16"
	verify
	[[ "${lines[0]}" == *": rows 6 bins 2 "* ]]
	[[ "${lines[3]}" == *": rows 6 bins 1001 "* ]]
	[[ "${lines[11]}" == *": rows 10 bins 1024 "* ]]
	/usr/bin/python3 -c 'import numpy as np, sys; a = np.load(sys.argv[1]); sys.exit(a.dtype != np.float32 or a.shape != (9, 1024))' "$T/o10"
	# -v names the operation.
	"$F" -v -i --real -n 1024 "$T/h" 2>&1 > /dev/null | grep -q "^route for fft.c2r "
}

@test "round trip: real samples, r2c (complex out), then c2r give the input back within 1e-5" {
	for n in 9 1000 4096 65537; do
		$REF gen f32 $((n * 5)) $n "$T/x"
		"$F" --plan estimate -t f32 -n $n "$T/x" | "$F" --plan estimate -n $n --inverse --real > "$T/y"
		run /usr/bin/python3 -c "
import numpy as np, sys
x = np.fromfile('$T/x', np.float32).astype(float); y = np.fromfile('$T/y', np.float32)
e = np.linalg.norm(y - x) / np.linalg.norm(x); print(len(y), e); sys.exit(1 if len(x) != len(y) or e > 1e-5 else 0)"
		echo "n=$n: $output"
		[ "$status" -eq 0 ]
	done
}

@test "--real: usage errors say what does not apply; engines without c2r say so" {
	$REF gen cf32 2000 17 "$T/h"
	while IFS='|' read -r opts msg; do
		run "$F" -n 100 $opts "$T/h"
		echo "$opts: $output"
		[ "$status" -eq 2 ]
		[ "${lines[0]}" = "accel-fft: --real $msg" ]
	done <<-'EOF'
	--real|needs --inverse (a forward transform of real samples is -t f32)
	-i --real -t f32|reads half spectra: a complex type (cf32, the forward transform's output)
	-i --real --full|takes the N/2+1 bins of a half spectrum, not --full
	-i --real -w hann|takes no window (a window applies to samples)
	-i --real --out db|writes real samples: --out mag, power and db do not apply
	-i --real --shift|takes no --shift (a half spectrum has no negative frequencies)
	EOF
	run "$F" -n 100 -i --real --hop 10 "$T/h"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "accel-fft: --hop and --overlap do not apply to an inverse real transform: each frame is N/2+1 bins" ]
	run "$F" -v -b vkfft.opencl -n 100 -i --real "$T/h"
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "accel-fft: no engine can run fft.c2r (try -v for the reasons)" ]
	[[ "$output" == *"route for fft.c2r (--backend):"* ]]
}

@test "known answer: a complex tone lands in its bin at 0 dB (--norm forward)" {
	/usr/bin/python3 -c "
import numpy as np
n = 1000; j = np.arange(4 * n)
np.exp(2j * np.pi * 123 * j / n).astype(np.complex64).tofile('$T/tone')"
	"$F" -n 1000 --norm forward --out db --text "$T/tone" > "$T/db.csv"
	[ "$(wc -l < "$T/db.csv")" -eq 4 ]
	run /usr/bin/python3 -c "
import numpy as np
a = np.loadtxt('$T/db.csv', delimiter=',')
peak = a.argmax(axis=1); print(peak, a[:, 123], np.delete(a, 123, axis=1).max())
assert (peak == 123).all() and abs(a[:, 123]).max() < 1e-4 and np.delete(a, 123, axis=1).max() < -100"
	echo "$output"
	[ "$status" -eq 0 ]
	# The same tone at -1 Hz per bin of a full spectrum, shifted: bin 500 - 1.
	/usr/bin/python3 -c "
import numpy as np
n = 1000; j = np.arange(n)
np.exp(-2j * np.pi * j / n).astype(np.complex64).tofile('$T/neg')"
	run sh -c "'$F' -n 1000 --out power --shift --norm forward --text '$T/neg' | tr ',' '\n' | awk '\$1 > 0.5 { print NR - 1 }'"
	[ "$output" = 499 ]
}

@test "real known answer: a cosine of amplitude 2 at bin 50 is 0 dB with --norm forward (half spectrum)" {
	/usr/bin/python3 -c "
import numpy as np
n = 400; j = np.arange(n)
(2 * np.cos(2 * np.pi * 50 * j / n)).astype(np.float32).tofile('$T/cos')"
	run sh -c "'$F' -t f32 -n 400 --norm forward --out db --text '$T/cos' | tr ',' '\n' | awk -F, '\$1 > -1 { print NR - 1, \$1 }'"
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "50 "* ]]
	[ "$(echo "${lines[0]}" | awk '{ print ($2 < 1e-5 && $2 > -1e-5) }')" = 1 ]
}

@test "overlap and hop: frames share samples, statistics count each input byte once" {
	$REF gen cf32 10000 21 "$T/x"
	run check -n 1000 --overlap 0.5 -w hann "$T/x"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "rows 19 "* ]]
	run check -n 1000 --hop 300 "$T/x"
	[ "$status" -eq 0 ]
	[[ "$output" == "rows 31 "* ]]
	# Small units (-T 2, --hop 1 means many frames per byte): still in order.
	run check -n 64 --hop 1 --out power "$T/x"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "rows 9937 "* ]]
	# -v: the input is counted once however much frames overlap.
	"$F" -v --plan estimate -n 1000 --overlap 0.75 "$T/x" 2> "$T/log" > /dev/null
	grep -q "80000 bytes in" "$T/log"
	grep -q "^accel-fft: 10000 samples in " "$T/log"
}

@test "gaps: a hop larger than N needs --allow-gaps (exit 2), then skips samples" {
	$REF gen cf32 10000 22 "$T/x"
	run "$F" -n 100 --hop 250 "$T/x"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "accel-fft: --hop 250 is larger than the transform size 100: samples would be skipped (add --allow-gaps)" ]
	run check -n 100 --hop 250 --allow-gaps "$T/x"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "rows 40 "* ]]
}

@test "--average K is Welch's mean of K spectra per row; the last row averages what is left" {
	$REF gen cf32 $((256 * 103)) 23 "$T/x"
	for out in mag power db; do
		run check -n 256 --average 10 --out $out "$T/x"
		echo "$out: $output"
		[ "$status" -eq 0 ]
		[[ "$output" == "rows 11 "* ]]
	done
	run check -n 256 -w hann --overlap 0.5 --average 7 --out db "$T/x"
	[ "$status" -eq 0 ]
	run "$F" -n 256 --average 4 "$T/x"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "accel-fft: averaging needs --out mag, power or db"* ]]
}

@test "--decimate D writes one row in D, across unit boundaries" {
	$REF gen cf32 $((256 * 5000)) 24 "$T/x"
	run check -n 256 --decimate 7 --out power "$T/x"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "rows 715 "* ]]
	run check -n 256 --average 3 --decimate 4 --out db "$T/x"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "rows 417 "* ]]
}

@test "--average K over more frames than a unit holds: rows are summed across units, against numpy" {
	$REF gen cf32 200000 40 "$T/x"
	# Under --memory 1M a unit holds fewer than K frames of N = 4096.
	run "$F" -b fftw -v --plan estimate -n 4096 --overlap 0.5 -w hann --out db --average 30 --memory 1M -o "$T/o" "$T/x"
	[ "$status" -eq 0 ]
	[[ "$output" == *"accel-fft: $T/x: 13 units, "* ]]
	add -n 4096 --overlap 0.5 -w hann --out db --average 30 --memory 1M "$T/x"
	add -n 4096 --overlap 0.5 --out power --average 30 --decimate 2 --memory 1M "$T/x"
	add -n 4096 --out mag --average 25 --decimate 3 --memory 1M "$T/x"
	add -n 4096 --out power --average 40 --npy --memory 1M "$T/x"
	add -n 4096 --hop 1000 --out db --db-offset 3 --average 45 --decimate 2 --text --pad --memory 1M "$T/x"
	add -n 4096 --hop 5000 --allow-gaps --out db --average 11 --decimate 2 --memory 1M "$T/x"
	add -t cu8 -n 4096 --hop 3000 --out power --average 13 --decimate 3 --shift --pad --memory 1M "$T/x"
	cat "$T/x" | "$F" --plan estimate -n 4096 --overlap 0.5 --out power --average 30 --decimate 2 --npy --memory 1M -o "$T/p.npy"
	echo "-n 4096 --overlap 0.5 --out power --average 30 --decimate 2 --npy $T/x $T/p.npy" >> "$T/list"
	jobs=$((jobs + 1))
	verify
	# A partial sample in the frames a --decimate skips is still one.
	head -c 3 /dev/urandom >> "$T/x"
	run "$F" --plan estimate -n 4096 --out power --average 30 --decimate 2 --memory 1M -o "$T/partial" "$T/x"
	[ "$status" -eq 3 ]
	[[ "$output" == *"partial sample at the end of input: 3 of the 8 bytes of a cf32 sample at byte offset 1600000 "* ]]
}

@test "--average 1048576 holds one unit's frames, not K: it runs in 500 MB of address space" {
	$REF gen ci16 2560000 41 "$T/x"
	run bash -c "ulimit -v 500000; '$F' -b fftw -T 2 --plan estimate -t ci16 -n 1024 --out db --average 1048576 -o '$T/o' '$T/x'"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$T/o")" -eq 4096 ]
	run $REF check -t ci16 -n 1024 --out db --average 1048576 "$T/x" "$T/o"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "rows 1 bins 1024 "* ]]
}

@test "--text is CSV numpy reads; --npy is an array numpy.load reads, from a file or a pipe" {
	$REF gen cf32 3000 25 "$T/x"
	run check -n 300 --text "$T/x"
	[ "$status" -eq 0 ]
	run check -n 300 --out db --text "$T/x"
	[ "$status" -eq 0 ]
	run check -n 300 --out mag --npy "$T/x"
	[ "$status" -eq 0 ]
	run check -n 300 --npy "$T/x"
	echo "$output"
	[ "$status" -eq 0 ]
	# From a pipe, the header is rewritten at the end of the output file.
	cat "$T/x" | "$F" --plan estimate -n 300 --npy -o "$T/p.npy"
	run $REF check -n 300 --npy "$T/x" "$T/p.npy"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$T/out" "$T/p.npy"
	# From a pipe to a pipe the row count cannot be known: exit 2.
	run bash -c "set -o pipefail; cat '$T/x' | '$F' -n 300 --npy | cat > /dev/null"
	[ "$status" -eq 2 ]
	[[ "$output" == "accel-fft: --npy needs an input of known size or an output file"* ]]
}

@test "a partial sample at the end is exit 3 naming the offset; --pad completes it and pads the frames" {
	$REF gen cf32 1000 26 "$T/x"
	head -c 7 /dev/urandom >> "$T/x"
	run "$F" -n 100 "$T/x"
	[ "$status" -eq 3 ]
	[ "$output" = "accel-fft: $T/x: partial sample at the end of input: 7 of the 8 bytes of a cf32 sample at byte offset 8000 (--pad completes it with zeros)" ]
	run sh -c "cat '$T/x' | '$F' -n 100 -o '$T/o'"
	[ "$status" -eq 3 ]
	[ ! -e "$T/o" ]
	$REF gen ci16 1001 27 "$T/y"
	head -c 2 /dev/zero >> "$T/y"
	run check -t ci16 -n 300 --hop 200 --pad "$T/y"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "rows 5 "* ]]
	$REF gen u8 999 28 "$T/u"
	run check -t u8 -n 100 --overlap 0.25 --pad "$T/u"
	echo "$output"
	[ "$status" -eq 0 ]
	# Without --pad the samples after the last whole frame are dropped.
	run check -t u8 -n 100 --overlap 0.25 "$T/u"
	[ "$status" -eq 0 ]
	[[ "$output" == "rows 12 "* ]]
}

@test "--pad fills with zero-valued samples (0x80 for u8 and cu8), as --help and the man page say: numpy with zeros appended" {
	# One cu8 sample (I = 255, Q = 128): padded to N = 4 with the sample
	# zero, every bin of the spectrum is the sample, 127/128.
	printf '\377\200' > "$T/one"
	"$F" --plan estimate -t cu8 -n 4 --pad --text "$T/one" > "$T/o"
	[ "$(cat "$T/o")" = "0.9921875,0,0.9921875,0,0.9921875,0,0.9921875,0" ]
	# A partial cu8 sample (its I only) and a partial frame, against
	# numpy on the centred values with zeros appended; u8 too.
	$REF gen cu8 1000 32 "$T/c"
	printf '\007' >> "$T/c"
	add -t cu8 -n 300 --hop 200 -w hann --pad "$T/c"
	$REF gen u8 999 33 "$T/u"
	add -t u8 -n 128 --pad --out power "$T/u"
	verify
	[[ "$output" == *"/o1: rows 5 "* ]]
	"$F" --help | grep -q -- "--pad .*with zero-valued samples (0x80 bytes for u8 and cu8, else zero bytes)"
	grep -q 'filled with zero\\-valued$' "$ROOT/man/accel-fft.1.in"
}

@test "bad options: unknown type, N < 2, bad window, exit 2 with one line and the help hint" {
	run "$F" -t cf16 /dev/null
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "accel-fft: --type: unknown sample type 'cf16' (one of cf32, ci16, ci8, cu8, f32, i16, u8, cf64, f64, i8, ci32, i32, ci24, i24, cf32_be, ci16_be, f32_be, i16_be, cf64_be, f64_be, ci32_be, i32_be; _le and SigMF's r of real types are accepted)" ]
	[ "${lines[1]}" = "Try 'accel-fft --help' for more information." ]
	run "$F" -n 1 /dev/null
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "accel-fft: --size: 1 is too small: a transform needs N >= 2" ]
	run "$F" -n 0x10 /dev/null
	[ "$status" -eq 2 ]
	run "$F" -w kaiser:-1 /dev/null
	[ "$status" -eq 2 ]
	run "$F" -w triangle /dev/null
	[ "$status" -eq 2 ]
	run "$F" -t f32 --shift /dev/null
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "accel-fft: --shift needs a full spectrum: complex input, --full or --inverse" ]
	run "$F" --overlap 1 /dev/null
	[ "$status" -eq 2 ]
	run "$F" a b
	[ "$status" -eq 2 ]
}

@test "NaN and infinity pass through: their frame's spectrum, not the others, and exit 0" {
	/usr/bin/python3 -c "
import numpy as np
x = np.ones(300, np.float32); x[150] = np.nan; x.tofile('$T/nan')"
	run check -t f32 -n 100 --out power "$T/nan"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "nan positions match"* ]]
	run /usr/bin/python3 -c "
import numpy as np
a = np.fromfile('$T/out', np.float32).reshape(3, 51)
assert np.isnan(a[1]).all() and not np.isnan(a[0]).any() and not np.isnan(a[2]).any()"
	[ "$status" -eq 0 ]
}

@test "empty input of unknown size writes nothing; a FILE shorter than a frame, an empty one too, is exit 2 (a pipe writes nothing); with --pad: one frame" {
	run "$F" -n 64 -o "$T/e" /dev/null
	[ "$status" -eq 0 ]
	[ -f "$T/e" ] && [ ! -s "$T/e" ]
	: > "$T/empty"
	run "$F" -n 64 -o "$T/e2" "$T/empty"
	[ "$status" -eq 2 ]
	[ "$output" = "accel-fft: $T/empty: 0 samples, fewer than one frame of N = 64: no row to write (--pad zero-pads them to one frame, as numpy.fft.fft(x, n=64) does)" ]
	[ ! -e "$T/e2" ]
	# --pad: one frame of zeros, as numpy.fft.fft(np.zeros(0), n=64) gives
	"$F" -n 64 --pad -o "$T/e3" "$T/empty"
	cmp "$T/e3" <(head -c 512 /dev/zero)
	: | "$F" -n 64 --pad | cmp - <(head -c 512 /dev/zero)
	$REF gen cf32 10 29 "$T/x"
	run "$F" -n 64 -o "$T/o" "$T/x"
	[ "$status" -eq 2 ]
	[ "$output" = "accel-fft: $T/x: 10 samples, fewer than one frame of N = 64: no row to write (--pad zero-pads them to one frame, as numpy.fft.fft(x, n=64) does)" ]
	[ ! -e "$T/o" ]
	# From a pipe the size is not known before the end.
	cat "$T/x" | "$F" -n 64 > "$T/o"
	[ ! -s "$T/o" ]
	run check -n 64 --pad "$T/x"
	[ "$status" -eq 0 ]
	[[ "$output" == "rows 1 "* ]]
	# A WAV's data size counts, not the file's.
	sox -n -r 8000 -b 16 -c 1 "$T/a.wav" synth 0.01 sine 440
	run "$F" -n 100 "$T/a.wav"
	[ "$status" -eq 2 ]
	[ "$output" = "accel-fft: $T/a.wav: 80 samples, fewer than one frame of N = 100: no row to write (--pad zero-pads them to one frame, as numpy.fft.fft(x, n=100) does)" ]
	# --inverse --real counts bins of half spectra.
	run "$F" -i --real -n 64 "$T/x"
	[ "$status" -eq 2 ]
	[ "$output" = "accel-fft: $T/x: 10 bins, fewer than the 33 of one half spectrum of N = 64: no row to write (--pad zero-pads them to one frame, as numpy.fft.irfft(x, n=64) does)" ]
}

@test "-n 2^30 on an 80 KB file is exit 2 at once, before the window or a plan of that size is made; with --pad, over the memory limit is exit 1" {
	head -c 80000 /dev/urandom > "$T/x"
	# Under 1 GB of address space: a 4 GiB window cannot be made.
	run bash -c "ulimit -v 1000000; '$F' -n 1073741824 -o '$T/o' '$T/x'"
	[ "$status" -eq 2 ]
	[ "$output" = "accel-fft: $T/x: 10000 samples, fewer than one frame of N = 1073741824: no row to write (--pad zero-pads them to one frame, as numpy.fft.fft(x, n=1073741824) does)" ]
	[ ! -e "$T/o" ]
	run bash -c "ulimit -v 1000000; '$F' -n 1073741824 --pad --memory 1G -o '$T/o' '$T/x'"
	[ "$status" -eq 1 ]
	[ "$output" = "accel-fft: N = 1073741824 needs 44.0 GiB (the window, one unit's samples and rows, an engine's transform buffers), more than the limit of 1.0 GiB (--memory or ACCEL_MEMORY)" ]
	ACCEL_MEMORY=2G run bash -c "ulimit -v 1000000; '$F' -t f32 -n 1073741824 --pad -o '$T/o' '$T/x'"
	[ "$status" -eq 1 ]
	[ "$output" = "accel-fft: N = 1073741824 needs 24.0 GiB (the window, one unit's samples and rows, an engine's transform buffers), more than the limit of 2.0 GiB (--memory or ACCEL_MEMORY)" ]
	[ ! -e "$T/o" ]
	run "$F" --memory 1000K "$T/x"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "accel-fft: --memory: '1000K' is not a size of 1M or more" ]
}

@test "--memory shrinks units to fit, and refuses a job whose one frame does not fit" {
	$REF gen cf32 100000 31 "$T/x"
	add -n 1024 -w hann --overlap 0.5 --out db --average 3 --memory 1M "$T/x"
	add -n 4096 --out power --average 100 --memory 1M "$T/x"
	verify
	# Units of at most 1 MiB: more of them than the 4 MiB a unit holds
	# without the cap.
	run "$F" -v --plan estimate -n 1024 --memory 1M -o /dev/null "$T/x"
	[[ "$output" == *"memory cap 1.0 MiB"* ]]
	[[ "$output" == *"accel-fft: $T/x: "[3-9]" units, "* ]]
	run "$F" --plan estimate -n 65536 --memory 1M "$T/x"
	[ "$status" -eq 1 ]
	[[ "$output" == "accel-fft: N = 65536 needs 2."*" MiB "*"more than the limit of 1.0 MiB (--memory or ACCEL_MEMORY)" ]]
}

@test "-o FILE is complete or absent; an existing FILE needs -f; binary is not written to a terminal" {
	$REF gen cf32 1000 30 "$T/x"
	: > "$T/exists"
	run "$F" -n 100 -o "$T/exists" "$T/x"
	[ "$status" -eq 1 ]
	[ "$output" = "accel-fft: $T/exists already exists; use -f to overwrite it" ]
	run "$F" -n 100 -o "$T/new" "$T/missing"
	[ "$status" -eq 1 ]
	[ ! -e "$T/new" ]
}

@test "the route names fftw:cpu0; -b fftw forces it; -b cpu means it (the CPU device's FFT engine)" {
	$REF gen cf32 4000 31 "$T/x"
	"$F" -v -n 100 "$T/x" 2> "$T/log" > /dev/null
	grep -q "^  1\. fftw:cpu0 " "$T/log"
	grep -q "^route for fft.c2c " "$T/log"
	"$F" -v -t f32 -n 100 "$T/x" 2> "$T/log" > /dev/null
	grep -q "^route for fft.r2c " "$T/log"
	"$F" --plan estimate -b fftw -n 100 "$T/x" > "$T/a"
	"$F" --plan estimate -b fftw:cpu0 -T 1 -n 100 "$T/x" > "$T/b"
	cmp "$T/a" "$T/b"
	"$F" --plan estimate -v -b cpu -n 100 "$T/x" > "$T/c" 2> "$T/log"
	cmp "$T/a" "$T/c"
	grep -qx "  1\. fftw:cpu0        named by --backend (cpu: the CPU device's engine for fft.c2c)" "$T/log"
	grep -q "^  fftw:cpu0 *workers [0-9]*, units 1, " "$T/log"
}

@test "an input of one unit runs on the calling thread unless -T above 1 is given: the same bytes" {
	$REF gen f32 4096 36 "$T/x"
	"$F" --plan estimate -v -t f32 -n 1024 -w hann "$T/x" > "$T/a" 2> "$T/log"
	grep -q "^  fftw:cpu0 *workers 1, units 1, " "$T/log"
	grep -q "no memory cap$" "$T/log"
	"$F" --plan estimate -v -T 1 -t f32 -n 1024 -w hann "$T/x" > "$T/b" 2> "$T/log"
	grep -q "^  fftw:cpu0 *workers 1, units 1, " "$T/log"
	cmp "$T/a" "$T/b"
	"$F" --plan estimate -v -T 2 -t f32 -n 1024 -w hann "$T/x" > "$T/b" 2> "$T/log"
	grep -q "^  fftw:cpu0 *workers 2, units 1, " "$T/log"
	grep -q "memory cap [0-9.]* MiB$" "$T/log"
	cmp "$T/a" "$T/b"
	# From a pipe the size is not known: worker threads (and their
	# memory cap), as before.
	cat "$T/x" | "$F" --plan estimate -v -t f32 -n 1024 -w hann > "$T/b" 2> "$T/log"
	grep -q "memory cap [0-9.]* MiB$" "$T/log"
	cmp "$T/a" "$T/b"
	# Two channels make two units a stretch: worker threads.
	"$F" --plan estimate -v -t f32 --channels 2 -n 512 "$T/x" > /dev/null 2> "$T/log"
	grep -q "memory cap [0-9.]* MiB$" "$T/log"
}

@test "co-execution: -b fftw+vkfft.opencl:ID serves one stream with both engines; the output matches fftw's" {
	[ -f "$ROOT/build/plugins/accel_vkfft.so" ] || skip "the vkfft plugin is not built (libvkfft-dev)"
	local e
	e=$(engine vkfft.opencl)
	[ -n "$e" ] || skip "no OpenCL device for VkFFT"
	$REF gen cf32 $((3 << 20)) 35 "$T/x"
	"$F" --plan estimate -b fftw -n 1024 --out db -o "$T/a" "$T/x"
	"$F" --plan estimate -v -b "fftw+$e" -n 1024 --out db -o "$T/b" "$T/x" 2> "$T/log"
	cat "$T/log"
	grep -q "^route for fft.c2c (--backend):" "$T/log"
	grep -q "^  1\. fftw:cpu0 *named by --backend$" "$T/log"
	grep -q "^  2\. $e *named by --backend (software device)$" "$T/log"
	# Both engines took units from the one queue (6 units of 4 MiB).
	grep -q "^  fftw:cpu0 *workers [0-9]*, units [1-9][0-9]*, " "$T/log"
	grep -q "^  $e *workers [0-9]*, units [1-9][0-9]*, " "$T/log"
	[ "$(stat -c %s "$T/a")" -eq "$(stat -c %s "$T/b")" ]
	run /usr/bin/python3 -c "
import numpy as np, sys
a = 10 ** (np.fromfile('$T/a', '<f4').astype(float) / 10); b = 10 ** (np.fromfile('$T/b', '<f4').astype(float) / 10)
e = np.linalg.norm(a - b) / np.linalg.norm(a); print(e); sys.exit(1 if e > 1e-5 else 0)"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "--out db -n 1024 $T/x $T/b" > "$T/list"
	run $REF checks "$T/list"
	[ "$status" -eq 0 ]
	# "+" and "," are the same list; cpu is fftw here.
	"$F" --plan estimate -v -b "cpu,$e" -n 1024 --out db -o "$T/c" "$T/x" 2> "$T/log"
	grep -q "^  2\. $e " "$T/log"
	run "$F" -b fftw++vkfft -n 1024 "$T/x"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "accel-fft: --backend: empty item in 'fftw++vkfft'" ]
}

@test "the output is the same bytes whatever the threads and unit layout" {
	$REF gen cf32 $((1000 * 300)) 32 "$T/x"
	"$F" --plan estimate -T 1 -n 1000 --overlap 0.3 --out db "$T/x" > "$T/a"
	"$F" --plan estimate -T 2 -n 1000 --overlap 0.3 --out db "$T/x" > "$T/b"
	cat "$T/x" | "$F" --plan estimate -T 2 -n 1000 --overlap 0.3 --out db > "$T/c"
	cmp "$T/a" "$T/b"
	cmp "$T/a" "$T/c"
	# A file is mapped, a pipe read: rows split over units with frames of
	# dropped rows skipped, and a padded last unit, the same both ways.
	"$F" --plan estimate -n 1000 --overlap 0.5 --out power --average 30 --decimate 2 --memory 1M "$T/x" > "$T/d"
	cat "$T/x" | "$F" --plan estimate -n 1000 --overlap 0.5 --out power --average 30 --decimate 2 --memory 1M > "$T/e"
	cmp "$T/d" "$T/e"
	head -c 1234567 "$T/x" > "$T/y"
	"$F" --plan estimate -n 1000 --overlap 0.3 --pad "$T/y" > "$T/d"
	cat "$T/y" | "$F" --plan estimate -n 1000 --overlap 0.3 --pad > "$T/e"
	cmp "$T/d" "$T/e"
	# c2r's units cut into stretches of whole batches (a short last one),
	# mapped or read, on one worker or two.
	head -c 1234560 "$T/x" > "$T/y"
	"$F" --plan estimate -T 1 -i --real -n 1000 "$T/y" > "$T/d"
	cat "$T/y" | "$F" --plan estimate -T 2 -i --real -n 1000 > "$T/e"
	cmp "$T/d" "$T/e"
	[ "$(stat -c %s "$T/d")" -eq $((1234560 / 8 / 501 * 1000 * 4)) ]
}

@test "-o FILE: rows each worker wrote at their place are the bytes written in order to a pipe (every layout)" {
	$REF gen cf32 $((1000 * 300)) 32 "$T/x"
	head -c 1234560 "$T/x" > "$T/y"
	for opts in "-n 1000" "-t f32 -n 1024 --hop 300" "-n 1000 --overlap 0.5 --out power --average 30" \
		"-n 512 --out db --average 7 --npy" "-i --real -n 1000" "-i --real -n 1000 --npy" "-n 1000 --pad"; do
		for in in "$T/x" "$T/y"; do
			# shellcheck disable=SC2086
			"$F" --plan estimate -T 2 $opts "$in" | cat > "$T/piped"
			# shellcheck disable=SC2086
			"$F" --plan estimate -T 2 $opts -f -o "$T/placed" "$in"
			cmp "$T/piped" "$T/placed"
		done
	done
}

@test "an engine failing a unit (ACCEL_FAULT) with no engine to retry on: exit 1, one line, no -o file" {
	$REF gen cf32 $((1 << 20)) 33 "$T/x"
	run env ACCEL_FAULT='fftw:1' "$F" --plan estimate -n 1024 --fallback none -o "$T/o" "$T/x"
	[ "$status" -eq 1 ]
	[ "$output" = "accel-fft: $T/x: fftw:cpu0: unit 1 (byte offset 262144) failed: injected fault (ACCEL_FAULT); --fallback none" ]
	[ ! -e "$T/o" ]
	# c2r's units (1022 frames of N/2+1 bins, no whole number of 32-frame
	# batches) are cut into stretches of whole batches: unit 1 starts 64
	# frames of 513 cf32 in.
	run env ACCEL_FAULT='fftw:1' "$F" --plan estimate -i --real -n 1024 --fallback none -o "$T/o" "$T/x"
	[ "$status" -eq 1 ]
	[ "$output" = "accel-fft: $T/x: fftw:cpu0: unit 1 (byte offset 262656) failed: injected fault (ACCEL_FAULT); --fallback none" ]
	run env ACCEL_FAULT='fftw:*' "$F" --plan estimate -n 1024 -o "$T/o" "$T/x"
	[ "$status" -eq 1 ]
	[ ! -e "$T/o" ]
}

@test "samples transformed where they were read (cf32, f32) give the bytes of converted ones (cf64, f64)" {
	# cf32 and f32 with no window, hop N and no --decimate skip the
	# conversion; the same values as cf64 and f64 go through it. Less than
	# a unit (4 MiB) of cf64 and f64, so both split into the same batches
	# (a short batch runs a one-frame plan, whose last bits may differ).
	$REF gen cf32 250000 34 "$T/x"
	/usr/bin/python3 -c 'import numpy as np, sys; np.fromfile(sys.argv[1], "<f4").astype("<f8").tofile(sys.argv[2])' "$T/x" "$T/x64"
	for o in "-n 1000 --norm ortho" "-n 65537" "-n 4096 --inverse" "-n 256 --npy"; do
		"$F" --plan estimate $o -t cf32 "$T/x" > "$T/a"
		"$F" --plan estimate $o -t cf64 "$T/x64" > "$T/b"
		cmp "$T/a" "$T/b"
	done
	for o in "-n 999" "-n 1024 --norm forward" "-n 65537 --out db --pad"; do
		"$F" --plan estimate $o -t f32 "$T/x" > "$T/a"
		"$F" --plan estimate $o -t f64 "$T/x64" > "$T/b"
		cmp "$T/a" "$T/b"
	done
}
