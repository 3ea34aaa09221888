#!/usr/bin/env bats
# accel-crypt hash: the lines of sha256sum, sha512sum, sha1sum, md5sum,
# b2sum (and openssl dgst for sha3-256), byte for byte; -c with
# sha256sum -c's output and exit status; many files at once.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	C="$ROOT/build/accel-crypt"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	: > empty
	printf 'abc' > abc
	head -c 3000000 /dev/urandom > big
	printf 'x' > 'back\slash'
	printf 'y' > 'new
line'
	printf 'z' > 'with space'
}

# same TOOL ALGO ARGS...: our output and TOOL's are the same bytes, stdout
# and stderr (the program's name aside), and exit status.
same() {
	local tool=$1 algo=$2
	shift 2
	set +e
	"$tool" "$@" > ref.out 2> ref.err < "${IN:-/dev/null}"
	local ref=$?
	"$C" hash -a "$algo" "$@" > our.out 2> our.err < "${IN:-/dev/null}"
	local ours=$?
	set -e
	sed -i "s/^$tool:/accel-crypt:/" ref.err
	diff ref.out our.out || { cat ref.out ref.err our.out our.err; false; }
	diff ref.err our.err
	[ "$ref" = "$ours" ]
}

@test "the lines of sha256sum, sha512sum, sha1sum, md5sum and b2sum, escaped names included" {
	same sha256sum sha256 empty abc big 'back\slash' 'new
line' 'with space'
	same sha512sum sha512 empty abc big 'back\slash'
	same sha1sum sha1 empty abc big
	same md5sum md5 empty abc big 'new
line'
	same b2sum blake2b512 empty abc big
	same sha256sum sha256 --tag empty abc 'back\slash'
	same md5sum md5 --tag abc big
	same b2sum blake2b512 --tag abc
}

@test "blake2b512: libsodium's engine (sodium:cpu0) and OpenSSL's, the one timed faster here first; each and auto print b2sum's lines" {
	[ -f "$ROOT/build/plugins/accel_sodium.so" ] || skip "the sodium plugin is not built (libsodium-dev)"
	head -c 200000 /dev/urandom > mid
	b2sum empty abc big mid 'back\slash' missing > ref.out 2> /dev/null || true
	for b in sodium openssl auto; do
		run -1 --separate-stderr "$C" hash -b "$b" --fallback none -T 2 -a blake2b512 empty abc big mid 'back\slash' missing
		[ "$output" = "$(cat ref.out)" ]
		[ "$stderr" = "accel-crypt: missing: No such file or directory" ]
	done
	IN=big same b2sum blake2b512 --tag - abc
	run -0 --separate-stderr "$C" hash -v -a blake2b512 abc
	# both priors timed (accel_hash_measure), not the constants a failed
	# timing leaves (sodium 1100 or 850, openssl 800); the faster first
	local first second p1 p2
	first=$(sed -nE 's/^  1\. (sodium|openssl):cpu0 +prior ([0-9]+) MB\/s.*/\1 \2/p' <<< "$stderr")
	second=$(sed -nE 's/^  2\. (sodium|openssl):cpu0 +prior ([0-9]+) MB\/s.*/\1 \2/p' <<< "$stderr")
	[ -n "$first" ] && [ -n "$second" ] && [ "${first% *}" != "${second% *}" ]
	p1=${first#* } p2=${second#* }
	[ "$p1" -ge "$p2" ]
	for p in "$first" "$second"; do
		case "$p" in "sodium 1100" | "sodium 850" | "openssl 800") false ;; esac
	done
	# the other algorithms are not libsodium's
	run -0 --separate-stderr "$C" hash -v -a sha512 abc
	grep -qE '^  1\. openssl:cpu0 ' <<< "$stderr"
	grep -qE '^  -  sodium +left out: does not offer this operation' <<< "$stderr"
	"$ROOT/build/accel-detect" -v | grep -qE '^ +libsodium [0-9.]+ \(BLAKE2b: (AVX2|SSE)\)$'
	"$C" --version | grep -qx "libsodium $(pkg-config --modversion libsodium)"
}

@test "sha3-256 agrees with openssl dgst" {
	for f in empty abc big; do
		[ "$("$C" hash -a sha3-256 "$f")" = "$(openssl dgst -sha3-256 -r "$f" | sed 's/ \*/  /')" ]
	done
}

@test "stdin, '-', and a missing file: sha256sum's output and exit status 1" {
	run -0 bash -c "'$C' hash < abc"
	[ "$output" = "$(sha256sum < abc)" ]
	IN=big same sha256sum sha256 abc -
	same sha256sum sha256 abc missing big
	IN=abc same sha256sum sha256 - -
	same sha256sum sha256 'with space' 'a\b' "$(printf 'new\nmissing')"
	mkdir dir
	same sha256sum sha256 abc dir
}

@test "-c: OK, FAILED, unreadable, improperly formatted, summary warnings and exit status as sha256sum -c" {
	sha256sum abc big empty 'back\slash' 'new
line' > sums
	same sha256sum sha256 -c sums
	sed -i '1s/^./0/;1s/^0\(.\)/1\1/' sums
	echo "not a line" >> sums
	echo "$(sha256sum < abc | cut -c1-64)  missing" >> sums
	echo "$(sha256sum < abc | cut -c1-64)  missing2" >> sums
	same sha256sum sha256 -c sums
	same sha256sum sha256 -c --quiet sums
	same sha256sum sha256 -c --status sums
	same sha256sum sha256 -c --ignore-missing sums
	same sha256sum sha256 -c -w sums
	sha256sum abc > ok
	echo junk >> ok
	same sha256sum sha256 -c ok
	same sha256sum sha256 -c --strict ok
	echo junk > none
	same sha256sum sha256 -c none
	sha256sum --tag abc big > tagged
	same sha256sum sha256 -c tagged
	sha256sum -b abc > binary
	same sha256sum sha256 -c binary
	IN=binary same sha256sum sha256 -c -
	md5sum abc big > md5s
	same md5sum md5 -c md5s
}

@test "many files at once: the order of the operands, on 4 threads" {
	for i in $(seq 1 40); do head -c $(( i * 20000 )) /dev/urandom > f$i; done
	sha256sum f* > ref
	"$C" hash -T4 f* > ours
	diff ref ours
	"$C" hash -T4 -c ref > checked
	[ "$(grep -c ': OK$' checked)" = 40 ]
	run -0 --separate-stderr "$C" hash -v -T4 f1 f2
	[[ "$stderr" == *"1. openssl:cpu0"* ]]
}

@test "stdout and stderr in one file: missing files' messages between the lines, as sha256sum's (-T 1 to 8); stdout full or closed" {
	for i in $(seq 1 300); do echo "$i" > "s$i"; done
	args=()
	for i in $(seq 1 300); do args+=("s$i"); [ $((i % 97)) != 0 ] || args+=("gone$i"); done
	for t in 1 2 4 8; do
		set +e
		sha256sum "${args[@]}" > ref 2>&1
		ref=$?
		"$C" hash -T "$t" "${args[@]}" > ours 2>&1
		ours=$?
		set -e
		sed -i 's/^sha256sum:/accel-crypt:/' ref
		diff ref ours
		[ "$ref" = 1 ] && [ "$ours" = 1 ]
	done
	# a full stdout: one line, exit 1; a reader gone: quiet, exit 0
	run -1 --separate-stderr bash -c '"$1" hash s* big > /dev/full' _ "$C"
	[ "$stderr" = "accel-crypt: cannot write stdout: No space left on device" ]
	run -0 --separate-stderr bash -c '"$1" hash -T 2 s* big | head -n 1 | wc -l' _ "$C"
	[ "$output" = 1 ] && [ -z "$stderr" ]
}

@test "usage: unknown algorithm, --tag with -c, --status without -c" {
	run -2 "$C" hash -a sha7 abc
	[ "${lines[0]}" = "accel-crypt: -a: 'sha7' is not one of sha256, sha512, sha3-256, blake2b512, sha1, md5" ]
	run -2 "$C" hash -c --tag abc
	[ "${lines[0]}" = "accel-crypt: --tag does not go with -c" ]
	run -2 "$C" hash --status abc
	[ "${lines[0]}" = "accel-crypt: --status, --strict, -w and --ignore-missing go with -c" ]
}

@test "-c --ignore-missing: a list whose files are all missing verified nothing: sha256sum's message and exit 1" {
	{ echo "$(sha256sum < abc | cut -c1-64)  missing"; echo "$(sha256sum < abc | cut -c1-64)  gone"; } > lost
	same sha256sum sha256 -c --ignore-missing lost
	same sha256sum sha256 -c --ignore-missing --quiet lost
	same sha256sum sha256 -c --ignore-missing --status lost
	run -1 --separate-stderr "$C" hash -c --ignore-missing lost
	[ "$stderr" = "accel-crypt: lost: no file was verified" ]
	# one file there: verified, exit 0
	sha256sum abc >> lost
	same sha256sum sha256 -c --ignore-missing lost
	run -0 "$C" hash -c --ignore-missing lost
	# a mismatch and a missing file: both messages
	echo "$(sha256sum < big | cut -c1-64)  abc" > mixed
	echo "$(sha256sum < abc | cut -c1-64)  missing" >> mixed
	same sha256sum sha256 -c --ignore-missing mixed
}

@test "-c reads the lines sha256sum reads: CRLF, BSD tags, one space or a tab, leading blanks, escapes; and refuses the same" {
	h=$(sha256sum < abc | cut -c1-64)
	H=${h^^}
	printf '%s  abc\r\n%s  empty\r\n' "$h" "$(sha256sum < empty | cut -c1-64)" > crlf
	same sha256sum sha256 -c crlf
	run -0 "$C" hash -c crlf
	[ "$output" = "$(printf 'abc: OK\nempty: OK')" ]
	# a second CR is part of the name
	printf '%s  abc\r\r\n' "$h" > crcr
	same sha256sum sha256 -c crcr
	printf '%s\n' "SHA256 (abc) = $h" "SHA256(abc)= $h" "SHA256 (abc)=$H" "SHA256 (abc)  =	$h" \
		" SHA256 (abc) = $h" "	\\SHA256 (back\\\\slash) = $(sha256sum < 'back\slash' | cut -c1-64)" \
		"SHA256 (abc)) = $h" "SHA256 () = $h" > tags
	same sha256sum sha256 -c tags
	printf '%s\n' "SHA256  (abc) = $h" "SHA256 abc) = $h" "SHA256 (abc) $h" "SHA256 (abc) = ${h}0" \
		"SHA256 (abc) = $h " "MD5 (abc) = $h" "SHA256-256 (abc) = $h" "#$h  abc" " #$h  abc" "$h" "$h " > bad
	printf '%s  abc\n' "$h" >> bad
	same sha256sum sha256 -c -w bad
	same sha256sum sha256 -c --strict bad
	printf '%s\n' "$h	abc" "$h	*abc" " $h  abc" "	$h *abc" "\\$h  abc" "\\$h  back\\\\slash" \
		"\\$h  new\\nline" "\\$h  abc\\" "\\$h  a\\qb" "$h  with space" "$h   with space" > forms
	same sha256sum sha256 -c forms
	same sha256sum sha256 -c -w forms
	# "DIGEST NAME" (md5 -r): the first untagged line decides the form
	# for the whole run, and the other form is then improper or read apart
	printf '%s\n' "$h abc" "$h  abc" "$h *abc" > rev
	printf '%s\n' "$h  abc" "$h abc" "$h *abc" > std
	same sha256sum sha256 -c rev
	same sha256sum sha256 -c std
	same sha256sum sha256 -c rev std
	same sha256sum sha256 -c std rev
	printf '%s\n' "$h  " "$h   " "$h *" "$h a" > short
	same sha256sum sha256 -c short
}

@test "-c: --warn lines in the order of the list, --status/--warn/--quiet (the last wins), list names quoted, several lists, stdin" {
	h=$(sha256sum < abc | cut -c1-64)
	printf '%s\n' junk "$h  missing" "more junk" "$h  abc" "$h  big" tail > w
	same sha256sum sha256 -c -w w
	same sha256sum sha256 -c --status -w w
	same sha256sum sha256 -c -w --status w
	same sha256sum sha256 -c -w --quiet w
	same sha256sum sha256 -c --quiet -w w
	same sha256sum sha256 -c --status --quiet w
	cp w 'my list'
	same sha256sum sha256 -c -w 'my list' w 'no such list'
	same sha256sum sha256 -c --strict w 'my list'
	IN=w same sha256sum sha256 -c -w
	printf '%s  -\n' "$h" > dash
	IN=dash same sha256sum sha256 -c -w -
	IN=abc same sha256sum sha256 -c dash
	mkdir d
	same sha256sum sha256 -c d w
}

@test "-c: a NUL byte makes a line improperly formatted (sha256sum would check the name up to the NUL)" {
	h=$(sha256sum < abc | cut -c1-64)
	printf '%s  abc\0junk\n%s  abc\n' "$h" "$h" > nul
	run -0 --separate-stderr "$C" hash -c -w nul
	[ "$output" = "abc: OK" ]
	[ "$stderr" = "$(printf 'accel-crypt: nul: 1: improperly formatted SHA256 checksum line\naccel-crypt: WARNING: 1 line is improperly formatted')" ]
	printf 'SHA256 (abc\0x) = %s\n' "$h" > nul2
	run -1 --separate-stderr "$C" hash -c nul2
	[ "$stderr" = "accel-crypt: nul2: no properly formatted checksum lines found" ]
	[ -z "$output" ]
}

@test "-c: quoting of names in messages as coreutils' (shell style)" {
	h=$(sha256sum < abc | cut -c1-64)
	for n in "a'b" "a'b c" "$(printf "a'\rb")" "$(printf '\ra')" 'a=b' 'a:b' 'a^b' 'a{b}' 'a]b' 'a@b' '~a' 'a~' \
		"$(printf 'a\001b')" 'é' "$(printf 'x\377')" "a'\$c" "$(printf 'c\rd\r')"; do
		printf '%s  %s\n' "$h" "$n"
	done > q
	same sha256sum sha256 -c q
}

# cmp TOOL ALGO ARGS...: as same, but cmp's one line when the bytes differ
# (the lines here are 8 KB).
cmp_same() {
	local tool=$1 algo=$2
	shift 2
	set +e
	"$tool" "$@" > ref.out 2> ref.err
	local ref=$?
	"$C" hash -a "$algo" "$@" > our.out 2> our.err
	local ours=$?
	set -e
	sed -i "s/^$tool:/accel-crypt:/" ref.err
	cmp ref.out our.out
	cmp ref.err our.err
	[ "$ref" = "$ours" ]
}

@test "a name near PATH_MAX, escaped to twice its length, is written whole: digest lines, --tag, -c's FAILED line" {
	d=.
	for i in $(seq 16); do d="$d/$(printf '%0254d' 0 | tr 0 '\\')"; done
	mkdir -p "$d"
	printf 'x' > "$d/f"
	printf 'y' > "$d/g
"
	cmp_same sha512sum sha512 "$d/f"
	[ "$(wc -c < our.out)" -gt 8192 ]
	cmp_same sha512sum sha512 --tag "$d/f"
	sha512sum "$d/f" "$d/g
" > long
	rm "$d/g
"
	cmp_same sha512sum sha512 -c long
	[ "$(wc -c < our.out)" -gt 8192 ]
}

@test "-c without -a: tagged lines of every algorithm, mixed in one list, as cksum -c reads them (and openssl dgst's)" {
	{ sha256sum --tag abc; sha512sum --tag big; b2sum --tag 'with space'; md5sum --tag empty; sha1sum --tag abc; } > gnu
	# a digest that does not match, and a missing file, among them
	sha512sum --tag empty | sed 's/= ./= 0/;s/= 00/= 11/' >> gnu
	md5sum --tag abc | sed 's/(abc)/(missing)/' >> gnu
	set +e
	cksum -c gnu > ref.out 2> ref.err
	ref=$?
	"$C" hash -c gnu > our.out 2> our.err
	ours=$?
	set -e
	sed -i 's/^cksum:/accel-crypt:/' ref.err
	diff ref.out our.out
	diff ref.err our.err
	[ "$ref" = 1 ] && [ "$ours" = 1 ]
	[ "$(sed -n 6p our.out)" = "empty: FAILED" ]
	# untagged lines are of the default algorithm, sha256
	sha256sum big >> gnu
	run -1 --separate-stderr "$C" hash -c gnu
	[ "${lines[7]}" = "big: OK" ]
	# openssl dgst (OpenSSL 3's names) for each algorithm; b2sum -l 256
	# is an algorithm hash does not offer: improperly formatted
	for d in sha256 sha512 sha3-256 blake2b512 sha1 md5; do openssl dgst -$d abc; done > dgst
	b2sum -l 256 --tag abc >> dgst
	run -0 --separate-stderr "$C" hash -c -w dgst
	[ "$output" = "$(printf 'abc: OK\n%.0s' 1 2 3 4 5 6 | head -c -1)" ]
	[ "$stderr" = "$(printf 'accel-crypt: dgst: 7: improperly formatted SHA256 checksum line\naccel-crypt: WARNING: 1 line is improperly formatted')" ]
	# -a holds -c to that algorithm's lines, as sha512sum -c
	same sha512sum sha512 -c -w gnu
	# a mixed list on 4 threads keeps its order
	for i in $(seq 1 12); do head -c $(( i * 9000 )) /dev/urandom > f$i; done
	for i in $(seq 1 12); do case $(( i % 3 )) in 0) sha1sum --tag f$i;; 1) b2sum --tag f$i;; 2) sha256sum f$i;; esac; done > many
	run -0 "$C" hash -T4 -c many
	[ "$output" = "$(for i in $(seq 1 12); do echo "f$i: OK"; done)" ]
}

@test "--binary, -t and -z print sha256sum -b, -t and -z's lines; with -c they are refused as sha256sum refuses them" {
	printf x > 'a b'
	printf y > 'c\d'
	printf 'z\n' > 'n
l'
	for o in --binary -t -z "--tag -z" "--binary --tag" "-z --binary" "--binary -t"; do
		cmp <("$C" hash $o 'a b' 'c\d' 'n
l') <(sha256sum ${o//--binary/-b} 'a b' 'c\d' 'n
l')
	done
	cmp <(echo hi | "$C" hash --binary) <(echo hi | sha256sum -b)
	sha256sum 'a b' > list
	run -2 "$C" hash -c -z list
	[ "${lines[0]}" = "accel-crypt: the --zero option is not supported when verifying checksums" ]
	run -2 "$C" hash --binary -c list
	[ "${lines[0]}" = "accel-crypt: the --binary and --text options are meaningless when verifying checksums" ]
	run -2 "$C" hash --tag -t 'a b'
	[ "${lines[0]}" = "accel-crypt: --tag does not support --text mode" ]
}
