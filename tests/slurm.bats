#!/usr/bin/env bats
# Slurm for real: a one-node cluster on this machine (tests/lib/slurm.bash:
# munged, slurmctld and slurmd as local processes under one temporary
# folder), plus a second slurmd, accelgpu1, holding the GPUs of the recorded
# GPU server (tests/fixtures/sysroot-gpu). accel-detect --format gres
# writes gres.conf for both; the examples under examples/slurm run as job
# arrays and their outputs are checked against serial runs; the Prolog
# examples/slurm/prolog.sh drains a node that lacks what a job requires.
# Every daemon is stopped in teardown_file, also when a test failed.

bats_require_minimum_version 1.5.0

load lib/common
load lib/slurm

# The Gres= of a node from its gres.conf lines: gpu:TYPE:COUNT per type.
gres_of()
{
	grep -o 'Type=[^ ]*' "$1" | sort | uniq -c | awk '{ sub("Type=", "", $2); printf "%s%s", sep, "gpu:" $2 ":" $1; sep = "," }'
}

setup_file()
{
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	for p in munged mungekey slurmctld slurmd sbatch squeue scontrol sinfo; do
		command -v "$p" > /dev/null || skip "$p is not installed (make deps: tests/deps.d/slurm.list)"
	done
	# A short folder: munged's socket path must fit in 108 bytes.
	SLURM_DIR=$(mktemp -d /tmp/accel-slurm.XXXXXX)
	export SLURM_DIR
	local d=$SLURM_DIR host
	host=$(hostname -s)
	mkdir -p "$d/etc" "$d/dev"
	# This machine's GPUs, as accel-detect finds them.
	"$ROOT/build/accel-detect" --format gres > "$d/gres-host.conf"
	# The recorded GPU server's: its File= paths (/dev/nvidiaN there) made
	# here, character devices of NVIDIA's major 195 when we may (root),
	# else plain files (slurmd then logs that they are not devices).
	ACCEL_SYSROOT="$ROOT/tests/fixtures/sysroot-gpu" "$ROOT/build/accel-detect" --format gres > "$d/gres-gpu1.conf"
	local f
	for f in $(grep -o 'File=[^ ]*' "$d/gres-gpu1.conf" | cut -d= -f2); do
		mknod "$d/dev/${f##*/}" c 195 "${f##*[!0-9]}" 2> /dev/null || : > "$d/dev/${f##*/}"
	done
	{
		grep -v '^#' "$d/gres-host.conf" | sed "s/^/NodeName=$host /"
		grep -v '^#' "$d/gres-gpu1.conf" | sed "s/^/NodeName=accelgpu1 /; s|File=/dev/|File=$d/dev/|"
	} > "$d/etc/gres.conf"
	SLURM_HOST_GRES=$(gres_of "$d/gres-host.conf")
	export SLURM_HOST_GRES
	local port
	port=$(_slurm_free_port)
	SLURM_EXTRA_CONF="Prolog=$ROOT/examples/slurm/prolog.sh" \
		slurm_start "$d" "NodeName=accelgpu1 NodeAddr=127.0.0.1 Port=$port CPUs=1 Gres=$(gres_of "$d/gres-gpu1.conf")" ||
		{ tail -n 5 "$d"/log/*.log >&3; slurm_stop "$d"; false; }
	slurm_start_node "$d" accelgpu1 || { tail -n 5 "$d"/log/*.log >&3; slurm_stop "$d"; false; }
}

teardown_file()
{
	[ -n "${SLURM_DIR:-}" ] || return 0
	slurm_stop "$SLURM_DIR"
	# No daemon of ours may be left: each held its folder's files open.
	local left
	left=$(for p in /proc/[0-9]*; do
		readlink "$p"/cwd "$p"/fd/* 2> /dev/null | grep -q "^$SLURM_DIR/" && echo "${p#/proc/}"
	done)
	rm -rf "$SLURM_DIR"
	[ -z "$left" ] || { echo "# processes left running: $left" >&3; false; }
}

setup()
{
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	export SLURM_CONF="$SLURM_DIR/etc/slurm.conf"
	export ACCEL_BUILD="$ROOT/build"
	T=$BATS_TEST_TMPDIR
	cd "$T"
}

@test "slurm: the cluster is up, this machine's node and accelgpu1 idle in partition debug" {
	run -0 sinfo -V
	echo "# $output" >&3
	[[ "$output" == slurm* ]]
	run -0 sinfo -h -o '%n %T %P'
	[[ "$output" == *"$(hostname -s) idle debug"* ]]
	[[ "$output" == *"accelgpu1 idle debug"* ]]
}

@test "slurm: accel-detect --format gres of this machine is slurmd's gres.conf; scontrol show node lists its GPUs" {
	host=$(hostname -s)
	n=$(grep -c '^Name=gpu' "$SLURM_DIR/gres-host.conf" || true)
	run -0 scontrol show node "$host"
	echo "# $host: $(grep -o 'Gres=[^ ]*' <<< "$output") from $n GPU line(s) of accel-detect" >&3
	if [ "$n" -eq 0 ]; then
		[[ "$output" == *"Gres=(null)"* ]]
	else
		[[ "$output" =~ Gres=$(gres_of "$SLURM_DIR/gres-host.conf")[[:space:]] ]]
	fi
	# the GRES slurmd found matches the node's line (else it would be drained or INVAL)
	[[ "$output" == *"State=IDLE "* ]]
	run -0 slurmd -f "$SLURM_CONF" -N "$host" -G
	[ "$(grep -c 'Gres Name=gpu' <<< "$output" || true)" -eq "$n" ]
}

@test "slurm: the recorded GPU server's gres.conf (ACCEL_SYSROOT): node accelgpu1 has Gres=gpu:h100:2, slurmd -G lists both devices" {
	[ "$(grep -c '^Name=gpu Type=h100 File=/dev/nvidia[01]$' "$SLURM_DIR/gres-gpu1.conf")" -eq 2 ]
	run -0 scontrol show node accelgpu1
	[[ "$output" =~ Gres=gpu:h100:2[[:space:]] ]]
	[[ "$output" == *"State=IDLE "* ]]
	run -0 slurmd -f "$SLURM_CONF" -N accelgpu1 -G
	[[ "$output" == *"Gres Name=gpu Type=h100 Count=1 Index=0 "*"File=$SLURM_DIR/dev/nvidia0"* ]]
	[[ "$output" == *"Gres Name=gpu Type=h100 Count=1 Index=1 "*"File=$SLURM_DIR/dev/nvidia1"* ]]
	# a job asking for both GPUs runs there, with them in CUDA_VISIBLE_DEVICES
	run -0 timeout 60 sbatch --wait --gres=gpu:h100:2 -o "$T/g.out" --wrap 'hostname; echo "gpus=$CUDA_VISIBLE_DEVICES"'
	grep -qx 'gpus=0,1' "$T/g.out"
}

@test "slurm: examples/slurm/pack.sbatch, a job array, compresses and encrypts a folder one task a file, as a serial run does" {
	mkdir src
	head -c 300000 /dev/urandom > src/random.bin
	seq 1 200000 > src/numbers.txt
	: > src/empty
	printf 'one line\n' > 'src/with space'
	yes accel | head -n 50000 > src/repeat.txt
	"$ROOT/build/accel-crypt" keygen -o key.txt 2> /dev/null
	rcpt=$(grep -o 'age1[0-9a-z]*' key.txt | head -n 1)
	n=$(find src -type f | wc -l)
	run timeout 90 sbatch --wait --array=0-$((n - 1)) -o "$T/pack-%a.out" "$ROOT/examples/slurm/pack.sbatch" src out "$rcpt"
	[ "$status" -eq 0 ] || { cat "$T"/pack-*.out; false; }
	[[ "$output" == "Submitted batch job "* ]]
	[ "$(find out -type f | wc -l)" -eq "$n" ]
	for f in src/*; do
		b=${f##*/}
		"$ROOT/build/accel-compress" -q -T1 -c "$f" > "serial.zst"
		"$ROOT/build/accel-crypt" -d -i key.txt "out/$b.zst.age" > "job.zst"
		cmp job.zst serial.zst
		"$ROOT/build/accel-compress" -d -c -q job.zst | cmp - "$f"
	done
	! ls out/*.part 2> /dev/null
}

@test "slurm: examples/slurm/fft.sbatch, a job array over the slices of a capture: each slice as a serial run, the whole as one accel-fft" {
	command -v sox > /dev/null || skip "sox is not installed"
	/usr/bin/python3 -c 'import numpy' 2> /dev/null || skip "python3-numpy is not installed"
	# 98304 complex f32 samples: 96 frames of 1024, 4 tasks of 25 (the last 21)
	sox -n -r 48000 -c 2 -e floating-point -b 32 -t raw cap.cf32 synth 2.048 sine 1000 whitenoise
	run timeout 90 sbatch --wait --array=0-3 -o "$T/fft-%a.out" \
		"$ROOT/examples/slurm/fft.sbatch" cap.cf32 out cf32 1024 25 --plan estimate
	[ "$status" -eq 0 ] || { cat "$T"/fft-*.out; false; }
	[ "$(ls out)" = "$(printf 'slice-%06d.fft\n' 0 1 2 3)" ]
	for i in 0 1 2 3; do
		SLURM_ARRAY_TASK_ID=$i bash "$ROOT/examples/slurm/fft.sbatch" cap.cf32 serial cf32 1024 25 --plan estimate
		cmp "out/slice-00000$i.fft" "serial/slice-00000$i.fft"
	done
	cat out/slice-*.fft > joined.fft
	[ "$(stat -c %s joined.fft)" -eq $((96 * 1024 * 8)) ]
	# the whole capture in one run: the same spectra, to float rounding
	# (FFTW's plan depends on the number of frames in a call)
	"$ROOT/build/accel-fft" -q -t cf32 -n 1024 --plan estimate cap.cf32 > whole.fft
	/usr/bin/python3 -c '
import numpy as np, sys
a = np.fromfile(sys.argv[1], "<c8"); b = np.fromfile(sys.argv[2], "<c8")
assert a.shape == b.shape, (a.shape, b.shape)
assert np.allclose(a, b, rtol=1e-5, atol=1e-3 * np.abs(b).max()), np.abs(a - b).max()
' joined.fft whole.fft
}

@test "slurm: examples/slurm/prolog.sh drains the node with accel-detect's reason when a job's --comment=accel-require=EXPR is not met" {
	host=$(hostname -s)
	# met (aes is a CPU flag accel-detect knows; if not here, the other case)
	if "$ROOT/build/accel-detect" --require aes > /dev/null 2>&1; then
		run -0 timeout 60 sbatch --wait -w "$host" --comment='accel-require=aes' -o "$T/ok.out" --wrap 'echo ran'
		grep -qx ran "$T/ok.out"
		run -0 sinfo -h -n "$host" -o %T
		[ "$output" = idle ]
	fi
	# not met: more GPUs than the node has
	want=$(($(grep -c '^Name=gpu' "$SLURM_DIR/gres-host.conf" || true) + 1))
	run -0 sbatch -w "$host" --comment="accel-require=gpu>=$want" -o "$T/bad.out" --wrap 'echo ran'
	job=${output##* }
	_slurm_until "sinfo -h -n '$host' -o %T | grep -q drain" 30
	run -0 sinfo -h -n "$host" -o '%E'
	echo "# reason: $output" >&3
	[[ "$output" == "accel: requirement not met: gpu>=$want: found "*" gpu device"* ]]
	# the job did not run there: Slurm requeued and held it
	[ ! -s "$T/bad.out" ] || ! grep -q ran "$T/bad.out"
	scancel "$job"
	scontrol update nodename="$host" state=resume
	slurm_wait_idle "$host"
}
