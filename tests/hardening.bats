#!/usr/bin/env bats
# Files, signals, messages and library hygiene (issue 7): output files honour
# the umask, a device or FIFO given to -f -o is written into and never
# replaced, a signal that ends the run leaves no temporary file, write errors
# and --help name what the user needs, a malformed ACCEL_FAULT names its bad
# part, and a malformed plugin is a reason. Issue 17: every program run with
# fd 0, 1 or 2 closed neither hangs nor writes into a file it opened itself,
# and accel-infer's libraries do not keep a signal from removing -o's
# temporary.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	D="$ROOT/build/accel-detect"
	BAD="$ROOT/build/tests/badplugins"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	seq 1 200000 > a
}

# no_temp: the folder holds no temporary output (.NAME.XXXXXX).
no_temp() {
	local left
	left=$(find . -maxdepth 1 -name '.*.??????' -print)
	[ -z "$left" ] || { echo "left behind: $left"; false; }
}

@test "output files honour the umask" {
	umask 027
	"$A" -o a.zst < a
	[ "$(stat -c %a a.zst)" = 640 ]
	"$D" -o inventory
	[ "$(stat -c %a inventory)" = 640 ]
	umask 077
	"$A" -d -o a.out < a.zst
	[ "$(stat -c %a a.out)" = 600 ]
	cmp a a.out
}

@test "accel-compress FILE -o: the output has FILE's permissions, as zstd, gzip and lz4 give it" {
	umask 022
	chmod 600 a
	"$A" a -o a.zst
	zstd -q a -o z.zst
	"$A" -F lz4 a -o a.lz4
	lz4 -q a l.lz4
	"$A" -F gzip a -o a.gz
	mkdir g && cp -p a g/a && gzip g/a
	[ "$(stat -c %a a.zst z.zst a.lz4 l.lz4 a.gz g/a.gz | tr '\n' ' ')" = "600 600 600 600 600 600 " ]
	# the mode is FILE's whatever the umask, decompressing too
	umask 077
	chmod 644 a
	"$A" -f a -o a.zst
	zstd -q -f a -o z.zst
	[ "$(stat -c %a a.zst z.zst | tr '\n' ' ')" = "644 644 " ]
	"$A" -d a.zst -o a.out
	zstd -q -d z.zst -o z.out
	[ "$(stat -c %a a.out z.out | tr '\n' ' ')" = "644 644 " ]
	# over an existing file: FILE's mode, as zstd -f
	echo old > e1
	echo old > e2
	chmod 600 e1 e2
	"$A" -f a -o e1
	zstd -q -f a -o e2
	[ "$(stat -c %a e1 e2 | tr '\n' ' ')" = "644 644 " ]
	# from stdin over an existing file: that file's mode, as lz4 keeps it
	# (never more open than the file replaced)
	"$A" -f -o e1 < a
	lz4 -q -f - e2 < a
	[ "$(stat -c %a e1 e2 | tr '\n' ' ')" = "644 644 " ]
	chmod 600 e1 e2
	"$A" -f -o e1 < a
	lz4 -q -f - e2 < a
	[ "$(stat -c %a e1 e2 | tr '\n' ' ')" = "600 600 " ]
	# several FILEs (-f: zstd asks first), as zstd: 0666 less the umask
	"$A" -f a a.out -o both.zst
	[ "$(stat -c %a both.zst)" = 600 ]
	"$A" -c -d both.zst | cmp - <(cat a a)
}

@test "accel-crypt -f -o over an existing file keeps its permissions, as age does" {
	umask 022
	age-keygen -o key 2> /dev/null
	age -r "$(age-keygen -y key)" -o a.age a
	echo secret > mine
	echo secret > theirs
	chmod 600 mine theirs
	"$ROOT/build/accel-crypt" -d -f -i key -o mine a.age
	age -d -i key -o theirs a.age
	[ "$(stat -c %a mine theirs | tr '\n' ' ')" = "600 600 " ]
	cmp a mine
	# a new file: 0666 less the umask, as age
	"$ROOT/build/accel-crypt" -d -i key -o new a.age
	age -d -i key -o new2 a.age
	[ "$(stat -c %a new new2 | tr '\n' ' ')" = "644 644 " ]
	# encryption over an existing file too
	chmod 640 mine theirs
	"$ROOT/build/accel-crypt" -f -r "$(age-keygen -y key)" -o mine a
	age -r "$(age-keygen -y key)" -o theirs a
	[ "$(stat -c %a mine theirs | tr '\n' ' ')" = "640 640 " ]
	no_temp
}

@test "-f -o on a symlink writes the file it leads to; the link stays, as age and lz4 do" {
	umask 022
	chmod 600 a
	mkdir sub
	echo old > sub/t1
	echo old > sub/t2
	chmod 640 sub/t1 sub/t2
	# relative links are read from the link's folder
	ln -s sub/t1 l1
	ln -s t2 sub/l2
	"$A" -f a -o l1
	lz4 -q -f a sub/l2
	[ -L l1 ] && [ -L sub/l2 ]
	[ "$("$A" -d < sub/t1 | cmp - a && echo same)" = same ]
	lz4 -dc sub/t2 | cmp - a
	# the target gets the source's mode, as lz4 gives it
	[ "$(stat -c %a sub/t1 sub/t2 | tr '\n' ' ')" = "600 600 " ]
	# the temporary was beside the target, and is gone
	no_temp
	[ -z "$(find sub -name '.*' -print)" ]
	# a chain of links, and one that leads nowhere yet
	ln -s l1 l0
	ln -s sub/new l3
	"$A" -f -d -o l0 < <("$A" < a)
	cmp sub/t1 a
	[ -L l0 ] && [ -L l1 ]
	"$A" -f -o l3 < a
	[ -L l3 ]
	"$A" -d < sub/new | cmp - a
	# accel-crypt -d as age -d
	age-keygen -o key 2> /dev/null
	age -r "$(age-keygen -y key)" -o a.age a
	echo old > sub/t4
	echo old > sub/t5
	chmod 600 sub/t4 sub/t5
	ln -s sub/t4 l4
	ln -s sub/t5 l5
	"$ROOT/build/accel-crypt" -d -f -i key -o l4 a.age
	age -d -i key -o l5 a.age
	[ -L l4 ] && [ -L l5 ]
	cmp sub/t4 a
	cmp sub/t5 a
	[ "$(stat -c %a sub/t4 sub/t5 | tr '\n' ' ')" = "600 600 " ]
	# without -f an existing link is not written through
	run --separate-stderr "$A" a -o l4
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: l4 already exists; use -f to overwrite it" ]
	cmp sub/t4 a
	# a loop of links is named
	ln -s loop2 loop1
	ln -s loop1 loop2
	run --separate-stderr "$A" -f a -o loop1
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: cannot write loop1: Too many levels of symbolic links" ]
}

@test "-o on a FIFO writes into it and leaves the FIFO; -o /dev/null needs no -f" {
	mkfifo fifo
	cat fifo > got &
	"$A" -f a -o fifo
	wait $!
	[ -p fifo ]
	"$A" -d < got | cmp a -
	no_temp
	# accel-detect -o replaces files atomically, but a FIFO is written into
	cat fifo > inv &
	"$D" -o fifo
	wait $!
	[ -p fifo ]
	grep -q '^  cpu0 ' inv
	# as zstd does, a FIFO needs no -f (nothing in it is replaced) ...
	cat fifo > got2 &
	"$A" a -o fifo
	wait $!
	[ -p fifo ]
	"$A" -d < got2 | cmp a -
	# ... and neither does /dev/null; a regular file does
	"$A" a -o /dev/null
	touch file
	run --separate-stderr "$A" a -o file
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: file already exists; use -f to overwrite it" ]
	[ ! -s file ]
}

@test "-f -o on a device node writes into it and never replaces it" {
	if ! mknod null c 1 3 2> /dev/null; then
		skip "mknod needs root"
	fi
	"$A" -f a -o null
	[ -c null ]
	[ "$(stat -c %t:%T null)" = 1:3 ]
	"$A" -f -d -o null < <("$A" < a)
	[ -c null ]
	no_temp
}

@test "-f -o on a folder is an error that names it" {
	mkdir dir
	run --separate-stderr "$A" -f a -o dir
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: cannot write dir: Is a directory" ]
	[ -d dir ]
	no_temp
}

# killed SIGNAL [CMD...]: start a run of CMD (accel-compress by default)
# that reads a FIFO held open (so it never ends), wait for its temporary
# file, write $FEED (some text by default) into the FIFO, send SIGNAL; it
# must die of that signal and leave no temporary file and no output.
killed() {
	local sig=$1
	shift
	[ $# -gt 0 ] || set -- "$A"
	mkfifo in
	exec 8<> in
	# an asynchronous command starts with SIGINT and SIGQUIT ignored; env
	# puts them back to the default, as a shell with job control does
	env --default-signal "$@" in -o out 8>&- &
	local pid=$! i
	for i in $(seq 1 200); do
		[ -n "$(find . -maxdepth 1 -name '.out.??????' -print)" ] && break
		sleep 0.05
	done
	[ -n "$(find . -maxdepth 1 -name '.out.??????' -print)" ]
	printf '%s' "${FEED-some input}" >&8
	kill -s "$sig" "$pid"
	local status=0
	wait "$pid" || status=$?
	exec 8>&-
	echo "status $status"
	[ "$status" -eq $(( 128 + $(kill -l "$sig") )) ]
	[ ! -e out ]
	no_temp
}

@test "a signal that ends the run removes the temporary file: INT, TERM, HUP" {
	killed INT
	rm in; killed TERM
	rm in; killed HUP
}

@test "a signal that ends the run removes the temporary file: QUIT, USR1, USR2, ALRM, XCPU, XFSZ" {
	for sig in QUIT USR1 USR2 ALRM XCPU XFSZ; do
		rm -f in
		killed "$sig"
	done
}

@test "accel-infer -o: a signal removes the temporary file though its libraries catch signals too" {
	# ONNX Runtime, and OpenCV's OpenCL through PoCL and LLVM (which
	# catches INT, TERM, HUP ... to remove files of its own), load after
	# the start-up that installs the handler: theirs hand the signal on.
	[ -f "$ROOT/build/plugins/accel_onnxruntime.so" ] || skip "no onnxruntime backend"
	/usr/bin/python3 "$ROOT/tests/infer/models.py" "$PWD"
	# nothing to read yet: the reader waits
	FEED=
	for sig in TERM INT HUP; do
		rm -f in
		killed "$sig" "$ROOT/build/accel-infer" -m lin.onnx
	done
}

@test "a signal the parent ignored (nohup) stays ignored" {
	mkfifo in
	exec 8<> in
	(trap '' HUP USR1; exec "$A" in -o out 8>&-) &
	local pid=$!
	for i in $(seq 1 100); do
		[ -n "$(find . -maxdepth 1 -name '.out.??????' -print)" ] && break
		sleep 0.05
	done
	cat a >&8
	kill -s HUP "$pid"
	kill -s USR1 "$pid"
	sleep 0.2
	kill -0 "$pid"
	exec 8>&-
	wait "$pid"
	"$A" -c -d out | cmp a -
	no_temp
}

@test "-l of many files into head -1 ends quietly with status 0" {
	for i in $(seq 1 2000); do echo "$i" > "f$i"; done
	"$A" -c -q f1 > f1.zst
	for i in $(seq 2 2000); do cp f1.zst "f$i.zst"; done
	run --separate-stderr bash -c '"$1" -l f*.zst | head -n 1; echo "${PIPESTATUS[0]}" >&2' _ "$A"
	[ "$output" = " Frames  Skips     Compressed   Uncompressed   Ratio  Check  Format Filename" ]
	[ "$stderr" = 0 ]
	run --separate-stderr bash -c '"$1" -l --json f*.zst | head -n 1; echo "${PIPESTATUS[0]}" >&2' _ "$A"
	[ "$output" = "{" ]
	[ "$stderr" = 0 ]
}

@test "a full disk is named: cannot write stdout: No space left on device" {
	# compression (parallel path)
	run --separate-stderr "$A" -c a
	run --separate-stderr bash -c '"$1" -c a > /dev/full' _ "$A"
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: cannot write stdout: No space left on device" ]
	# our own frames decompress in parallel
	"$A" a -o a.zst
	run --separate-stderr bash -c '"$1" -c -d a.zst > /dev/full' _ "$A"
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: cannot write stdout: No space left on device" ]
	# a gzip member of another tool is decoded sequentially
	gzip -c a > a.gz
	run --separate-stderr bash -c '"$1" -c -d a.gz > /dev/full' _ "$A"
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: cannot write stdout: No space left on device" ]
	run --separate-stderr bash -c '"$1" -d < a.gz > /dev/full' _ "$A"
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: cannot write stdout: No space left on device" ]
	# -f -o names the device
	run --separate-stderr "$A" -d -f a.gz -o /dev/full
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: cannot write /dev/full: No space left on device" ]
	# --list
	run --separate-stderr bash -c '"$1" -l a.zst > /dev/full' _ "$A"
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: cannot write stdout: No space left on device" ]
	# accel-detect
	run --separate-stderr bash -c '"$1" > /dev/full' _ "$D"
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-detect: cannot write stdout: No space left on device" ]
	run --separate-stderr "$D" -o /dev/full
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-detect: cannot write /dev/full: No space left on device" ]
}

@test "--help, -V and the generated texts into a full disk exit 1 with one line" {
	for p in "$A" "$D"; do
		for opt in --help -h -V --version --help-man '--completion=bash'; do
			run --separate-stderr bash -c '"$1" "$2" > /dev/full' _ "$p" "$opt"
			echo "$p $opt: $status $stderr"
			[ "$status" -eq 1 ]
			[ "$stderr" = "$(basename "$p"): cannot write stdout: No space left on device" ]
		done
	done
}

# statuses PROG: the exit statuses --help lists, one a line.
help_statuses() {
	"$1" --help | grep '^Exit status:' | grep -o '[0-9] [a-z]' | cut -c1
}

# man_statuses PAGE: the statuses of the man page's EXIT STATUS section.
man_statuses() {
	sed -n '/^\.SH "*EXIT STATUS/,/^\.SH /p' "$1" | grep -A1 '^\.TP' | grep -o '^\.B [0-9]' | cut -c4
}

@test "--help lists each program's own exit statuses, as its man page does" {
	run "$A" --help
	[[ "$output" == *"Exit status: 0 success, 1 failure, 2 usage error, 3 input failed an integrity check."* ]]
	run "$D" --help
	[[ "$output" == *"Exit status: 0 success, 1 failure, 2 usage error, 4 requirement not met."* ]]
	[ "$(help_statuses "$A" | tr '\n' ' ')" = "0 1 2 3 " ]
	[ "$(help_statuses "$D" | tr '\n' ' ')" = "0 1 2 4 " ]
	[ "$(man_statuses "$ROOT/build/man/accel-compress.1")" = "$(help_statuses "$A")" ]
	[ "$(man_statuses "$ROOT/build/man/accel-detect.1")" = "$(help_statuses "$D")" ]
}

@test "accel-detect lists and accepts only the options it acts on" {
	run "$D" --help
	[[ "$output" != *"--fallback"* && "$output" != *"--threads"* && "$output" != *"--progress"* ]]
	[[ "$output" == *"--backend"* && "$output" == *"--verbose"* ]]
	for opt in --fallback=cpu -T2 --threads=2 --progress --no-progress; do
		run --separate-stderr "$D" "$opt"
		[ "$status" -eq 2 ]
		[[ "${stderr_lines[0]}" == "accel-detect: unknown option "* ]]
	done
	# nor does it read their environment
	ACCEL_THREADS=lots ACCEL_FALLBACK=maybe "$D" > /dev/null
}

# fault SPEC LINE: accel-compress with ACCEL_FAULT=SPEC exits 2 with LINE and
# leaves no output.
fault() {
	run --separate-stderr env ACCEL_FAULT="$1" "$A" a -o out
	echo "ACCEL_FAULT='$1': status $status, stderr $stderr"
	[ "$status" -eq 2 ]
	[ "$stderr" = "accel-compress: $2 (see accel(7), TESTING)" ]
	[ ! -e out ]
	no_temp
}

@test "a malformed ACCEL_FAULT is an error naming the bad part" {
	fault 'cpu:1,,2' "ACCEL_FAULT is malformed: empty unit number in 'cpu:1,,2'"
	fault ';' "ACCEL_FAULT is malformed: empty rule in ';'"
	fault 'cpu:1;' "ACCEL_FAULT is malformed: empty rule in 'cpu:1;'"
	fault 'cpu' "ACCEL_FAULT is malformed: 'cpu' is not ENGINE:UNITS"
	fault 'cpu:3-1' "ACCEL_FAULT is malformed: range '3-1' ends before it starts in 'cpu:3-1'"
	fault 'cpu:two' "ACCEL_FAULT is malformed: 'two' is not a unit number or range (3, 5-7) in 'cpu:two'"
	fault 'vulkna:2' "ACCEL_FAULT: no engine or backend named 'vulkna'"
	fault 'cpu:gpu0:2' "ACCEL_FAULT: no engine or backend named 'cpu:gpu0'"
	# a well-formed one that names the CPU engine still works
	ACCEL_FAULT='cpu:5' "$A" -q a -o out --fallback none -B 1M
	"$A" -c -d out | cmp a -
}

@test "a plugin table without run or name is a reason, never a crash" {
	run --separate-stderr env ACCEL_BACKEND_PATH="$BAD" "$D" -v
	[ "$status" -eq 0 ]
	[[ "$output" == *"norun    not loaded             $BAD/accel_norun.so: plugin table is malformed: it offers zstd.compress but has no open, run, close"* ]]
	[[ "$output" == *"noname   not loaded             $BAD/accel_noname.so: plugin table is malformed (name or probe missing)"* ]]
	run --separate-stderr env ACCEL_BACKEND_PATH="$BAD" "$A" -v -b norun,cpu a -o out
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"norun            left out: plugin table is malformed: it offers zstd.compress but has no open, run, close"* ]]
	"$A" -c -d out | cmp a -
}

@test "more plugins than the registry holds is a reason, not silence" {
	# The registry grows past 16 to 64 backends: cpu and p01..p63 are
	# registered (each with its own reason: a copy exports another
	# table's name), p64 holds the reason of those left out.
	mkdir many
	for i in $(seq -w 1 70); do cp "$BAD/accel_norun.so" "many/accel_p$i.so"; done
	run --separate-stderr env ACCEL_BACKEND_PATH="$PWD/many" "$D" -v
	[ "$status" -eq 0 ]
	[[ "$output" =~ p16\ +not\ loaded\ +[^\ ]*/accel_p16.so:\ plugin\ does\ not\ export\ accel_backend_p16 ]]
	[[ "$output" =~ p63\ +not\ loaded\ +[^\ ]*/accel_p63.so:\ plugin\ does\ not\ export\ accel_backend_p63 ]]
	[[ "$output" =~ p64\ +not\ loaded\ +[^\ ]*/accel_p64.so:\ the\ registry\ is\ full:\ libaccel\ holds\ at\ most\ 64\ backends\ \([0-9]+\ plugins\ left\ out\) ]]
	[[ "$output" != *"p65 "* ]]
}

@test "plugins export only their table, accel_backend_NAME" {
	local n=0 so name
	for so in "$ROOT"/build/plugins/accel_*.so; do
		n=$((n + 1))
		name=$(basename "$so" .so)
		# (a sanitizer build adds its own __asan and __odr_asan symbols)
		run bash -c "nm -D --defined-only '$so' | grep -v -e ' __odr_asan' -e ' __asan' -e ' __ubsan' | awk '{ print \$3 }'"
		echo "$so: $output"
		[ "$output" = "accel_backend_${name#accel_}" ]
	done
	[ "$n" -gt 0 ]
}

@test "libaccel exports only the accel_ API" {
	# (a sanitizer build adds its own __asan and __odr_asan symbols)
	run bash -c "nm -D --defined-only '$ROOT/build/lib/libaccel.so' | grep -v -e ' accel_' -e ' __odr_asan' -e ' __asan' -e ' __ubsan'"
	[ -z "$output" ]
	nm -D --defined-only "$ROOT/build/lib/libaccel.so" | grep -q ' T accel_stream_run$'
}

# closed_std STDIN_LINE CMD...: CMD (reading stdin) with each of fds 0, 1 and
# 2 closed: no hang; stdin closed is exit 1 with STDIN_LINE; stdout closed is
# exit 1 with "PROG: cannot write stdout: Bad file descriptor", as cat and
# zstd say; stderr closed with -v -o out writes out as a run with all three
# open does (the messages land nowhere, never in out). $IN is the input.
closed_std() {
	local line=$1 prog
	shift
	prog=$(basename "$1")
	run --separate-stderr timeout 60 bash -c '"$@" <&-' _ "$@"
	echo "$prog <&-: status $status, stderr $stderr"
	[ "$status" -eq 1 ]
	[ "$stderr" = "$line" ]
	run --separate-stderr timeout 60 bash -c 'in=$1; shift; "$@" < "$in" >&-' _ "$IN" "$@"
	echo "$prog >&-: status $status, stderr $stderr"
	[ "$status" -eq 1 ]
	[ "$stderr" = "$prog: cannot write stdout: Bad file descriptor" ]
	rm -f ref out
	"$@" -o ref < "$IN"
	run timeout 60 bash -c 'in=$1; shift; "$@" -v -o out < "$in" 2>&-' _ "$IN" "$@"
	echo "$prog 2>&-: status $status"
	[ "$status" -eq 0 ]
	cmp ref out
}

@test "fds 0, 1, 2 closed: accel-compress, accel-crypt, accel-fft" {
	IN=a
	closed_std "accel-compress: cannot read stdin: Bad file descriptor" "$A"
	IN=a.zst
	"$A" a -o a.zst
	closed_std "accel-compress: cannot read stdin: Bad file descriptor" "$A" -d
	age-keygen -o key 2> /dev/null
	# (decryption: the output of encryption differs from run to run)
	"$ROOT/build/accel-crypt" -r "$(age-keygen -y key)" -o a.age a
	IN=a.age
	closed_std "accel-crypt: cannot read -: Bad file descriptor" "$ROOT/build/accel-crypt" -d -i key
	head -c 65536 /dev/urandom > s.cf32
	IN=s.cf32
	closed_std "accel-fft: cannot read stdin: Bad file descriptor" "$ROOT/build/accel-fft" -n 64
}

@test "fds 0, 1, 2 closed: accel-crypt hash reads no pipe of its own, says what sha256sum says" {
	run --separate-stderr timeout 60 bash -c '"$1" hash <&-' _ "$ROOT/build/accel-crypt"
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-crypt: -: Bad file descriptor" ]
	run --separate-stderr bash -c 'sha256sum <&-'
	[ "${stderr_lines[0]}" = "sha256sum: -: Bad file descriptor" ]
	run --separate-stderr timeout 60 bash -c '"$1" hash < a >&-' _ "$ROOT/build/accel-crypt"
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-crypt: cannot write stdout: Bad file descriptor" ]
	run timeout 60 bash -c '"$1" hash -v a 2>&-' _ "$ROOT/build/accel-crypt"
	[ "$status" -eq 0 ]
	[ "$output" = "$(sha256sum a)" ]
}

@test "fds 0, 1, 2 closed: accel-detect writes its inventory to no file a library opened" {
	run --separate-stderr timeout 60 bash -c '"$1" >&-' _ "$D"
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-detect: cannot write stdout: Bad file descriptor" ]
	run --separate-stderr timeout 60 bash -c '"$1" <&-' _ "$D"
	[ "$status" -eq 0 ]
	[[ "$output" == *"  cpu0 "* ]]
	run timeout 60 bash -c '"$1" -v -o inv 2>&-' _ "$D"
	[ "$status" -eq 0 ]
	grep -q '^  cpu0 ' inv
	run ! grep -q 'accel-detect:' inv
}

@test "fds 0, 1, 2 closed: accel-transcode" {
	ffmpeg -v error -f lavfi -i testsrc2=size=64x48:rate=10:duration=0.5 -c:v libx264 -preset ultrafast \
		-pix_fmt yuv420p clip.mp4
	IN=clip.mp4
	closed_std "accel-transcode: cannot read stdin: Bad file descriptor" "$ROOT/build/accel-transcode" --to y4m
}

@test "fds 0, 1, 2 closed: accel-infer" {
	[ -f "$ROOT/build/plugins/accel_onnxruntime.so" ] || skip "no onnxruntime backend"
	/usr/bin/python3 "$ROOT/tests/infer/models.py" "$PWD"
	/usr/bin/python3 -c "import numpy as np; np.save('x.npy', np.ones((2, 4), 'f4'))"
	IN=x.npy
	closed_std "accel-infer: cannot read -: Bad file descriptor" "$ROOT/build/accel-infer" -m lin.onnx
}

@test "-o /dev/stdout into a pipe writes the pipe (its link names pipe:[N], no file), as a shell's > does" {
	run -0 bash -c '"$1" -c -o /dev/stdout a | zstd -q -d -c | cmp - a' _ "$A"
	run -0 bash -c '"$1" -c cpu -o /dev/stdout | head -1' _ "$D"
	[ "$output" = "CPU" ]
	# through a link of our own to the same: the same
	ln -s /dev/stdout so
	run -0 bash -c '"$1" -f -o so < a | zstd -q -d -c | cmp - a' _ "$A"
}
