#!/usr/bin/env bats
# Programs between two pipes: the bytes out are those of a run from and to
# files, and the pipes on stdin and stdout grow to 1 MiB (never shrink).

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	C="$ROOT/build/accel-crypt"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	# 3 MiB and a bit, over several units and not a whole number of them
	{ seq 1 300000; head -c 1000000 /dev/urandom; seq 7 3 400000; } > in
}

@test "accel-compress from a pipe to a pipe: the bytes of a run on files, both ways" {
	for f in zstd gzip lz4; do
		"$A" -q -F "$f" -B 256K -o "file.$f" in
		cat in | "$A" -q -F "$f" -B 256K | cat > "pipe.$f"
		cmp "file.$f" "pipe.$f"
		"$A" -q -d -o "file.$f.out" "file.$f"
		cat "file.$f" | "$A" -q -d | cat > "pipe.$f.out"
		cmp in "file.$f.out"
		cmp in "pipe.$f.out"
	done
}

@test "accel-crypt from a pipe to a pipe: decrypts to the bytes of a run on files; hashes agree" {
	"$C" keygen -o key 2>/dev/null
	rcpt=$("$C" keygen -y key)
	cat in | "$C" -q -r "$rcpt" | cat > pipe.age
	"$C" -q -r "$rcpt" -o file.age in
	"$C" -q -d -i key -o file.out file.age
	cat pipe.age | "$C" -q -d -i key | cat > pipe.out
	cmp in file.out
	cmp in pipe.out
	cat file.age | "$C" -q -d -i key | cat > pipe2.out
	cmp in pipe2.out
	[ "$(cat in | "$C" hash -q | cat)" = "$(sha256sum < in)" ]
}

# Runs PROGRAM ARGS... with stdin and stdout on pipes first set to START
# bytes, feeding `in` and draining stdout; prints the two pipe sizes seen
# half-way. Exit status 77: START is more than this process may set.
pipe_sizes() {
	python3 - "$@" <<'EOF'
import fcntl, os, subprocess, sys, threading
F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032
start, argv = int(sys.argv[1]), sys.argv[2:]
ir, iw = os.pipe()
orr, ow = os.pipe()
try:
    for fd in (iw, ow):
        fcntl.fcntl(fd, F_SETPIPE_SZ, start)
except PermissionError:
    sys.exit(77)  # past pipe-max-size without CAP_SYS_RESOURCE
p = subprocess.Popen(argv, stdin=ir, stdout=ow)
os.close(ir)
os.close(ow)
drain = threading.Thread(target=lambda: [None for _ in iter(lambda: os.read(orr, 1 << 16), b"")])
drain.start()
with open("in", "rb") as f:
    os.write(iw, f.read(1))
    data = f.read()
    # half the input in: the program has opened (and grown) both pipes
    os.write(iw, data[: len(data) // 2])
    sizes = fcntl.fcntl(iw, F_GETPIPE_SZ), fcntl.fcntl(orr, F_GETPIPE_SZ)
    os.write(iw, data[len(data) // 2 :])
os.close(iw)
drain.join()
rc = p.wait()
print(*sizes) if rc == 0 else sys.exit(rc)
EOF
}

@test "pipes on stdin and stdout grow to 1 MiB (pipe-max-size when less), and are never shrunk" {
	max=$(cat /proc/sys/fs/pipe-max-size)
	[ "$max" -ge 1048576 ] || skip "pipe-max-size is $max"
	run pipe_sizes 65536 "$A" -q -c
	[ "$status" -eq 0 ]
	[ "$output" = "1048576 1048576" ]
	# a larger pipe (set so by whoever made it) stays as large
	run pipe_sizes 4194304 "$A" -q -c
	[ "$status" -ne 77 ] || skip "no pipe past pipe-max-size without CAP_SYS_RESOURCE"
	[ "$status" -eq 0 ]
	[ "$output" = "4194304 4194304" ]
}
