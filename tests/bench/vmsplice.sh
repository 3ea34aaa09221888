#!/bin/sh
# Benchmark (not a test): why the stream engine writes a unit's output to a
# pipe with write(2) and not vmsplice(2). tests/bench/vmsplice.c writes
# SIZE MiB (2048) in 1 MiB units into `cat >/dev/null` three ways (see its
# header); beside them `cat FILE | cat >/dev/null` on as many bytes from
# tmpfs. Prints the best of REPS (3) runs in MB/s and each / write, then
# for each way whether a reader that passes the pages on (splice(2) into
# pipes of its own, read after the writer ended) gets the bytes written:
# the pages of 16 units whose bytes changed meanwhile (python3).
set -eu
SIZE=${SIZE:-2048}
REPS=${REPS:-3}
dir=$(mktemp -d "${TMPDIR:-/tmp}/accel-vmsplice.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
cc -O2 -o "$dir/vmsplice" "$(dirname "$0")/vmsplice.c"
shm=$(mktemp /dev/shm/accel-vmsplice.XXXXXX)
trap 'rm -rf "$dir" "$shm"' EXIT INT TERM
head -c "${SIZE}M" /dev/zero >"$shm"

best() {
	b=
	i=0
	while [ "$i" -lt "$REPS" ]; do
		t0=$(date +%s.%N)
		sh -c "$1"
		t1=$(date +%s.%N)
		b=$(echo "$t0 $t1 ${b:-0}" | awk '{ d = $2 - $1; print ($3 == 0 || d < $3) ? d : $3 }')
		i=$((i + 1))
	done
	echo "$b"
}
printf '%-8s %8s %8s\n' case MB/s /write
w=
for c in write gift reuse cat; do
	if [ "$c" = cat ]; then t=$(best "cat '$shm' | cat >/dev/null"); else t=$(best "'$dir/vmsplice' $c $SIZE | cat >/dev/null"); fi
	w=${w:-$t}
	echo "$c $t $w $SIZE" | awk '{ printf "%-8s %8.0f %7.2fx\n", $1, $4 * 1048576 / $2 / 1e6, $3 / $2 }'
done
cat >"$dir/onward.py" <<'PY'
import fcntl, os
# Unit k is 1 MiB of the byte k: its pages spliced on into pipes of our
# own as they come, read once the writer has ended.
pipes, bad, at = [], 0, 0
while True:
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ
    got = 0
    while got < 1 << 20 and (n := os.splice(0, w, (1 << 20) - got)):
        got += n
    os.close(w)
    pipes.append(r)
    if got < 1 << 20:
        break
for r in pipes:
    while b := os.read(r, 1 << 20):
        bad += sum(b[o] != ((at + o) >> 20) & 255 for o in range(0, len(b), 4096))
        at += len(b)
print(bad)
PY
for c in write gift reuse; do
	printf '%-8s pages changed under a reader that splices them on: %s of 4096\n' "$c" \
		"$("$dir/vmsplice" $c 16 | python3 "$dir/onward.py")"
done
