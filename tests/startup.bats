#!/usr/bin/env bats
# What a program maps at start. The plugins' tables are read from the
# plugin manifest, and a plugin is loaded only when it is probed; a plugin
# links no library heavier than libaccel's own (accel(7), PLUGINS): what
# its engines run on is loaded by its probe, and a backend is probed only
# for an operation it offers. So accel-compress on one byte
# opens no OpenCV, ONNX Runtime, OpenCL or Vulkan loader, glslang (in the
# companion vkfft/vulkan.so), FFTW, OpenSSL, FFmpeg or libpcap. Libraries
# only some inputs need are loaded with dlopen when one comes: FFmpeg and
# Leptonica in accel-infer (an image, --decode db), hwloc in libaccel (a
# CPU topology). Each run is traced with strace (the shared objects it
# opens; the manifest opens each plugin to read its build-id) or the
# dynamic loader's trace (the plugins it maps).

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	B="$ROOT/build"
	command -v strace >/dev/null || skip "no strace (make deps installs it)"
	export XDG_CACHE_HOME="$BATS_TEST_TMPDIR/cache"
	cd "$BATS_TEST_TMPDIR"
}

# The libraries of backends, and the plugins' companion objects.
HEAVY='/(libopencv|libonnxruntime|libOpenCL|libvulkan|libglslang|libfftw3|libcrypto|libavcodec|libavutil|libpcap|libstdc\+\+)[^/]*$|/plugins/[a-z]+/[a-z]+\.so$'

# opened CMD...: run CMD (stdin as given) under strace; opened.txt gets the
# shared objects it opened, one a line.
opened() {
	strace -f -qq -e trace=openat,open -o trace.log "$@"
	grep -v ENOENT trace.log | grep -oE '"[^"]+\.so(\.[0-9]+)*"' | tr -d '"' | sort -u > opened.txt
}

@test "accel-compress on one byte opens no library of a backend" {
	printf x | opened "$B/accel-compress" -c > x.zst
	[ "$(zstd -dc x.zst)" = x ]
	grep -q '/libzstd\.so' opened.txt
	run -1 grep -E "$HEAVY" opened.txt
	printf x | opened "$B/accel-compress" -c --format gzip > x.gz
	[ "$(gzip -dc x.gz)" = x ]
	run -1 grep -E "$HEAVY" opened.txt
}

@test "accel-crypt hash on one byte opens OpenSSL, no other backend's library" {
	printf x | opened "$B/accel-crypt" hash > sum
	[ "$(cat sum)" = "$(printf x | sha256sum)" ]
	grep -q '/libcrypto\.so' opened.txt
	run -1 grep -E "$HEAVY" <(grep -v -e '/libcrypto\.so' -e '/plugins/openssl/crypto\.so$' opened.txt)
}

@test "accel-fft on one 8-point frame opens FFTW, no device API or other backend's library" {
	head -c 64 /dev/zero > in.cf32
	opened "$B/accel-fft" -n 8 in.cf32 > out.cf32
	[ "$(stat -c %s out.cf32)" = 64 ]
	grep -q '/libfftw3f\.so' opened.txt
	run -1 grep -E "$HEAVY" <(grep -v '/libfftw3f\.so' opened.txt)
}

# FFmpeg's libraries and Leptonica (with the image libraries they link).
MEDIA='/(libavformat|libavcodec|libavutil|libswscale|liblept|libleptonica|libdav1d|libx264|libpng16|libjpeg)[^/]*$'

@test "accel-infer --help, a usage error and a .npy run open no FFmpeg or Leptonica; an image opens FFmpeg" {
	opened "$B/accel-infer" --help > help.txt
	grep -q -- '--decode' help.txt
	run -1 grep -E "$MEDIA|$HEAVY" opened.txt
	opened "$B/accel-infer" < /dev/null 2> err.txt || :
	grep -qx 'accel-infer: no model: give -m MODEL.onnx' err.txt
	run -1 grep -E "$MEDIA|$HEAVY" opened.txt
	# --version lists FFmpeg's and Leptonica's versions: it loads them.
	opened "$B/accel-infer" --version > v.txt
	if grep -q '^libavcodec ' v.txt; then grep -q '/libavcodec\.so' opened.txt; fi
	if grep -q '^leptonica ' v.txt; then grep -qE '/lib(lept|leptonica)\.so' opened.txt; fi
	[ -f "$B/plugins/accel_onnxruntime.so" ] || skip "no onnxruntime plugin"
	/usr/bin/python3 -c 'import onnx, numpy' 2> /dev/null || skip "no python3-onnx, python3-numpy"
	/usr/bin/python3 "$ROOT/tests/infer/models.py" . >&2
	/usr/bin/python3 -c 'import numpy as np; np.save("in.npy", np.ones((1, 4), "f4"))'
	opened "$B/accel-infer" -m lin.onnx in.npy > out.npy
	[ -s out.npy ]
	grep -q '/libonnxruntime\.so' opened.txt
	run -1 grep -E "$MEDIA" opened.txt
	grep -q '^libavcodec ' v.txt || skip "accel-infer built without FFmpeg"
	printf '\377\000\000\000\377\000\000\000\377\012\024\036' |
		ffmpeg -loglevel error -f rawvideo -pix_fmt rgb24 -s 2x2 -i - -frames:v 1 -y p.png
	opened "$B/accel-infer" -m img.onnx p.png > img.npy
	[ -s img.npy ]
	grep -q '/libavcodec\.so' opened.txt
}

@test "accel-infer under auto starts no OpenCL or Vulkan driver where only software devices can be, nor OpenCV where ONNX Runtime runs every batch; named, OpenCV loads and its OpenCL is scanned" {
	[ -f "$B/plugins/accel_onnxruntime.so" ] && [ -f "$B/plugins/accel_opencv.so" ] || skip "no onnxruntime or opencv plugin"
	/usr/bin/python3 -c 'import onnx, numpy' 2> /dev/null || skip "no python3-onnx, python3-numpy"
	# The rule the FFT's GPU backends follow too: this machine holds no GPU or NPU.
	head -c 64 /dev/zero | "$B/accel-fft" -n 8 -v 2> fft.log > /dev/null
	grep -q 'not probed: no GPU or NPU on this machine' fft.log || skip "this machine may hold a GPU or NPU"
	/usr/bin/python3 "$ROOT/tests/infer/models.py" . >&2
	/usr/bin/python3 -c 'import numpy as np; np.save("in.npy", np.ones((1, 4), "f4"))'
	opened "$B/accel-infer" -m lin.onnx -v in.npy 2> log > out.npy
	[ -s out.npy ]
	# OpenCV's CPU engine is on the route (the fallback), its OpenCL not
	# started: no PoCL, no LLVM, no GPU discovery through Vulkan; nor
	# OpenCV itself, loaded where its engine is used (with it the OpenCL
	# ICD loader and X11's libraries).
	grep -q '^  2\. opencv:cpu0 .*; checked when first used$' log
	run -1 grep -E '/lib(opencv_[a-z]+|OpenCL|X11|vulkan|pocl|LLVM)[^/]*$' opened.txt
	# Used, it is loaded: named, or as the fallback of a failing engine.
	opened "$B/accel-infer" -m lin.onnx -b opencv:cpu0 in.npy > out2.npy
	cmp out.npy out2.npy || /usr/bin/python3 "$ROOT/tests/infer/npy.py" check lin in.npy out2.npy
	grep -q '/libopencv_dnn\.so' opened.txt
	ACCEL_FAULT='onnxruntime:*' opened "$B/accel-infer" -m lin.onnx --fallback next in.npy > out3.npy
	grep -q '/libopencv_dnn\.so' opened.txt
	run -1 grep -E '/lib(vulkan|pocl|LLVM)[^/]*$' opened.txt
	# accel-detect, and a route that names opencv, scan OpenCL: PoCL's
	# device, a software device, is listed there.
	if "$B/accel-detect" --routes onnx.run | grep -q 'opencv\.opencl:'; then
		opened "$B/accel-infer" -m lin.onnx -b opencv -v in.npy 2> log > out.npy || :
		grep -q '/libpocl\.so' opened.txt
		grep -q 'opencv\.opencl:[a-z0-9]* *left out: software device' log
	fi
}

@test "libaccel links no hwloc: accel-compress on one byte opens none; an inventory and --version load it" {
	command -v readelf >/dev/null || skip "no readelf (binutils)"
	run -1 grep -q 'libhwloc' <(readelf -d "$B/lib/libaccel.so" | grep NEEDED)
	printf x | opened "$B/accel-compress" -c > x.zst
	run -1 grep -E '/lib(hwloc|udev)\.so' opened.txt
	opened "$B/accel-detect" --class cpu --json > d.json
	grep -q '/libhwloc\.so' opened.txt
	jq -e '.devices[] | select(.id == "cpu0") | .cpu.threads >= 1' d.json
	opened "$B/accel-compress" --version > v.txt
	grep -q '^hwloc [0-9]' v.txt
	grep -q '/libhwloc\.so' opened.txt
}

# touched CMD...: like opened, the files under /sys and the OpenSSL
# provider modules it opened into touched.txt.
touched() {
	strace -f -qq -e trace=openat,open -o trace.log "$@"
	grep -v ENOENT trace.log | grep -oE '"(/sys/[^"]*|[^"]*/ossl-modules/[^"]+)"' | tr -d '"' | sort -u > touched.txt
}

@test "a route on the CPU reads no CPU topology, PCI bus or OpenSSL provider; a report still lists them" {
	command -v age-keygen >/dev/null || skip "no age"
	age-keygen -o key.txt 2> /dev/null
	REC=$(age-keygen -y key.txt)
	printf x | touched "$B/accel-crypt" -r "$REC" > x.age
	[ "$(age -d -i key.txt x.age)" = x ]
	# hwloc's topology, the qat backend's PCI scan (started by a
	# provider device), a provider loaded to be described.
	run -1 grep -E '^/sys/(devices/system/cpu/cpu[0-9]+/topology|bus/pci/devices/)|/ossl-modules/' touched.txt
	printf x | touched "$B/accel-compress" -c > x.zst
	run -1 grep -E '^/sys/devices/system/cpu/cpu[0-9]+/(topology|cache)/' touched.txt
	# --json: the CPU device with its topology, as before.
	printf x | "$B/accel-crypt" -r "$REC" --json 2> report.json > /dev/null
	jq -e '.devices[] | select(.id == "cpu0") | .cpu.threads >= 1 and .cpu.cores >= 1' report.json
	# A route first, then an inventory in one process: the backends the
	# route probed in part are probed again, in full.
	"$B/accel-detect" --json > all.json
	"$B/accel-detect" --routes --json sha256 zstd.compress > routes.json
	jq -e --slurpfile all all.json '[.devices[].id] == [$all[0].devices[].id]' routes.json
	jq -e '[.devices[] | select(.class == "crypto" and .driver == "default")] | length == 1' routes.json
	jq -e '.devices[] | select(.id == "cpu0") | .cpu.threads >= 1' routes.json
}

@test "accel-detect --class cpu opens no library of a backend, and still lists every plugin" {
	opened "$B/accel-detect" --class cpu --json > d.json
	jq -e '[.devices[].id] == ["cpu0"]' d.json
	run -1 grep -E "$HEAVY" opened.txt
	# The plugins are listed from the manifest, none of them loaded (each
	# is read for its build-id, which the manifest checks, but not mapped:
	# the dynamic loader's trace names none).
	LD_DEBUG=files LD_DEBUG_OUTPUT="$PWD/ld" "$B/accel-detect" --class cpu --json > /dev/null
	cat ld.* > loaded.txt
	for p in "$B"/plugins/accel_*.so; do
		n=${p##*/accel_}
		run -1 grep -qF "file=$p " loaded.txt
		jq -e --arg n "${n%.so}" '[.probes[] | select(.name == $n)] | length == 1' d.json
	done
}

@test "no plugin links a library beyond libaccel, the C library and libcjson" {
	command -v readelf >/dev/null || skip "no readelf (binutils)"
	for p in "$B"/plugins/accel_*.so; do
		readelf -d "$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' > needed
		run -1 grep -vE '^(libaccel\.so\.0|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux[-a-z0-9_.]*\.so\.[0-9]+|libcjson\.so\.1)$' needed
	done
}
