#!/usr/bin/env bats
# The files the programs create: only the output the command names (and
# its temporary, renamed over it) and caches under $XDG_CACHE_HOME, never a
# file in /tmp or anywhere else, whatever the drivers and libraries they
# load do (ONNX Runtime's telemetry opened /tmp/mat-debug-PID.log and
# /tmp/.ses in every process that created its environment). Each run is
# traced with strace; a closed stdout stays closed.

bats_require_minimum_version 1.5.0

load lib/common

setup_file() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	command -v strace >/dev/null || return 0
	if [ -f "$ROOT/build/plugins/accel_onnxruntime.so" ] && /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
		/usr/bin/python3 "$ROOT/tests/infer/models.py" "$BATS_FILE_TMPDIR" >&2
	fi
}

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	B="$ROOT/build"
	command -v strace >/dev/null || skip "no strace (make deps installs it)"
	unset ORT_DISABLE_TELEMETRY
	T="$BATS_TEST_TMPDIR"
	mkdir -p "$T/home" "$T/cache" "$T/tmp" "$T/w" "$T/trace"
	export HOME="$T/home" XDG_CACHE_HOME="$T/cache" TMPDIR="$T/tmp"
	cd "$T/w"
	head -c 1500000 /dev/urandom > in.bin
}

# created DIR: the paths the traces in DIR (strace -ff -y) show created:
# opened with O_CREAT, made (mkdir, mknod, link, symlink) or renamed to,
# by calls that succeeded; relative paths resolved.
created() {
	/usr/bin/python3 - "$1" <<'EOF'
import os, re, sys
call = re.compile(r'^(\w+)\((.*)\)\s+=\s+(\d+)')
arg = re.compile(r'(AT_FDCWD|\d+<[^>]*>)?,?\s*"((?:[^"\\]|\\.)*)"')
for f in sorted(os.listdir(sys.argv[1])):
    cwd = None
    for line in open(os.path.join(sys.argv[1], f), errors='replace'):
        m = call.match(line)
        if not m:
            continue
        name, args = m.group(1), m.group(2)
        if name.startswith('open') and 'O_CREAT' not in args:
            continue
        if name not in ('open', 'openat', 'openat2', 'creat', 'mkdir', 'mkdirat', 'mknod', 'mknodat', 'link',
                        'linkat', 'symlink', 'symlinkat', 'rename', 'renameat', 'renameat2'):
            continue
        paths = arg.findall(args)
        base, path = paths[-1] if name.startswith(('link', 'symlink', 'rename')) else paths[0]
        if not path.startswith('/'):
            d = base[base.index('<') + 1:-1] if base and base != 'AT_FDCWD' else os.environ['PWD']
            path = os.path.join(d, path)
        print(os.path.normpath(path))
EOF
}

# traced CMD...: run CMD under strace into a fresh trace folder.
traced() {
	rm -rf "$T/trace" && mkdir "$T/trace"
	strace -qq -f -ff -y -o "$T/trace/t" \
		-e trace=open,openat,openat2,creat,mkdir,mkdirat,mknod,mknodat,link,linkat,symlink,symlinkat,rename,renameat,renameat2 \
		"$@"
}

# only_made ALLOWED...: every path the last trace created is one of
# ALLOWED, under $XDG_CACHE_HOME, or /dev/null; prints the others.
only_made() {
	local bad
	bad=$(created "$T/trace" | while read -r p; do
		case "$p" in
		/dev/null | "$XDG_CACHE_HOME" | "$XDG_CACHE_HOME"/*) continue ;;
		esac
		ok=0
		for a in "$@"; do
			[[ "$p" == "$a" || ("$p" == "$(dirname "$a")"/.* && "$p" == *"$(basename "$a")"*) ]] && ok=1
		done
		[ "$ok" = 1 ] || echo "$p"
	done)
	[ -z "$bad" ] || { echo "created outside the named output: $bad"; return 1; }
}

@test "accel-detect, --json and --routes of every operation create no file" {
	traced "$B/accel-detect" > out.txt
	only_made
	traced "$B/accel-detect" --json -v > out.json
	only_made
	jq -e . out.json > /dev/null
	ops=$(jq -r '.routes[]?.operation' < <("$B/accel-detect" --routes --json))
	[ -n "$ops" ]
	for op in $ops; do
		traced "$B/accel-detect" --routes "$op" > /dev/null
		only_made
	done
	traced "$B/accel-detect" --routes --json -o routes.json
	only_made "$PWD/routes.json"
}

@test "accel-compress and accel-crypt create only their output" {
	traced "$B/accel-compress" -o c.zst in.bin
	only_made "$PWD/c.zst"
	traced "$B/accel-compress" -d -o c.out c.zst
	only_made "$PWD/c.out"
	cmp in.bin c.out
	"$B/accel-crypt" keygen -o key.txt 2>/dev/null
	r=$(grep -o 'age1[0-9a-z]*' key.txt)
	traced "$B/accel-crypt" -r "$r" -o e.age in.bin
	only_made "$PWD/e.age"
	traced "$B/accel-crypt" -d -i key.txt e.age > d.bin
	only_made
	cmp in.bin d.bin
	traced "$B/accel-crypt" hash in.bin > /dev/null
	only_made
}

@test "accel-fft on 1.5 MB (the device engines probed) creates only its output and caches" {
	traced "$B/accel-fft" -n 1024 -o f.out in.bin
	only_made "$PWD/f.out"
	traced "$B/accel-fft" -n 1024 -b cpu in.bin > /dev/null
	only_made
}

@test "accel-infer on a tiny model creates only its output" {
	[ -f "$BATS_FILE_TMPDIR/lin.onnx" ] || skip "no onnxruntime backend or python3-onnx (make deps)"
	/usr/bin/python3 -c "import numpy as np; np.save('x.npy', np.ones((2, 4), 'f4'))"
	traced "$B/accel-infer" -m "$BATS_FILE_TMPDIR/lin.onnx" -o y.npz x.npy
	only_made "$PWD/y.npz"
	traced "$B/accel-infer" -m "$BATS_FILE_TMPDIR/lin.onnx" --info > /dev/null
	only_made
}

@test "accel-transcode creates only its output" {
	command -v ffmpeg >/dev/null || skip "no ffmpeg"
	ffmpeg -v error -f lavfi -i testsrc2=size=64x48:rate=25:duration=1 -c:v libx264 -preset ultrafast \
		-pix_fmt yuv420p clip.mp4
	traced "$B/accel-transcode" --to rawvideo -o raw.out clip.mp4
	only_made "$PWD/raw.out"
}

@test "with stdout closed, accel-detect's report lands in no file: exit 1, the error named" {
	for args in "" "--json" "--routes"; do
		run --separate-stderr sh -c '"$0" $1 >&-' "$B/accel-detect" "$args"
		[ "$status" -eq 1 ]
		[ "$stderr" = "accel-detect: cannot write stdout: Bad file descriptor" ]
	done
}
