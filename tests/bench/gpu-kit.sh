#!/bin/sh
# Pack a built tree for a GPU machine that has none of our Debian packages
# and no network (an NVIDIA image with CUDA and Python, such as the lent
# device machines): run here after `make`, carry DIR (default .dev, which
# .git/info/exclude should list) to that machine beside the tree, and there
# from the repository root:
#   . DIR/setup.sh && bash tests/bench/gpu.sh
# DIR holds:
#   build/    the programs, libaccel, the plugins but onnxruntime (unless
#             ORT=1), ffmpeg and opencv (their libraries are large), their
#             manifest made again, accel-bench-fftw, the test drivers of
#             make tests (tests/fft-inprocess); copied to build/ there
#             (RUNPATHs are relative);
#   syslib/   the libraries those link or dlopen, less glibc's, put first on
#             LD_LIBRARY_PATH there only where ldconfig lacks them (the
#             image's own LD_LIBRARY_PATH, which names the driver, is kept);
#   tools/    the peers: zstd, lz4, age, age-keygen, igzip, pigz;
#   debs/     bats, jq, and the Vulkan and GL loaders that NVIDIA's Vulkan
#             driver needs (without them vkfft.vulkan finds no device),
#             unpacked into / there (apt-get download);
#   setup.sh  the above, NVIDIA's Vulkan ICD file and OpenCL ICD, numpy's
#             python3 for the bats files, a private XDG_CACHE_HOME.
set -eu
DIR=${1:-.dev}
B=${ACCEL_BUILD:-build}
[ -x "$B/accel-fft" ] || { echo "gpu-kit: no $B/accel-fft: run make first" >&2; exit 1; }
rm -rf "$DIR/build" "$DIR/syslib" "$DIR/tools" "$DIR/debs" "$DIR/models"
mkdir -p "$DIR/build/libexec" "$DIR/syslib" "$DIR/tools" "$DIR/debs"
cp -a "$B"/accel-detect "$B"/accel-fft "$B"/accel-compress "$B"/accel-crypt "$B"/accel-bench "$B/lib" "$DIR/build/"
cp -a "$B/libexec/accel-bench-fftw" "$DIR/build/libexec/"
# The test drivers the bats files run (make tests), where built.
for t in "$B"/tests/fft-inprocess; do
	[ ! -x "$t" ] || { mkdir -p "$DIR/build/tests" && cp -a "$t" "$DIR/build/tests/"; }
done
cp -a "$B/plugins" "$DIR/build/plugins"
(cd "$DIR/build/plugins" && rm -rf accel_onnxruntime.so onnxruntime accel_ffmpeg.so accel_opencv.so opencv)
# ORT=1: ONNX Runtime too (28 MB: gzip the folder to carry it), with
# accel-infer, the peer infer-direct (its RUNPATH names
# deps/onnxruntime/lib) and onnx.run's model (ACCEL_BENCH_MODELS=DIR/models).
if [ "${ORT:-0}" = 1 ]; then
	cp -a "$B/plugins/accel_onnxruntime.so" "$DIR/build/plugins/"
	mkdir -p "$DIR/build/plugins/onnxruntime" "$DIR/build/deps/onnxruntime" "$DIR/models/ocr"
	cp -L "$B"/plugins/onnxruntime/* "$DIR/build/plugins/onnxruntime/"
	ln -sfn ../../plugins/onnxruntime "$DIR/build/deps/onnxruntime/lib"
	cp -a "$B/accel-infer" "$DIR/build/"
	cp -a "$B/libexec/infer-direct" "$DIR/build/libexec/"
	cp "$B/deps/models/ocr/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$DIR/models/ocr/"
fi
# The manifest names plugins by build-id: made again for the plugins kept,
# else every start there would load all of them.
LD_LIBRARY_PATH="$B/lib" "$B/tools/plugin-manifest" "$DIR/build/plugins" >"$DIR/build/plugins/plugins.manifest"
for l in libOpenCL.so.1 libcrypto.so.3 libdeflate.so.0 libfftw3f.so.3 libisal.so.2 liblz4.so.1 \
	libminizip.so.1 libsodium.so.23 libvulkan.so.1 libz.so.1 libzstd.so.1 libcjson.so.1 \
	libhwloc.so.15 libpci.so.3 libudev.so.1; do
	f=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ { print $NF; exit }')
	if [ -n "$f" ]; then cp -L "$f" "$DIR/syslib/$l"; else echo "gpu-kit: $l is not installed here" >&2; fi
done
for t in zstd lz4 age age-keygen igzip pigz; do
	p=$(command -v "$t") && cp -L "$p" "$DIR/tools/" || echo "gpu-kit: no $t here" >&2
done
(cd "$DIR/debs" && apt-get download bats jq libjq1 libonig5 libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null 2>&1) || echo "gpu-kit: apt-get download failed: no bats there" >&2
cat >"$DIR/setup.sh" <<SETUP
# Sourced from the repository root on the GPU machine (tests/bench/gpu-kit.sh).
K=\$(cd "$DIR" && pwd)
for f in \$K/debs/*.deb; do dpkg -x "\$f" / 2>/dev/null; done
rm -rf build && cp -a \$K/build build
mkdir -p /tmp/accel-syslib
for l in \$K/syslib/*; do
	ldconfig -p | grep -q " \$(basename "\$l") " || cp "\$l" /tmp/accel-syslib/
done
export LD_LIBRARY_PATH=/tmp/accel-syslib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export PATH=\$K/tools:\$PATH
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
fi
# The bats files ask /usr/bin/python3 for numpy; there it is in PyTorch's venv.
PYV=/opt/torch/.venv/bin/python3
[ -x \$PYV ] && sed -i "s#/usr/bin/python3#\$PYV#g" tests/*.bats tests/*.bash tests/lib/*.bash 2>/dev/null
export XDG_CACHE_HOME=/tmp/accel-xdg
SETUP
du -sh "$DIR" | sed 's/^/gpu-kit: /'
