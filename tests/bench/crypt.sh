#!/bin/sh
# Benchmark (not a test): accel-crypt side by side with age (encrypt and
# decrypt, X25519), openssl enc -chacha20, and sha256sum / openssl dgst for
# hashing, on the compress corpus in one run: file to file, and through a
# pipe next to a cat | cat ceiling. Prints MB/s and our/peer ratios.
# Settings: ACCEL_CORPUS_MB (256), ACCEL_BENCH_RUNS (best of, 2), THREADS
# (all cores), ACCEL_BENCH_FILES (files hashed at once, 8).
set -eu
B=${ACCEL_BUILD:-build}
C="$B/accel-crypt"
runs=${ACCEL_BENCH_RUNS:-2}
n=${THREADS:-$(nproc)}
corpus=$(sh tests/bench/corpus.sh)
work=$(mktemp -d "${TMPDIR:-/tmp}/accel-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
size=$(stat -c %s "$corpus")

best() {
	b=""
	i=0
	while [ $i -lt "$runs" ]; do
		t0=$(date +%s.%N)
		"$@"
		t1=$(date +%s.%N)
		b=$(awk -v a="$b" -v t0="$t0" -v t1="$t1" 'BEGIN { d = t1 - t0; print (a == "" || d < a) ? d : a }')
		i=$((i + 1))
	done
	echo "$b"
}
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", b / s / 1e6 }'; }
# row NAME PEER BYTES OURS_S PEER_S
row() {
	printf '%-30s %-34s %9s %9s   %.2fx\n' "$1" "$2" "$(mbps "$3" "$4")" "$(mbps "$3" "$5")" \
		"$(awk -v a="$5" -v b="$4" 'BEGIN { print a / b }')"
}

"$C" keygen -q -o "$work/key.txt"
rec=$("$C" keygen -y "$work/key.txt")
echo "corpus: $corpus ($size bytes), $n threads, best of $runs (noisy on shared machines)"
printf '%-30s %-34s %9s %9s   %s\n' "case" "peer" "ours MB/s" "peer MB/s" "ours/peer"

os=$(best "$C" -f -T "$n" -r "$rec" -o "$work/ours.age" "$corpus")
ps=$(best sh -c "age -r $rec -o '$work/peer.age' '$corpus'")
row "age encrypt, file to file" "age -r" "$size" "$os" "$ps"
os=$(best "$C" -f -T "$n" -d -i "$work/key.txt" -o "$work/ours.out" "$work/peer.age")
ps=$(best sh -c "age -d -i '$work/key.txt' -o '$work/peer.out' '$work/ours.age'")
row "age decrypt, file to file" "age -d" "$size" "$os" "$ps"
cmp -s "$corpus" "$work/ours.out" && cmp -s "$corpus" "$work/peer.out" || { echo "round trip FAILED" >&2; exit 1; }
rm -f "$work/ours.out" "$work/peer.out"

pipe=$(best sh -c "cat '$corpus' | cat > /dev/null")
os=$(best sh -c "cat '$corpus' | '$C' -T $n -r $rec | cat > /dev/null")
row "age encrypt, pipe to pipe" "cat | cat (the pipe's ceiling)" "$size" "$os" "$pipe"
os=$(best sh -c "cat '$work/ours.age' | '$C' -T $n -d -i '$work/key.txt' | cat > /dev/null")
row "age decrypt, pipe to pipe" "cat | cat (the pipe's ceiling)" "$size" "$os" "$pipe"

key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
iv=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
ps=$(best openssl enc -chacha20 -K "$key" -iv "$iv" -in "$corpus" -out "$work/peer.enc")
os=$(best "$C" -f -T "$n" -r "$rec" -o "$work/ours.age" "$corpus")
row "age encrypt vs raw ChaCha20" "openssl enc -chacha20 (1 core, no MAC)" "$size" "$os" "$ps"
rm -f "$work/peer.enc" "$work/ours.age" "$work/peer.age"

os=$(best sh -c "'$C' hash '$corpus' > /dev/null")
ps=$(best sh -c "sha256sum '$corpus' > /dev/null")
row "sha256, one file" "sha256sum" "$size" "$os" "$ps"
ps=$(best sh -c "openssl dgst -sha256 '$corpus' > /dev/null")
row "sha256, one file" "openssl dgst -sha256" "$size" "$os" "$ps"

nf=${ACCEL_BENCH_FILES:-8}
split -n "$nf" "$corpus" "$work/part."
os=$(best sh -c "'$C' hash -T $n '$work'/part.* > /dev/null")
ps=$(best sh -c "openssl dgst -sha256 '$work'/part.* > /dev/null")
row "sha256, $nf files at once" "openssl dgst -sha256 (one by one)" "$size" "$os" "$ps"
ps=$(best sh -c "sha256sum '$work'/part.* > /dev/null")
row "sha256, $nf files at once" "sha256sum (one by one)" "$size" "$os" "$ps"
"$C" hash "$work"/part.* | sha256sum -c --quiet - || { echo "hash mismatch" >&2; exit 1; }
