#!/usr/bin/env bats
# accel-crypt passphrases (scrypt stanza, files, fds, the terminal through
# script(1), as age -p reads only from a terminal) and ASCII armor, with
# interop with age both ways.

bats_require_minimum_version 1.5.0

load lib/common
load lib/tty

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	C="$ROOT/build/accel-crypt"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	age-keygen -o key.txt 2> /dev/null
	REC=$(age-keygen -y key.txt)
	echo "correct horse battery" > pw
	head -c 150000 /dev/urandom > p
}

@test "scrypt: the stanza age writes (work factor 18), one line, round trip with --passphrase-file and --passphrase-fd" {
	"$C" -p --passphrase-file pw -o p.age p
	sed -n 2p p.age | grep -Eq '^-> scrypt [A-Za-z0-9+/]{22} 18$'
	[ "$(sed -n '1,/^---/p' p.age | grep -ac '^->')" = 1 ]
	"$C" -d --passphrase-file pw p.age | cmp - p
	"$C" -d --passphrase-fd 3 p.age 3< pw | cmp - p
	"$C" --passphrase-fd 3 -o q.age p 3< pw
	"$C" -d --passphrase-file pw q.age | cmp - p
}

@test "scrypt: age -p (on a terminal) reads ours, and we read age's" {
	"$C" -p --passphrase-file pw -o ours.age p
	on_tty "correct horse battery" age -d -o out ours.age
	cmp out p
	on_tty "$(printf 'correct horse battery\ncorrect horse battery')" age -p -o theirs.age p
	[ -s theirs.age ]
	"$C" -d --passphrase-file pw theirs.age | cmp - p
}

@test "scrypt: at the terminal, asked twice on encrypt, once on decrypt" {
	on_tty "$(printf 'tty pass\ntty pass')" "$C" -p -o t.age p
	echo "tty pass" > tp
	"$C" -d --passphrase-file tp t.age | cmp - p
	on_tty "tty pass" "$C" -d -o out t.age
	cmp out p
	on_tty "$(printf 'one\ntwo')" "$C" -p -o u.age p || true
	[ ! -e u.age ]
}

@test "scrypt: wrong passphrase exit 3; identities for a passphrase file; no terminal" {
	"$C" -p --passphrase-file pw -o p.age p
	echo nope > wrong
	run -3 "$C" -d --passphrase-file wrong -o out p.age
	[ "$output" = "accel-crypt: p.age: cannot decrypt: wrong passphrase" ]
	[ ! -e out ]
	run -1 "$C" -d -i key.txt p.age
	[ "$output" = "accel-crypt: p.age: cannot decrypt: it is encrypted with a passphrase, not to an identity (-i)" ]
	run -1 setsid "$C" -d p.age < /dev/null
	[ "$output" = "accel-crypt: no terminal to ask for the passphrase; use --passphrase-file or --passphrase-fd" ]
	: > emptypw
	run -1 "$C" -p --passphrase-file emptypw p
	[ "$output" = "accel-crypt: the passphrase from emptypw is empty" ]
}

@test "scrypt: a work factor over 22 is refused before any work; an scrypt stanza must be alone" {
	"$C" -p --passphrase-file pw -o p.age p
	sed '2s/ 18$/ 23/' p.age > big.age
	run -3 "$C" -d --passphrase-file pw big.age
	[ "$output" = "accel-crypt: big.age: cannot decrypt: scrypt work factor 23 is over the limit of 22" ]
	sed '2s/ 18$/ 018/' p.age > lead.age
	run -3 "$C" -d --passphrase-file pw lead.age
	[ "$output" = "accel-crypt: lead.age: cannot decrypt: malformed scrypt stanza (work factor '018')" ]
	"$C" -r "$REC" p > x.age
	{ head -n 3 p.age; sed -n '2,3p' x.age; sed -n '/^---/,$p' p.age; } > two.age
	run -3 "$C" -d --passphrase-file pw two.age
	[ "$output" = "accel-crypt: two.age: cannot decrypt: an scrypt stanza must be the only one" ]
}

@test "usage: -p with -r; a passphrase never from the command line" {
	run -2 "$C" -p -r "$REC" p
	[ "${lines[0]}" = "accel-crypt: -p and a passphrase cannot be combined with recipients (-r, -R, -i)" ]
	run -2 "$C" -p --passphrase-file pw --passphrase-fd 0 p
	[ "${lines[0]}" = "accel-crypt: --passphrase-file and --passphrase-fd exclude each other" ]
	run -2 "$C" --passphrase secret p
	[ "${lines[0]}" = "accel-crypt: one input FILE at most ('p' is a second)" ]
}

@test "armor: age reads ours and we read age's, sizes around the 48-byte line" {
	for n in 0 1 47 48 49 65536 200000; do
		head -c $n /dev/urandom > x
		"$C" -a -f -r "$REC" -o ours.age x
		[ "$(head -n 1 ours.age)" = "-----BEGIN AGE ENCRYPTED FILE-----" ]
		[ "$(tail -n 1 ours.age)" = "-----END AGE ENCRYPTED FILE-----" ]
		[ "$(awk 'length > 64' ours.age | wc -l)" = 0 ]
		age -d -i key.txt ours.age | cmp - x
		age -a -r "$REC" x > theirs.age
		"$C" -d -i key.txt theirs.age | cmp - x
		"$C" -d -i key.txt < theirs.age | cmp - x
	done
	"$C" -a -p --passphrase-file pw -o pa.age p
	"$C" -d --passphrase-file pw pa.age | cmp - p
}

@test "armor: our output is the same file as without armor, base64'd" {
	"$C" -a -r "$REC" p > a.age
	sed '1d;$d' a.age | base64 -d > bin.age
	"$C" -d -i key.txt bin.age | cmp - p
	age -d -i key.txt bin.age | cmp - p
}

@test "armor: damaged armor is exit 3 with the armor's reason; CRLF and surrounding whitespace are accepted" {
	head -c 1000 /dev/urandom > q
	"$C" -a -r "$REC" q > a.age
	sed '3s/./!/' a.age > bad.age
	run -3 "$C" -d -i key.txt -o out bad.age
	[ "$output" = "accel-crypt: bad.age: cannot decrypt: armor line 3: not canonical base64" ]
	[ ! -e out ]
	{ cat a.age; echo junk; } > junk.age
	run -3 "$C" -d -i key.txt -o out junk.age
	[ "$output" = "accel-crypt: junk.age: cannot decrypt: armor: data after '-----END AGE ENCRYPTED FILE-----'" ]
	[ ! -e out ]
	head -n -1 a.age > cut.age
	run -3 "$C" -d -i key.txt -o out cut.age
	[ "$output" = "accel-crypt: cut.age: cannot decrypt: armor: truncated (no '-----END AGE ENCRYPTED FILE-----' line)" ]
	sed 's/$/\r/' a.age > crlf.age
	"$C" -d -i key.txt crlf.age | cmp - q
	{ printf '\n  \n'; cat a.age; printf '\n\n'; } > ws.age
	"$C" -d -i key.txt ws.age | cmp - q
}

@test "armor: bad armor at the end releases no plaintext of the last chunk to stdout" {
	head -c 100000 /dev/urandom > q
	"$C" -a -r "$REC" q > a.age
	{ cat a.age; echo junk; } > junk.age
	head -n -1 a.age > cut.age
	sed '$s/END AGE/END XGE/' a.age > end.age
	for f in junk cut end; do
		run -3 --separate-stderr "$C" -d -i key.txt $f.age
		[[ "$stderr" == "accel-crypt: $f.age: cannot decrypt: armor"* ]]
		# the first 64 KiB chunk may go out (as age lets it); none of the
		# last 34464 bytes, authenticated only with the armor's end
		[ "$("$C" -d -i key.txt $f.age 2> /dev/null | wc -c)" -le 65536 ]
		run ! age -d -i key.txt $f.age
	done
}

@test "binary to a terminal is refused without -a or -f" {
	run -1 script -qec "$C -r $REC p" /dev/null
	[[ "$output" == *"accel-crypt: refusing to write encrypted data to a terminal; use -a, -o FILE, a pipe or -f"* ]]
	run -0 script -qec "$C -a -r $REC -o /dev/stdout p" /dev/null
	[[ "$output" == *"-----BEGIN AGE ENCRYPTED FILE-----"* ]]
}

@test "a passphrase is bytes: a NUL byte in a passphrase file or fd is refused (exit 1), not cut short" {
	printf 'correct\0horse\n' > nulpw
	run -1 "$C" -p --passphrase-file nulpw -o n.age p
	[ "$output" = "accel-crypt: the passphrase from nulpw holds a NUL byte" ]
	[ ! -e n.age ]
	run -1 "$C" --passphrase-fd 3 -o n.age p 3< nulpw
	[ "$output" = "accel-crypt: the passphrase from --passphrase-fd holds a NUL byte" ]
	[ ! -e n.age ]
	# a file sealed with the passphrase 'correct' does not open with it
	printf 'correct\n' > short
	"$C" -p --passphrase-file short -o s.age p
	run -1 "$C" -d --passphrase-file nulpw -o out s.age
	[ "$output" = "accel-crypt: the passphrase from nulpw holds a NUL byte" ]
	[ ! -e out ]
}

@test "-i: an identity file encrypted with a passphrase (age -p of it) works, both ways with age; a wrong passphrase is exit 3 and writes nothing" {
	age -r "$REC" -o msg.age p
	# ours, binary and armored: age reads them as identity files too
	"$C" -p --passphrase-file pw -o key.age key.txt
	"$C" -p --passphrase-file pw -a -o key.asc key.txt
	"$C" -d -i key.age --passphrase-file pw msg.age | cmp - p
	"$C" -d -i key.asc --passphrase-fd 3 -o out msg.age 3< pw
	cmp out p
	rm out
	on_tty "correct horse battery" age -d -i key.age -o out msg.age
	cmp out p
	rm out
	# age's, made at the terminal; our passphrase asked at the terminal
	on_tty "$(printf 'correct horse battery\ncorrect horse battery')" age -p -o theirs.age key.txt
	"$C" -d -i theirs.age --passphrase-file pw msg.age | cmp - p
	on_tty "correct horse battery" "$C" -d -i theirs.age -o out msg.age
	cmp out p
	rm out
	# beside a plain identity file
	age-keygen -o other.txt 2> /dev/null
	"$C" -d -i other.txt -i key.age --passphrase-file pw msg.age | cmp - p
	echo nope > wrong
	run -3 "$C" -d -i key.age --passphrase-file wrong -o out msg.age
	[ "$output" = "accel-crypt: key.age: cannot decrypt: wrong passphrase" ]
	[ ! -e out ]
	run -1 setsid "$C" -d -i key.age -o out msg.age < /dev/null
	[ "$output" = "accel-crypt: no terminal to ask for the passphrase; use --passphrase-file or --passphrase-fd" ]
	[ ! -e out ]
	# an age file to a recipient is not an identity file; nor is a file of no identity
	"$C" -r "$REC" -o sealed.age key.txt
	run -3 "$C" -d -i sealed.age -o out msg.age
	[ "$output" = "accel-crypt: sealed.age: cannot decrypt: an encrypted identity file must be encrypted with a passphrase (age -p)" ]
	echo "# nothing" | "$C" -p --passphrase-file pw -o none.age
	run -1 "$C" -d -i none.age --passphrase-file pw -o out msg.age
	[ "$output" = "accel-crypt: none.age: no identity found" ]
	[ ! -e out ]
}
