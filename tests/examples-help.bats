#!/usr/bin/env bats
# Help that works when typed: every example command of the man pages (their
# EXAMPLES sections, and the command lines of their other example blocks)
# and of README's tour runs as written, in order (as a reader follows the
# page: later examples use what earlier ones wrote), in a folder holding the
# inputs they name (fixtures made here), with the build's programs first in
# PATH; each must exit 0, or the status listed in STATUS. Examples that
# cannot run here are in SKIP with the reason, so a new example runs by
# default. Also: each name the programs' -b help gives works with that
# program, and every page a man page cites exists (ours, or installed).

bats_require_minimum_version 1.5.0

load lib/common

# The examples not run: the command line as extracted (roff escapes
# undone, continuation lines joined) and why.
declare -gA SKIP=(
	["rtl_sdr -f 100M -s 2.4M - | accel-fft -t cu8 -n 1024 -w blackman-harris --out db --shift --average 100 > waterfall.f32"]="an RTL-SDR receiver"
	["accel-fft -b vkfft.opencl --fallback cpu -n 4096 --out db < x.cf32 > db.f32"]="a hardware OpenCL device (PoCL here, taken only when named in full: README's vkfft.opencl:gpu1 runs)"
	["accel-fft -b fftw,cufft -t cu8 -n 1024 --out db --average 16 capture.cu8 > rows.f32"]="a CUDA GPU"
	["accel-infer -m net.onnx -b opencv.opencl -v < in.npy > out.npy   # OpenCV on an OpenCL GPU"]="an OpenCL GPU (PoCL here is a software device)"
	["curl -s http://cam/stream.ts | accel-transcode --scale 1280x-1 > small.mkv"]="a camera on the network"
	["accel-transcode --hw cuda -v clip.mp4 > /dev/null     # what ran where"]="a CUDA GPU"
	["accel-crypt -p -o key.txt.age key.txt      # an identity file under a passphrase"]="asks for the passphrase on a terminal (tests/crypt-pass.bats runs it on one)"
	["accel-crypt -d -i key.txt.age data.tar.zst.age > data.tar.zst"]="needs key.txt.age, made above on a terminal (tests/crypt-pass.bats)"
	["accel-bench --vs --time 1"]="measures every operation for minutes (tests/bench*.bats run accel-bench on small sizes)"
	["accel-bench --vs --peer igzip --json 'gzip.*' | jq '.cases[].peer.ratio'"]="measures for minutes"
	["accel-bench --size 1M,16M,256M -T 4 '*.compress'"]="measures for minutes"
	["accel-bench --vs --level 1,3,9,19 'zstd.*'"]="measures for minutes"
	["accel-bench --size 256,4096,65536 --json 'fft.*' | jq '.cases[] | [.engine, .size, .gflops.median]'"]="measures for minutes"
	["accel-bench -b cpu,vkfft.vulkan:gpu0 --csv fft.c2c > fft.csv"]="measures for minutes"
	["accel-bench --save --time 1          # measure, then let auto route by it"]="measures for minutes, and writes the user's profile"
	["accel-bench --json > baseline.json    # later, on the same machine:"]="measures for minutes"
	["accel-bench --compare baseline.json --max-regression 5%"]="measures for minutes (needs baseline.json, skipped above)"
	["accel-bench --json > now.json && accel-bench --compare baseline.json --against now.json --json"]="measures for minutes"
	["accel-bench --size 64K,1M,16M --vs --plot bench.svg '*.compress'"]="measures for minutes"
	["build/accel-bench --vs --time 1                 # 64M inputs; OURS/PEER: accel-compress ... over zstd ... as programs"]="measures for minutes"
	["build/accel-bench --vs --level 1,19 'zstd.*'"]="measures for minutes"
	["build/accel-bench --vs --size 1,8 onnx.run onnx.stream   # a real model at batch 1 and 8 (one batch; 32 as accel-infer runs a stream), beside ONNX Runtime called directly"]="measures for minutes"
	["sh tests/bench/infer-stream.sh   # inputs/s and CPU per input, file and pipe, beside ONNX Runtime called directly"]="measures for a minute"
	["build/accel-bench --vs --size 1280x720 'h264.*' # accel-transcode beside ffmpeg on a 720p clip"]="measures for minutes"
	["build/accel-bench --size 256,4096,65536 --json 'fft.*' | jq '.cases[] | [.engine, .size, .gflops.median]'"]="measures for minutes"
	["build/accel-bench --save --time 1              # the profile: auto routes by these figures now"]="measures for minutes, and writes the user's profile"
	["build/accel-bench --json --repeat 5 'zstd.*' sha256 > base.json"]="measures for minutes"
	["build/accel-bench --compare base.json --max-regression 10%   # the same cases again: a table of changes, exit 5 on a regression"]="measures for minutes (needs base.json, skipped above)"
	["sh examples/ci-bench.sh base/bench.json bench.json --repeat 5 sha256   # a CI step (examples/ci-bench.yml: the GitHub Actions job)"]="measures for minutes (tests/bench-compare.bats runs it)"
	["build/accel-bench --size 64K,1M,16M --vs --plot bench.svg '*.compress'   # the same, drawn by gnuplot"]="measures for minutes"
)

# The examples whose documented exit status is not 0 (or depends on the
# machine): the statuses accepted.
declare -gA STATUS=(
	["accel-detect --require 'gpu>=2,gpu.memory>=40G' -q && sbatch job.sh"]="4"
	["build/accel-detect --require aes,avx2,fma && echo \"fast crypto here\"   # any /proc/cpuinfo flag"]="0 4"
	["build/accel-transcode -ss 0.5 clip.ts   # ffmpeg's words: \"-ss is ffmpeg's; use --start 0.5\", exit 2"]="2"
)

# What an example names that the fixtures stand for: system paths and
# placeholders, replaced in the command before it runs.
substitute() {
	local c=$1
	c=${c//age1.../\"\$(accel-crypt keygen -y key.txt)\"}
	c=${c//\/etc\//etc/}
	c=${c//\/usr\/share\/doc/data}
	c=${c//\/usr\/lib\/x86_64-linux-gnu\//lib/}
	printf '%s\n' "$c"
}

# man_examples PAGE.in: its example commands, one a line.
man_examples() {
	awk '
	/^\.SH/ { ex = $0 ~ /^\.SH "?EXAMPLES/ }
	/^\.nf/ { nf = 1; next }
	/^\.fi/ { nf = 0; cont = ""; next }
	!nf { next }
	{
		l = $0
		gsub(/\\-/, "-", l); gsub(/\\e/, "\\", l); gsub(/\\\\/, "\\", l)
		if (cont != "") { sub(/^ +/, "", l); l = cont " " l; cont = "" }
		if (l ~ /\\$/) { sub(/ *\\$/, "", l); cont = l; next }
		if (l ~ /\|$/) { cont = l; next }
		if (ex) {
			if (l != "" && l !~ /^#/)
				print l
		} else if (l ~ /^([A-Z_]+=[^ ]+ )*accel-[a-z]+ / && l !~ /^accel-[a-z]+:/) {
			print l
		}
	}' "$1"
}

# readme_tour: the commands of README's Tour, one a line.
readme_tour() {
	awk '
	/^## / { tour = $0 == "## Tour"; next }
	!tour || !/^    / { next }
	{
		l = substr($0, 5)
		if (cont != "") { sub(/^ +/, "", l); l = cont " " l; cont = "" }
		if (l ~ /\\$/) { sub(/ *\\$/, "", l); cont = l; next }
		if (l ~ /\|$/) { cont = l; next }
		if (l !~ /^#/)
			print l
	}' "$ROOT/README.md"
}

# The inputs the examples name, made once.
setup_file() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	FX="$BATS_FILE_TMPDIR/fx"
	mkdir -p "$FX"/{data/sub,lib,clips,out,home/.ssh,etc/slurm,etc/kubernetes/node-feature-discovery/features.d}
	cd "$FX"
	seq 1 3000 > data/a.txt
	head -c 100000 /dev/urandom > data/sub/b.bin
	seq 1 40000 > big
	cp big in
	echo 'meet at noon' > notes.txt
	echo 'correct horse battery staple' > pw.txt
	head -c 30000 /dev/urandom > a.iso
	head -c 20000 /dev/urandom > b.iso
	head -c 5000 /dev/urandom > lib/libx.so.1
	zstd -q < big > release.tar.zst
	ssh-keygen -q -t ed25519 -N '' -C ex -f home/.ssh/id_ed25519
	cp home/.ssh/id_ed25519.pub home/.ssh/authorized_keys
	sox -n -r 48000 -c 2 -b 16 music.wav synth 2 sine 440 sine 1000 vol 0.5
	sox -n -r 44100 -c 2 -b 16 song.flac synth 2 sine 440 sine 1000 vol 0.5
	# I and Q of a 1 kHz tone, as an SDR's stereo WAV holds them.
	sox -n -r 48000 -c 2 -b 16 baseband.wav synth 1 sine 1000 sine 1000 vol 0.5
	/usr/bin/python3 - <<-'EOF'
		import numpy as np
		rng = np.random.default_rng(1)
		(rng.standard_normal(8000) * 0.1).astype("f4").tofile("x.cf32")           # 4000 complex samples
		(rng.standard_normal(8 * 4096) * 0.1).astype("f4").tofile("samples.cf32") # 4 frames of 4096
		(rng.standard_normal(16 * 512) * 1000).astype("<i2").tofile("capture.i16")
		rng.integers(0, 256, 2 * 1024 * 200, dtype="u1").tofile("capture.cu8")    # 200 frames of 1024
		with open("frames.npy", "wb") as f:
		    for _ in range(10):
		        np.save(f, rng.standard_normal((1, 6)).astype("f4"))
		np.save("in.npy", np.ones((1, 4), "f4"))
	EOF
	printf '%s\n' cat dog bird fish frog cow > labels.txt
	/usr/bin/python3 "$ROOT/tests/infer/models.py" "$FX" >&2
	mv lin.onnx net.onnx
	mv softmax.onnx classifier.onnx
	ln -s "$ROOT"/build/deps/models/ocr/* .
	ffmpeg -v error -f lavfi -i testsrc2=size=320x48:rate=1 -frames:v 1 line.png
	ffmpeg -v error -f lavfi -i color=c=white:s=480x200 -frames:v 1 -vf \
		"drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='ACCEL 2026':fontsize=40:x=30:y=30" page.png
	ffmpeg -v error -f lavfi -i testsrc2=size=64x48:rate=10:duration=3 -f lavfi -i sine=duration=3 \
		-c:v libx264 -preset ultrafast -c:a aac clip.mp4
	ffmpeg -v error -i clip.mp4 -c copy in.ts
	cp clip.mp4 clips/a.mov
	ffmpeg -v error -f lavfi -i testsrc2=size=64x48:rate=5:duration=101 -f lavfi -i sine=duration=101 \
		-c:v libx264 -preset ultrafast -c:a aac talk.mp4
	cp "$ROOT/README.md" .
}

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	FX="$BATS_FILE_TMPDIR/fx"
	W="$BATS_TEST_TMPDIR/w"
	mkdir "$W"
	cp -a "$FX/home" "$W"
	cd "$W"
	export HOME="$W/home"
	export PATH="$ROOT/build:/usr/sbin:/usr/bin:/sbin:/bin"
}

# use NAME...: these fixtures in the page's folder (only those the page
# reads, as a reader would have them).
use() {
	local n
	for n; do
		cp -a "$FX/$n" .
	done
}

# run_examples: run the commands on stdin (one a line) in order in one
# shell in $PWD, each with stdin from /dev/null; fails listing each that
# exited with a status other than 0 (or its STATUS), with its stderr.
run_examples() {
	local cmds=() c i=0 rc want bad=""
	while IFS= read -r c; do
		cmds+=("$c")
	done
	[ "${#cmds[@]}" -gt 0 ]
	: > run.sh
	for c in "${cmds[@]}"; do
		i=$((i + 1))
		if [ -n "${SKIP[$c]+x}" ]; then
			echo "# skipped: $c: ${SKIP[$c]}" >&3
			continue
		fi
		printf '{ %s\n} > out.%d 2> err.%d < /dev/null; echo $? > rc.%d\n' "$(substitute "$c")" $i $i $i >> run.sh
	done
	timeout 900 bash run.sh
	i=0
	for c in "${cmds[@]}"; do
		i=$((i + 1))
		[ -n "${SKIP[$c]+x}" ] && continue
		rc=$(cat rc.$i)
		want=${STATUS[$c]-0}
		if [[ " $want " != *" $rc "* ]]; then
			bad+="exit $rc (not $want): $c"$'\n'"$(head -3 err.$i)"$'\n'
		fi
	done
	if [ -n "$bad" ]; then
		printf '%s' "$bad"
		return 1
	fi
}

@test "accel-compress(1): every example runs as written" {
	use data big
	man_examples "$ROOT/man/accel-compress.1.in" | run_examples
	zstd -dc data.tar.zst | tar t | grep -qx 'data/sub/b.bin'
}

@test "accel-crypt(1): every example runs as written" {
	use data notes.txt pw.txt a.iso b.iso release.tar.zst
	man_examples "$ROOT/man/accel-crypt.1.in" | run_examples
	[ "$(cat out.6)" = 'meet at noon' ]
	[ "$(accel-crypt -d --passphrase-file pw.txt notes-pw.age)" = 'meet at noon' ]
}

@test "accel-detect(1): every example runs as written" {
	use etc
	man_examples "$ROOT/man/accel-detect.1.in" | run_examples
	[ -f etc/slurm/gres.conf ]
	[ -f etc/kubernetes/node-feature-discovery/features.d/accel ]
}

@test "accel-fft(1): every example runs as written" {
	use music.wav song.flac baseband.wav x.cf32 capture.i16
	man_examples "$ROOT/man/accel-fft.1.in" | run_examples
	cmp <(head -c 32000 y.cf32 | od -An -v -tf4 -w4 | awk '{printf "%.3f\n", $1}') \
		<(od -An -v -tf4 -w4 x.cf32 | awk '{printf "%.3f\n", $1}')
}

@test "accel-infer(1): every example runs as written" {
	use ch_PP-OCRv4_rec_infer.onnx ch_PP-OCRv4_det_infer.onnx ppocr_keys_v1.txt line.png page.png net.onnx \
		classifier.onnx labels.txt frames.npy
	man_examples "$ROOT/man/accel-infer.1.in" | run_examples
	[ "$(/usr/bin/python3 -c 'import numpy as np; print(sorted(np.load("out.npz")))')" = "['y', 'z']" ]
}

@test "accel-transcode(1): every example runs as written" {
	use clip.mp4 in.ts talk.mp4 clips out
	man_examples "$ROOT/man/accel-transcode.1.in" | run_examples
	[ "$(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 clip.webm | tr '\n' ' ')" = "vp9 opus " ]
	[ ! -e failed ]
	[ -s out/a.mov.mp4 ]
}

@test "accel-bench(1): every example runs as written (those that measure for minutes skipped)" {
	use samples.cf32
	man_examples "$ROOT/man/accel-bench.1.in" | run_examples
}

@test "accel(7): every example runs as written (the test plugin as the second engine)" {
	export ACCEL_BACKEND_PATH="$ROOT/build/tests/plugins"
	use in big
	man_examples "$ROOT/man/accel.7.in" | run_examples
	accel-compress -d < out | cmp - big
}

@test "README's tour: every command runs as written from the tree's root" {
	use data lib notes.txt pw.txt capture.cu8 music.wav song.flac line.png net.onnx clips README.md
	ln -s "$ROOT/build" build
	ln -s "$ROOT/examples" examples
	readme_tour | run_examples
}

@test "every example skipped or given a status is still in a page" {
	local all c
	all=$(for m in "$ROOT"/man/*.in; do man_examples "$m"; done; readme_tour)
	for c in "${!SKIP[@]}" "${!STATUS[@]}"; do
		grep -qxF -- "$c" <<< "$all" || { echo "not an example any more: $c"; return 1; }
	done
}

# The engine names of a program's -b help: the words whose first part is
# auto or a backend of the registry.
backend_names() {
	local backends
	backends=$(accel-compress --completion backends | paste -sd'|')
	"$@" --help | grep -E '^ +-b, --backend' | cut -c28- | grep -oE '[a-z0-9]+([.:+,][a-z0-9]+)*' |
		grep -E "^($backends)([.:+,]|\$)" | sort -u
}

@test "each engine name in the programs' -b help works with that program" {
	use net.onnx in.npy
	accel-crypt keygen -o key.txt 2> /dev/null
	r=$(accel-crypt keygen -y key.txt)
	# hash -b sodium with -a blake2b512, the algorithm its help names it for
	declare -A cmd=(
		[accel-compress]='echo x | accel-compress -b "$1" > /dev/null'
		[accel-fft]='head -c 8192 /dev/zero | accel-fft -b "$1" > /dev/null'
		[accel-crypt]='echo x | accel-crypt -b "$1" -r "$r" > /dev/null'
		[accel-crypt hash]='echo x | accel-crypt hash -b "$1" $([ "$1" != sodium ] || echo -a blake2b512) > /dev/null'
		[accel-infer]='accel-infer -m net.onnx -b "$1" < in.npy > /dev/null'
		[accel-detect]='accel-detect -b "$1" --routes fft.c2c > /dev/null'
	)
	# names for devices this machine lacks
	declare -A lacks=(
		[cufft]="a CUDA GPU" [fftw+cufft]="a CUDA GPU" [vkfft]="a hardware Vulkan or OpenCL device"
		[onnxruntime.cuda]="a CUDA GPU" [onnxruntime.tensorrt]="a CUDA GPU with TensorRT"
		[opencv.opencl]="a hardware OpenCL device"
	)
	local p n bad="" count=0
	for p in "${!cmd[@]}"; do
		for n in $(backend_names $p); do
			count=$((count + 1))
			if [ "$p" != accel-detect ] && [ -n "${lacks[$n]+x}" ]; then
				echo "# skipped: $p -b $n: ${lacks[$n]}" >&3
				continue
			fi
			r=$r bash -c "${cmd[$p]}" sh "$n" 2> err || bad+="$p -b $n: $(head -1 err)"$'\n'
		done
	done
	[ -z "$bad" ] || { printf '%s' "$bad"; return 1; }
	[ "$count" -ge 20 ]
}

@test "each program's -v help speaks of that program" {
	for p in accel-compress accel-crypt accel-fft accel-infer accel-transcode; do
		run -0 "$p" --help
		v=$(grep -E '^ +-v, --verbose' <<< "$output")
		[ -n "$v" ]
		[[ "$v" != *accel-detect* && "$v" != *probe* ]]
	done
	run -0 accel-fft --help
	[[ "$output" == *"-v, --verbose            say more on stderr: the WAV header read"* ]]
	run -0 accel-detect --help
	[[ "$output" == *"-v, --verbose            say more: every probe and its time"* ]]
}

@test "a subcommand's usage error points at the subcommand's help" {
	for s in keygen hash sign verify; do
		run -2 --separate-stderr accel-crypt "$s" --no-such-option
		[ "${stderr_lines[0]}" = "accel-crypt: unknown option '--no-such-option'" ]
		[ "${stderr_lines[1]}" = "Try 'accel-crypt $s --help' for more information." ]
	done
	run -2 --separate-stderr accel-crypt keygen extra
	[ "$stderr" = "accel-crypt: unexpected operand 'extra'
Try 'accel-crypt keygen --help' for more information." ]
	run -2 --separate-stderr accel-crypt sign
	[ "${stderr_lines[1]}" = "Try 'accel-crypt sign --help' for more information." ]
	run -2 --separate-stderr accel-crypt hash --tag -c SUMS
	[ "$stderr" = "accel-crypt: --tag does not go with -c
Try 'accel-crypt hash --help' for more information." ]
	run -2 --separate-stderr accel-crypt --no-such-option
	[ "${stderr_lines[1]}" = "Try 'accel-crypt --help' for more information." ]
}

@test "every page a man page cites is ours or installed (man -w)" {
	local refs n s bad=""
	refs=$({
		grep -ohE '^\.BR [^ ]+ \([0-9][a-z]*\)' "$ROOT"/man/*.in | sed -E 's/^\.BR ([^ ]+) \((.*)\)/\1 \2/'
		grep -ohE '\\fB[A-Za-z0-9_.\\-]+\\f[RP]\([0-9][a-z]*\)' "$ROOT"/man/*.in | sed -E 's/\\f[BRP]//g; s/\((.*)\)/ \1/'
	} | sed 's/\\-/-/g' | sort -u)
	[ "$(wc -l <<< "$refs")" -ge 20 ]
	while read -r n s; do
		[ -f "$ROOT/man/$n.${s:0:1}.in" ] || man -w "$s" "$n" > /dev/null 2>&1 || bad+="$n($s) "
	done <<< "$refs"
	[ -z "$bad" ] || { echo "no such page: $bad"; return 1; }
}
