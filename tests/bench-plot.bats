#!/usr/bin/env bats
# accel-bench --plot: gnuplot draws an SVG or PNG that file(1) recognises,
# from the cases measured (their engines in the key, their operations as
# the titles, their sizes as the tics); an existing FILE is kept without
# -f; a suffix other than .svg or .png is a usage error; a missing or
# failing gnuplot is one line, the table still printed, no FILE left.
# Timings are never asserted; every run is one 64K run.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-bench"
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$TMPDIR"
	cd "$BATS_TEST_TMPDIR"
	RUN=(--repeat 1 --warmup 0 --size 64K)
}

# The texts of an SVG, one a line.
texts() {
	grep -o '>[^<>]*</text>' "$1" | sed 's/^>//; s/<\/text>$//'
}

@test "--plot x.svg: an SVG drawn from the cases: each engine in the key, the one operation the only title" {
	[ "$("$A" --list -b cpu,openssl sha256)" = "sha256           cpu, openssl" ] || skip "no cpu and openssl engines for sha256 here"
	run -0 "$A" -q "${RUN[@]}" -b cpu,openssl --plot x.svg sha256
	[ -z "$output" ]
	run -0 file -b x.svg
	[[ "$output" == "SVG Scalable Vector Graphics image"* ]]
	texts x.svg > texts
	grep -qx cpu texts
	grep -qx openssl texts
	"$A" --list | cut -d' ' -f1 > ops
	[ "$(grep -Fxf ops texts)" = sha256 ]
	grep -qx 64K texts
	[ -z "$(grep -x 128K texts)" ]
	[ -z "$(grep 'vs sha256sum' texts)" ]
	rm ops
	[ "$(ls -A)" = "$(printf 'texts\ntmp\nx.svg')" ]
	[ -z "$(ls -A tmp)" ]
}

@test "--plot: a panel per operation measured, a tic per size, and with --vs a bar per case against its peer" {
	run -0 "$A" -q --repeat 1 --warmup 0 --size 64K,128K -b openssl --vs --plot x.svg sha256 md5
	texts x.svg > texts
	"$A" --list | cut -d' ' -f1 > ops
	[ "$(grep -Fxf ops texts)" = "$(printf 'sha256\nmd5')" ]
	grep -qx openssl texts
	grep -qx 64K texts
	grep -qx 128K texts
	grep -qx 'sha256 64K vs sha256sum' texts
	grep -qx 'sha256 128K vs sha256sum' texts
	grep -qx 'md5 64K vs md5sum' texts
	grep -qx 'md5 128K vs md5sum' texts
	[ "$(grep -c '^[0-9.]*x$' texts)" -eq 4 ]
}

@test "--plot x.png: a PNG image; .SVG and .PNG in capitals too" {
	run -0 "$A" -q "${RUN[@]}" --plot x.png sha256
	run -0 file -b x.png
	[[ "$output" == "PNG image data"* ]]
	run -0 "$A" -q "${RUN[@]}" --plot X.PNG sha256
	run -0 file -b X.PNG
	[[ "$output" == "PNG image data"* ]]
	run -0 "$A" -q "${RUN[@]}" --plot X.SVG sha256
	run -0 file -b X.SVG
	[[ "$output" == "SVG Scalable Vector Graphics image"* ]]
}

@test "--plot: an existing FILE is refused before measuring, and replaced with -f" {
	echo old > x.svg
	run -1 --separate-stderr "$A" "${RUN[@]}" --plot x.svg sha256
	[ "$stderr" = "accel-bench: x.svg already exists; use -f to overwrite it" ]
	[ -z "$output" ]
	[ "$(cat x.svg)" = old ]
	run -0 "$A" -q "${RUN[@]}" -f --plot x.svg sha256
	run -0 file -b x.svg
	[[ "$output" == "SVG Scalable Vector Graphics image"* ]]
}

@test "--plot: a suffix other than .svg or .png is a usage error" {
	for f in x.jpg x.pdf x svg x.svg/; do
		run -2 --separate-stderr "$A" "${RUN[@]}" --plot "$f" sha256
		[ "${stderr_lines[0]}" = "accel-bench: --plot: '$f' does not end in .svg or .png" ]
		[ -z "$output" ]
	done
	[ -z "$(ls -A tmp)" ]
	[ ! -e x.jpg ] && [ ! -e x ]
}

@test "--plot without gnuplot on PATH: one line, the table printed, exit 1, no FILE" {
	run -1 --separate-stderr env PATH=/nonexistent "$A" "${RUN[@]}" --plot x.svg sha256
	[ "$stderr" = "accel-bench: cannot draw x.svg: gnuplot is not on PATH (Debian package gnuplot-nox)" ]
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == "OPERATION "* ]]
	[[ "${lines[1]}" == "sha256 "* ]]
	[[ "${lines[2]}" == "ceiling: memcpy "* ]]
	[ ! -e x.svg ]
	[ -z "$(ls -A | grep 'x\.svg')" ]
	[ -z "$(ls -A tmp)" ]
}

@test "--plot: gnuplot failing: its messages in the one line, its partial image not left" {
	mkdir bin
	cat > bin/gnuplot <<'EOF'
#!/bin/sh
[ "$1" = -d ] && [ -f "$2" ] || exit 9
echo '<svg partial'
printf '\n         line 7: undefined   variable: x\n\n' >&2
exit 1
EOF
	chmod +x bin/gnuplot
	run -1 --separate-stderr env PATH="$PWD/bin:$PATH" "$A" -q "${RUN[@]}" --plot x.svg sha256
	[ "$stderr" = "accel-bench: cannot draw x.svg: gnuplot exited with status 1: line 7: undefined variable: x" ]
	[ -z "$output" ]
	[ -z "$(ls -A | grep 'x\.svg')" ]
	[ -z "$(ls -A tmp)" ]
}

@test "--plot: the size axis is logarithmic when the sizes span more than a decade" {
	mkdir bin
	# a gnuplot that keeps the script it is given, then draws it
	printf '#!/bin/sh\ncp "$2" "%s/script.gp" && exec %s "$@"\n' "$PWD" "$(command -v gnuplot)" > bin/gnuplot
	chmod +x bin/gnuplot
	run -0 env PATH="$PWD/bin:$PATH" "$A" -q --repeat 1 --warmup 0 --size 4K,64K --plot a.svg sha256
	grep -qx 'set logscale x' script.gp
	[ -z "$(grep -x 'unset logscale x' script.gp)" ]
	run -0 env PATH="$PWD/bin:$PATH" "$A" -q --repeat 1 --warmup 0 --size 64K,128K --plot b.svg sha256
	grep -qx 'unset logscale x' script.gp
	[ -z "$(grep -x 'set logscale x' script.gp)" ]
	run -0 file -b b.svg
	[[ "$output" == "SVG Scalable Vector Graphics image"* ]]
}
