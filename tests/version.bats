#!/usr/bin/env bats
# --version (libcore/version.c): the line "PROG VERSION" that scripts read,
# unchanged, then one line "NAME VERSION [(NOTE)]" (or "NAME (WHY NOT)")
# per library the program uses, the versions those libraries tell at run
# time, equal to what their own tools say.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	B="$ROOT/build"
	VERSION=$(sed -n 's/^VERSION := //p' "$ROOT/Makefile")
}

# names PROG [ARGS]: the library names its --version lists, one a line.
names() {
	"$@" --version | tail -n +2 | cut -d' ' -f1
}

# version PROG NAME: the version its --version gives library NAME.
version() {
	"$1" --version | awk -v n="$2" '$1 == n { print $2 }'
}

@test "--version: the first line is PROG VERSION, every other one NAME VERSION or NAME (NOTE), none twice" {
	for p in accel-compress accel-crypt accel-detect accel-fft accel-infer accel-transcode accel-bench; do
		run --separate-stderr "$B/$p" --version
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[ "${lines[0]}" = "$p $VERSION" ]
		[ "${#lines[@]}" -ge 2 ]
		for l in "${lines[@]:1}"; do
			[[ "$l" =~ ^[a-z][a-z0-9-]*\ ([^\ \(]+(\ \(.+\))?|\(.+\))$ ]] || { echo "$p: bad line '$l'"; false; }
		done
		[ -z "$(printf '%s\n' "${lines[@]:1}" | cut -d' ' -f1 | sort | uniq -d)" ]
		# -V says the same.
		[ "$("$B/$p" -V)" = "$output" ]
	done
}

@test "--version: accel-compress lists its codecs' libraries, zstd and lz4 as their own tools say" {
	[ "$(names "$B/accel-compress" | tr '\n' ' ')" = "zstd lz4 xxhash isa-l libdeflate hwloc cjson " ]
	run version "$B/accel-compress" xxhash
	[ "$output" = "$(dpkg-query -W -f '${Version}' libxxhash0 | cut -d- -f1)" ]
	run version "$B/accel-compress" zstd
	[ "$output" = "$(zstd --version | sed -n 's/.* v\([0-9.]*\),.*/\1/p')" ]
	run version "$B/accel-compress" lz4
	[ "$output" = "$(lz4 --version | sed -n 's/.* v\([0-9.]*\),.*/\1/p')" ]
	run version "$B/accel-compress" cjson
	[ "$output" = "$(pkg-config --modversion libcjson)" ]
	# ISA-L tells no version at run time, hwloc only its API's: both say so.
	"$B/accel-compress" --version | grep -qx "isa-l $(pkg-config --modversion libisal) (build)"
	"$B/accel-compress" --version | grep -qx "hwloc $(hwloc-info --version | cut -d' ' -f2) (build; API [0-9.]* at run time)"
}

@test "--version: accel-crypt and its subcommands list OpenSSL as openssl version says it" {
	want=$(openssl version | cut -d' ' -f2)
	for sub in "" hash keygen sign verify; do
		[ "$("$B/accel-crypt" $sub --version | awk '$1 == "openssl" { print $2 }')" = "$want" ]
	done
	[ "$("$B/accel-crypt" hash --version | head -1)" = "accel-crypt hash $VERSION" ]
}

@test "--version: accel-transcode and accel-infer list the FFmpeg they link, as ffmpeg -version says it" {
	want=$(ffmpeg -version | sed -n '1s/^ffmpeg version \([^ ]*\).*/\1/p')
	[ "$(version "$B/accel-transcode" ffmpeg)" = "$want" ]
	for lib in libavformat libavfilter libavcodec libswscale libavutil; do
		# "libavutil      57. 28.100 / 57. 28.100": built with / runs with.
		v=$(ffmpeg -version | awk -v n="$lib" '$1 == n { sub(/.*\/ */, ""); gsub(/ /, ""); print }')
		[ "$(version "$B/accel-transcode" "$lib")" = "$v" ]
	done
	names "$B/accel-infer" | grep -qx libavcodec || skip "accel-infer built without FFmpeg"
	[ "$(version "$B/accel-infer" ffmpeg)" = "$want" ]
}

@test "--version: accel-bench lists the codecs' libraries and every plugin's" {
	names "$B/accel-bench" > "$BATS_TEST_TMPDIR/bench"
	for lib in zstd lz4 xxhash isa-l libdeflate hwloc cjson; do
		grep -qx "$lib" "$BATS_TEST_TMPDIR/bench"
	done
	[ ! -e "$B/plugins/accel_fftw.so" ] || grep -qx fftw "$BATS_TEST_TMPDIR/bench"
	[ ! -e "$B/plugins/accel_openssl.so" ] || grep -qx openssl "$BATS_TEST_TMPDIR/bench"
}

@test "--version: a plugin's library by its plugin (fftw, onnxruntime), loaded only for its version" {
	[ -e "$B/plugins/accel_fftw.so" ] || skip "no fftw plugin"
	[ "$(names "$B/accel-fft" | head -1)" = fftw ]
	[[ "$(version "$B/accel-fft" fftw)" == "$(pkg-config --modversion fftw3f)"* ]]
	[ -e "$B/plugins/accel_onnxruntime.so" ] || skip "no onnxruntime plugin"
	run version "$B/accel-infer" onnxruntime
	[[ "$output" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]
	# accel-detect lists every plugin's.
	names "$B/accel-detect" | grep -qx fftw
	names "$B/accel-detect" | grep -qx onnxruntime
}

@test "--version: a plugin whose library cannot be loaded says why in its line, and --version still succeeds" {
	[ -e "$B/plugins/accel_onnxruntime.so" ] || skip "no onnxruntime plugin"
	ACCEL_ONNXRUNTIME_LIB=/nonexistent/libonnxruntime.so.1 run --separate-stderr "$B/accel-infer" --version
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "${lines[@]}" | grep -qx 'onnxruntime (cannot load libonnxruntime.so.1: /nonexistent/libonnxruntime.so.1: cannot open shared object file: No such file or directory)'
}
