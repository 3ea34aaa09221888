#!/usr/bin/env bats
# accel-crypt hash: the lines of sha256sum, sha512sum, sha1sum, md5sum,
# b2sum (and openssl dgst for sha3-256), byte for byte; -c with
# sha256sum -c's output and exit status; many files at once.

bats_require_minimum_version 1.5.0

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	C="$ROOT/build/accel-crypt"
	unset ACCEL_BACKEND ACCEL_FALLBACK ACCEL_THREADS ACCEL_FAULT ACCEL_BACKEND_PATH ACCEL_PROFILE
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

@test "usage: unknown algorithm, --tag with -c, --status without -c" {
	run -2 "$C" hash -a sha7 abc
	[ "${lines[0]}" = "accel-crypt: -a: 'sha7' is not one of sha256, sha512, sha3-256, blake2b512, sha1, md5" ]
	run -2 "$C" hash -c --tag abc
	[ "${lines[0]}" = "accel-crypt: --tag does not go with -c" ]
	run -2 "$C" hash --status abc
	[ "${lines[0]}" = "accel-crypt: --status, --strict, -w and --ignore-missing go with -c" ]
}
