#!/bin/sh
# Benchmark (not a test): our programs between two pipes beside cat. Each
# case runs `cat IN | PROGRAM | cat >/dev/null` and, in the same run, the
# same bytes through `cat RAW | cat | cat >/dev/null`; it prints both in MB/s
# of the uncompressed (plain) bytes and ours / cat. The input is SIZE bytes
# (256M) of this machine's files; the best of REPS (3) runs counts. CASES
# picks cases by name (default all). accel-bench has no pipe mode, so this is
# a plain script.
set -eu
B=${ACCEL_BUILD:-build}
SIZE=${SIZE:-256M}
REPS=${REPS:-3}
CASES=${CASES:-zstd.d lz4.d zstd.c age.d age.e sha256}
dir=$(mktemp -d "${TMPDIR:-/tmp}/accel-pipes.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM

# Compressible input: up to 64 MiB of files under /usr/lib and /usr/share,
# again and again until SIZE.
bytes=$(numfmt --from=iec "$SIZE")
find /usr/lib /usr/share -type f -size +64k 2>/dev/null | head -1000 | xargs cat 2>/dev/null |
	head -c 64M >"$dir/seed" || :
seed=$(stat -c %s "$dir/seed")
n=$((bytes / seed + 1))
while [ "$n" -gt 0 ]; do cat "$dir/seed"; n=$((n - 1)); done 2>/dev/null | head -c "$bytes" >"$dir/raw"
rm -f "$dir/seed"
"$B/accel-compress" -q -c "$dir/raw" >"$dir/raw.zst"
"$B/accel-compress" -q -c --format lz4 "$dir/raw" >"$dir/raw.lz4"
age-keygen -o "$dir/key" 2>/dev/null
rcpt=$(age-keygen -y "$dir/key")
"$B/accel-crypt" -q -r "$rcpt" "$dir/raw" >"$dir/raw.age"

# Seconds of the best of REPS runs of the shell command $1.
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

printf '%-8s %10s %10s %7s\n' case 'ours MB/s' 'cat MB/s' ratio
for c in $CASES; do
	case $c in
	zstd.d) cmd="cat '$dir/raw.zst' | '$B/accel-compress' -q -d -c" ;;
	lz4.d) cmd="cat '$dir/raw.lz4' | '$B/accel-compress' -q -d -c" ;;
	zstd.c) cmd="cat '$dir/raw' | '$B/accel-compress' -q -c" ;;
	age.d) cmd="cat '$dir/raw.age' | '$B/accel-crypt' -q -d -i '$dir/key'" ;;
	age.e) cmd="cat '$dir/raw' | '$B/accel-crypt' -q -r '$rcpt'" ;;
	sha256) cmd="cat '$dir/raw' | '$B/accel-crypt' hash -q -a sha256" ;;
	*) echo "pipes.sh: unknown case $c" >&2; exit 2 ;;
	esac
	ours=$(best "$cmd | cat >/dev/null")
	peer=$(best "cat '$dir/raw' | cat | cat >/dev/null")
	echo "$c $bytes $ours $peer" | awk '{ o = $2 / $3 / 1e6; p = $2 / $4 / 1e6;
		printf "%-8s %10.0f %10.0f %7.2f\n", $1, o, p, o / p }'
done
