#!/usr/bin/env bats
# accel-crypt end to end, age encryption: keygen, X25519 round trips and
# interop with age both ways (empty input, 64 KiB multiples, several
# recipients), bad input of every kind, output files.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	C="$ROOT/build/accel-crypt"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	age-keygen -o key.txt 2> /dev/null
	REC=$(age-keygen -y key.txt)
}

# The offset of the payload (after the header and the 16-byte nonce).
payload_offset() {
	/usr/bin/python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
i = d.index(b"\n---") + 1
print(d.index(b"\n", i) + 1 + 16)' "$1"
}

@test "keygen: age-keygen's format, mode 0600, public key on stderr, refuses to overwrite" {
	run -0 --separate-stderr "$C" keygen -o id.txt
	[ "$(stat -c %a id.txt)" = 600 ]
	pub=$(sed -n 's/^# public key: //p' id.txt)
	[[ "$pub" == age1* ]]
	[ "$stderr" = "Public key: $pub" ]
	grep -Eq '^# created: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}(Z|[+-][0-9]{2}:[0-9]{2})$' id.txt
	[ "$(grep -c '^AGE-SECRET-KEY-1[0-9A-Z]*$' id.txt)" = 1 ]
	[ "$(age-keygen -y id.txt)" = "$pub" ]
	[ "$("$C" keygen -y id.txt)" = "$pub" ]
	cp id.txt before
	run -1 "$C" keygen -o id.txt
	[ "$output" = "accel-crypt: id.txt already exists; not overwriting a key file" ]
	cmp id.txt before
}

@test "keygen -y: the recipient of age-keygen's identity, from a file and stdin" {
	[ "$("$C" keygen -y key.txt)" = "$REC" ]
	[ "$("$C" keygen -y < key.txt)" = "$REC" ]
	echo "AGE-SECRET-KEY-1NOTAKEY" > bad.txt
	chmod 600 bad.txt
	run -1 "$C" keygen -y bad.txt
	[ "$output" = "accel-crypt: bad.txt: line 1: not an identity (AGE-SECRET-KEY-1..., or an OpenSSH or PEM private key file)" ]
}

@test "X25519: age reads ours and we read age's, empty input and 64 KiB multiples" {
	for n in 0 1 65535 65536 65537 131072 196608 262143 262144 262145 1048576 1048577 3000000; do
		head -c $n /dev/urandom > p
		"$C" -f -r "$REC" -o ours.age p
		age -d -i key.txt ours.age | cmp - p
		age -r "$REC" p > theirs.age
		"$C" -d -i key.txt theirs.age | cmp - p
		"$C" -d -i key.txt < ours.age | cmp - p
	done
}

@test "X25519: sizes of our files are age's (header aside): chunking is the spec's" {
	for n in 0 65536 131073; do
		head -c $n /dev/urandom > p
		"$C" -r "$REC" p > ours.age
		age -r "$REC" p > theirs.age
		[ $(( $(stat -c %s ours.age) - $(payload_offset ours.age) )) = \
		  $(( $(stat -c %s theirs.age) - $(payload_offset theirs.age) )) ]
	done
}

@test "several recipients, -r and -R, each opens the file; age's multi-recipient files too" {
	age-keygen -o k2.txt 2> /dev/null
	age-keygen -o k3.txt 2> /dev/null
	{ echo "# team"; echo; age-keygen -y k2.txt; age-keygen -y k3.txt; } > recipients.txt
	head -c 200000 /dev/urandom > p
	"$C" -r "$REC" -R recipients.txt -o m.age p
	[ "$(grep -c '^-> X25519 ' m.age)" = 3 ]
	for k in key.txt k2.txt k3.txt; do
		age -d -i $k m.age | cmp - p
		"$C" -d -i $k m.age | cmp - p
	done
	age -R recipients.txt -r "$REC" p > a.age
	"$C" -d -i k3.txt a.age | cmp - p
	# several identities, the right one last
	"$C" -d -i k2.txt -i key.txt a.age | cmp - p
}

@test "parallel: a 20 MiB file on 4 threads, byte-identical to age's plaintext both ways" {
	head -c 20000000 /dev/urandom > p
	"$C" -T4 -r "$REC" -o big.age p
	age -d -i key.txt big.age | cmp - p
	"$C" -T4 -d -i key.txt big.age | cmp - p
	run -0 --separate-stderr "$C" -v -T4 -d -i key.txt -o out big.age
	[[ "$stderr" == *"1. openssl:cpu0"* ]]
	cmp out p
}

@test "wrong key: exit 3, one line, no output file" {
	age-keygen -o other.txt 2> /dev/null
	head -c 1000 /dev/urandom > p
	"$C" -r "$REC" p > m.age
	run -3 "$C" -d -i other.txt -o out m.age
	[ "$output" = "accel-crypt: m.age: cannot decrypt: no identity matched any of the recipients (wrong key)" ]
	[ ! -e out ]
}

@test "tampered header: MAC mismatch, exit 3, nothing written" {
	head -c 100000 /dev/urandom > p
	"$C" -r "$REC" p > m.age
	# flip a bit of the ephemeral share's base64 into another valid character
	/usr/bin/python3 -c '
import sys
d = bytearray(open("m.age", "rb").read())
i = d.index(b"\n---") + 5
d[i] = ord("A") if d[i] != ord("A") else ord("B")
open("t.age", "wb").write(d)'
	run -3 --separate-stderr "$C" -d -i key.txt t.age
	[ "$stderr" = "accel-crypt: t.age: cannot decrypt: header MAC mismatch (damaged or tampered header)" ]
	[ -z "$output" ]
	run -3 "$C" -d -i key.txt -o out t.age
	[ ! -e out ]
}

@test "header rules: padding, long lines, bad version, missing MAC, no stanza" {
	head -c 10 /dev/urandom > p
	age -r "$REC" p > m.age
	# a padded body line ('=') is not canonical
	sed '3s/$/=/' m.age > pad.age
	run -3 "$C" -d -i key.txt pad.age
	[ "$output" = "accel-crypt: pad.age: cannot decrypt: header line 3: stanza body is not canonical unpadded base64" ]
	sed '3s/$/AAAAAAAAAAAAAAAAAAAAAAAA/' m.age > long.age
	run -3 "$C" -d -i key.txt long.age
	[ "$output" = "accel-crypt: long.age: cannot decrypt: header line 3: stanza body line longer than 64 columns" ]
	sed '1s/v1/v2/' m.age > v2.age
	run -3 "$C" -d -i key.txt v2.age
	[ "$output" = "accel-crypt: v2.age: cannot decrypt: unsupported age version or malformed first line" ]
	head -n 3 m.age > nomac.age
	run -3 "$C" -d -i key.txt nomac.age
	[ "$output" = "accel-crypt: nomac.age: cannot decrypt: the header is truncated" ]
	{ head -n 1 m.age; sed -n '/^---/,$p' m.age; } > nostanza.age
	run -3 "$C" -d -i key.txt nostanza.age
	[ "$output" = "accel-crypt: nostanza.age: cannot decrypt: header has no recipient stanza" ]
	printf 'hello\n' > plain.txt
	run -3 "$C" -d -i key.txt plain.txt
	[ "$output" = "accel-crypt: plain.txt: cannot decrypt: not an age file (no 'age-encryption.org/v1' line)" ]
	: > empty
	run -3 "$C" -d -i key.txt empty
	[ "$output" = "accel-crypt: empty: cannot decrypt: empty input" ]
}

@test "header size: long stanza lines and megabyte bodies are read as age reads them, up to 64 MiB" {
	head -c 10 /dev/urandom > p
	age -r "$REC" p > m.age
	# an extra stanza after the version line: a 200 KB argument, a
	# 2.6 MB body; both parse, so the MAC (over the changed header) fails
	/usr/bin/python3 - <<'EOF'
import base64
d = open("m.age", "rb").read()
v, rest = d.split(b"\n", 1)
def stanza(arg, body):
    b = base64.b64encode(body).rstrip(b"=")
    lines = [b[i:i + 64] for i in range(0, len(b), 64)]
    if len(b) % 64 == 0:
        lines.append(b"")
    return b"-> grease " + arg + b"\n" + b"\n".join(lines) + b"\n"
open("arg.age", "wb").write(v + b"\n" + stanza(b"A" * 200000, b"x") + rest)
open("body.age", "wb").write(v + b"\n" + stanza(b"B", b"y" * 2600000) + rest)
open("huge.age", "wb").write(v + b"\n" + stanza(b"C", b"z" * (50 << 20)) + rest)
EOF
	for f in arg body; do
		run -1 age -d -i key.txt $f.age
		[[ "$output" == *"bad header MAC"* ]]
		run -3 --separate-stderr "$C" -d -i key.txt $f.age
		[ "$stderr" = "accel-crypt: $f.age: cannot decrypt: header MAC mismatch (damaged or tampered header)" ]
		[ -z "$output" ]
	done
	run -3 --separate-stderr "$C" -d -i key.txt huge.age
	[ "$stderr" = "accel-crypt: huge.age: cannot decrypt: the header is longer than 64 MiB" ]
}

# damage FILE KIND: write d.age, FILE damaged as KIND says.
damage() {
	/usr/bin/python3 - "$1" "$2" "$(payload_offset "$1")" <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
kind, off = sys.argv[2], int(sys.argv[3])
S = 65536 + 16
chunks = [d[i:i + S] for i in range(off, len(d), S)]
head = d[:off]
if kind == "flip":
    c = bytearray(chunks[2]); c[100] ^= 1; chunks[2] = bytes(c)
elif kind == "swap":
    chunks[1], chunks[2] = chunks[2], chunks[1]
elif kind == "dup":
    chunks.insert(2, chunks[1])
elif kind == "drop-last":
    chunks = chunks[:-1]
elif kind == "cut":
    chunks[-1] = chunks[-1][:10]
elif kind == "trailing":
    chunks.append(b"x" * 40)
elif kind == "nopayload":
    chunks = []
open("d.age", "wb").write(head + b"".join(chunks))
EOF
}

@test "damaged payload: flipped, reordered, duplicated, dropped, cut chunks and trailing data fail with exit 3 naming the chunk" {
	head -c 300000 /dev/urandom > p
	"$C" -r "$REC" p > m.age
	declare -A want=(
		[flip]="chunk 2 at byte offset $(( $(payload_offset m.age) + 2 * 65552 )) failed authentication (damaged, reordered or truncated)"
		[swap]="chunk 1 at byte offset $(( $(payload_offset m.age) + 65552 )) failed authentication (damaged, reordered or truncated)"
		[dup]="chunk 2 at byte offset $(( $(payload_offset m.age) + 2 * 65552 )) failed authentication (damaged, reordered or truncated)"
		[drop-last]="chunk 3 at byte offset $(( $(payload_offset m.age) + 3 * 65552 )) failed authentication (damaged, reordered or truncated)"
		[cut]="chunk 4 is truncated (10 bytes)"
		[trailing]="chunk 4 at byte offset $(( $(payload_offset m.age) + 4 * 65552 )) failed authentication (damaged, reordered or truncated)"
		[nopayload]="chunk 0 is missing (truncated file)"
	)
	for kind in flip swap dup drop-last cut trailing nopayload; do
		damage m.age $kind
		run -3 "$C" -d -i key.txt -o out d.age
		[ "$output" = "accel-crypt: d.age: cannot decrypt: ${want[$kind]}" ] || { echo "$kind: $output"; false; }
		[ ! -e out ]
		# age agrees that each is broken
		run ! age -d -i key.txt d.age
	done
}

@test "a chunk damaged in the middle: the chunks before it are written, the bytes age -d writes, at any -T, to a pipe too" {
	head -c 3000000 /dev/urandom > p
	"$C" -r "$REC" p > m.age
	# Chunk 22 of 46, within a unit of several chunks.
	off=$(( $(payload_offset m.age) + 22 * 65552 + 1000 ))
	printf '\x55' | dd of=m.age bs=1 seek=$off conv=notrunc status=none
	run ! sh -c 'age -d -i key.txt m.age > a.out'
	[ "$(stat -c %s a.out)" = $(( 22 * 65536 )) ]
	head -c $(( 22 * 65536 )) p | cmp - a.out
	for t in 1 2 4; do
		for i in 1 2 3; do
			run -3 sh -c '"$0" -d -i key.txt -T "$1" m.age > o.out' "$C" $t
			[ "$output" = "accel-crypt: m.age: cannot decrypt: chunk 22 at byte offset $(( off - 1000 )) failed authentication (damaged, reordered or truncated)" ]
			cmp o.out a.out
		done
	done
	run -3 bash -c 'set -o pipefail; cat m.age | "$0" -d -i key.txt | cat > o.out' "$C"
	cmp o.out a.out
	# -o FILE: nothing is left.
	run -3 "$C" -d -i key.txt -o out m.age
	[ ! -e out ]
}

@test "a full final chunk followed by more data: trailing data after the final chunk" {
	head -c 65536 /dev/urandom > p
	"$C" -r "$REC" p > m.age
	{ cat m.age; head -c 100 /dev/urandom; } > t.age
	run -3 sh -c '"$0" -d -i key.txt t.age > t.out' "$C"
	[ "$output" = "accel-crypt: t.age: cannot decrypt: trailing data after the final chunk 0" ]
	# The final chunk authenticated: it is written, as age writes it.
	cmp t.out p
	run ! sh -c 'age -d -i key.txt t.age > a.out'
	cmp t.out a.out
}

@test "an empty final chunk after a full one is refused; an empty file's single empty chunk is not" {
	# A 2-chunk file cut after its first chunk, plus a 16-byte stub where
	# the final chunk's tag would be.
	head -c 70000 /dev/urandom > q
	"$C" -r "$REC" q > two.age
	off=$(payload_offset two.age)
	{ head -c $(( off + 65552 )) two.age; head -c 16 /dev/zero; } > e.age
	run -3 sh -c '"$0" -d -i key.txt e.age > e.out' "$C"
	[ "$output" = "accel-crypt: e.age: cannot decrypt: final chunk 1 is empty" ]
	# The full chunk before it is written, as age writes it.
	head -c 65536 q | cmp - e.out
	run ! sh -c 'age -d -i key.txt e.age > a.out'
	cmp e.out a.out
	: > empty
	"$C" -r "$REC" empty > empty.age
	[ $(( $(stat -c %s empty.age) - $(payload_offset empty.age) )) = 16 ]
	"$C" -d -i key.txt empty.age | cmp - empty
	age -d -i key.txt empty.age | cmp - empty
}

@test "-o FILE: not over an existing file without -f; stdout to a pipe" {
	head -c 1000 /dev/urandom > p
	echo keep > out.age
	run -1 "$C" -r "$REC" -o out.age p
	[ "$output" = "accel-crypt: out.age already exists; use -f to overwrite it" ]
	[ "$(cat out.age)" = keep ]
	"$C" -f -r "$REC" -o out.age p
	age -d -i key.txt out.age | cmp - p
}

@test "usage: no recipient, bad recipient, two inputs; -e -i encrypts to the identities' recipients, as age -e -i" {
	run -2 "$C" -e
	[ "${lines[0]}" = "accel-crypt: no recipient: give -r RECIPIENT, -R FILE, -i IDENTITY or -p" ]
	run -2 "$C" -r age1notarecipient
	[ "${lines[0]}" = "accel-crypt: -r: 'age1notarecipient' is not an age1... recipient" ]
	echo hello > p
	age-keygen -o k2.txt 2> /dev/null
	"$C" -e -i key.txt -r "$(age-keygen -y k2.txt)" -o both.age p
	age -d -i key.txt both.age | cmp - p
	age -d -i k2.txt both.age | cmp - p
	age -e -i key.txt -o theirs.age p
	"$C" -d -i key.txt theirs.age | cmp - p
	# an encrypted OpenSSH key: its public key, no passphrase asked
	ssh-keygen -q -t ed25519 -N pass -f locked
	setsid "$C" -i locked -o l.age p < /dev/null
	echo pass > pw
	"$C" -d -i locked --passphrase-file pw l.age | cmp - p
	run -2 "$C" -p -i key.txt p
	[ "${lines[0]}" = "accel-crypt: -p and a passphrase cannot be combined with recipients (-r, -R, -i)" ]
	run -2 "$C" -r "$REC" a b
	[ "${lines[0]}" = "accel-crypt: one input FILE at most ('b' is a second)" ]
	head -c 10 /dev/urandom | age -r "$REC" > m.age
	run -2 "$C" -d m.age
	[ "$output" = "accel-crypt: m.age: cannot decrypt: no identity given (-i FILE)" ]
}

@test "an identity file readable by its group or by others gets a warning, not a refusal" {
	head -c 10 /dev/urandom > p
	"$C" -r "$REC" p > m.age
	for mode in 644 640 604; do
		chmod $mode key.txt
		run -0 --separate-stderr "$C" -d -i key.txt -o out$mode m.age
		[ "$stderr" = "accel-crypt: warning: key.txt: the identity file is readable by other users (chmod 600 it)" ]
		cmp out$mode p
	done
	chmod 600 key.txt
	run -0 --separate-stderr "$C" -d -i key.txt -o out2 m.age
	[ -z "$stderr" ]
}

@test "a malformed line of a recipients file is never shown: it may be a secret (an identity file given to -R)" {
	age-keygen -o k2.txt 2> /dev/null
	echo hi > p
	printf 'not a recipient, perhaps a password\n' > secret.txt
	run -1 "$C" -R secret.txt p
	[ "$output" = "accel-crypt: secret.txt: line 1: malformed recipient" ]
	run -1 "$C" -R k2.txt p
	[ "$output" = "accel-crypt: k2.txt: line 3: an identity (AGE-SECRET-KEY-1...), not a recipient: identities go to -i" ]
	[[ "$output" != *"$(tail -1 k2.txt)"* ]]
	# age hides it too
	run ! age -R k2.txt p
	[[ "$output" == *"malformed recipient at line 3"* ]]
}

@test "key files are bytes: a NUL byte in a recipients or identity file is a malformed line (exit 1), as age says" {
	age-keygen -o k2.txt 2> /dev/null
	R2=$(age-keygen -y k2.txt)
	head -c 10 /dev/urandom > p
	# a NUL ends neither the line nor the file: age refuses line 2 too
	printf '%s\n%s\0junk\n%s\n' "$REC" "$REC" "$R2" > rcp.txt
	run ! age -R rcp.txt p
	[[ "$output" == *"malformed recipient at line 2"* ]]
	run -1 "$C" -R rcp.txt -o out.age p
	[ "$output" = "accel-crypt: rcp.txt: line 2: a NUL byte" ]
	[ ! -e out.age ]
	printf '%s\n\0%s\n' "$REC" "$R2" > rcp0.txt
	run -1 "$C" -R rcp0.txt -o out.age p
	[ "$output" = "accel-crypt: rcp0.txt: line 2: a NUL byte" ]
	# KEY NUL junk in an identity file is not the key
	"$C" -r "$REC" p > m.age
	printf '%s\0junk\n' "$(grep ^AGE- key.txt)" > nul.txt
	chmod 600 nul.txt
	run ! age -d -i nul.txt m.age
	run -1 "$C" -d -i nul.txt -o out m.age
	[ "$output" = "accel-crypt: nul.txt: line 1: a NUL byte" ]
	[ ! -e out ]
	{ cat key.txt; printf '# comment\0\n'; } > nul2.txt
	chmod 600 nul2.txt
	run -1 "$C" keygen -y nul2.txt
	[ "$output" = "accel-crypt: nul2.txt: line 4: a NUL byte" ]
	# a CR before each LF is still the line's end, as age reads it
	printf '%s\r\n' "$REC" "$R2" > crlf.txt
	"$C" -R crlf.txt -o crlf.age p
	"$C" -d -i k2.txt crlf.age | cmp - p
}

@test "fault injection: a unit that fails on the only engine ends the run with exit 1 and no -o file" {
	head -c 5000000 /dev/urandom > p
	"$C" -r "$REC" p > m.age
	ACCEL_FAULT=openssl:2 run -1 "$C" -d -i key.txt -o out --fallback none m.age
	[ "$output" = "accel-crypt: m.age: cannot decrypt: openssl:cpu0: unit 2 (byte offset $(( $(payload_offset m.age) + 2 * 4 * 65552 ))) failed: injected fault (ACCEL_FAULT); --fallback none" ]
	[ ! -e out ]
	ACCEL_FAULT=openssl:1 run -1 "$C" -r "$REC" -o out2 p
	[ ! -e out2 ]
}

@test "--help and the man page list the options" {
	run -0 "$C" --help
	[[ "$output" == *"--recipients-file"* ]]
	[[ "$output" == *"--passphrase-fd"* ]]
	run -0 "$C" keygen --help
	[[ "$output" == *"-y"* ]]
	grep -q 'recipients\\-file' "$ROOT/build/man/accel-crypt.1"
}

@test "examples/backup.sh: backup to two recipients, restore, and age + zstd read the archive" {
	age-keygen -o k2.txt 2> /dev/null
	mkdir -p src/sub
	head -c 300000 /dev/urandom > src/a
	seq 1 10000 > src/sub/b
	ACCEL_BUILD="$ROOT/build" "$ROOT/examples/backup.sh" backup src "$PWD/b.tar.zst.age" "$REC" "$(age-keygen -y k2.txt)"
	[ -s b.tar.zst.age.sha256 ]
	ACCEL_BUILD="$ROOT/build" "$ROOT/examples/backup.sh" restore "$PWD/b.tar.zst.age" k2.txt "$PWD/dst"
	diff -r src dst
	age -d -i key.txt b.tar.zst.age | zstd -dq | tar tf - | grep -qx './sub/b'
	printf 'x' >> b.tar.zst.age
	run ! env ACCEL_BUILD="$ROOT/build" "$ROOT/examples/backup.sh" restore "$PWD/b.tar.zst.age" k2.txt "$PWD/dst2"
	[ ! -e dst2 ]
}

@test "routes: age.encrypt, age.decrypt and the hashes run on openssl:cpu0; -b cpu names it (the CPU device's engine)" {
	run -0 "$ROOT/build/accel-detect" --routes age.encrypt age.decrypt sha256 sha3-256
	[ "$(grep -c '^  1\. openssl:cpu0 ' <<< "$output")" = 4 ]
	head -c 1000 /dev/urandom > p
	run -0 "$C" -v -b cpu -r "$REC" -o out p
	[[ "$output" == *"  1. openssl:cpu0     named by --backend (cpu: the CPU device's engine for age.encrypt)"* ]]
	age -d -i key.txt out | cmp - p
	"$C" -b openssl -r "$REC" p | age -d -i key.txt | cmp - p
}
