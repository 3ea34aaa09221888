#!/usr/bin/env bats
# accel-crypt keygen --sign, sign and verify: minisign's key and signature
# files both ways (minisign -V verifies ours, we verify minisign's, minisign
# signs with our key), tampering, wrong keys.

bats_require_minimum_version 1.5.0

load lib/common
load lib/tty

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	C="$ROOT/build/accel-crypt"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	head -c 300000 /dev/urandom > data
}

@test "keygen --sign: minisign's key files, secret 0600, refuses to overwrite" {
	run -0 --separate-stderr "$C" keygen --sign -o s.key -p s.pub
	[ "$(stat -c %a s.key)" = 600 ]
	[ "$(head -n 1 s.key)" = "untrusted comment: minisign secret key (unencrypted)" ]
	[[ "$(head -n 1 s.pub)" =~ ^"untrusted comment: minisign public key "[0-9A-F]{16}$ ]]
	[ "$(sed -n 2p s.pub | base64 -d | wc -c)" = 42 ]
	[ "$(sed -n 2p s.key | base64 -d | wc -c)" = 158 ]
	[ "${stderr##*-P }" = "$(sed -n 2p s.pub)" ]
	cp s.key before
	run -1 "$C" keygen --sign -o s.key -p other.pub
	[ "$output" = "accel-crypt: s.key already exists; not overwriting a key file" ]
	cmp s.key before
	[ ! -e other.pub ]
}

@test "sign: minisign -V verifies ours, with the default and a given trusted comment" {
	"$C" keygen --sign -q -o s.key -p s.pub
	"$C" sign -s s.key data
	run -0 minisign -Vm data -p s.pub
	[ "${lines[0]}" = "Signature and comment signature verified" ]
	[[ "${lines[1]}" =~ ^"Trusted comment: timestamp:"[0-9]+$'\t'"file:data"$'\t'"hashed"$ ]]
	"$C" sign -s s.key -t "release 1.2" -c "from the build" -x data.sig data
	[ "$(head -n 1 data.sig)" = "untrusted comment: from the build" ]
	run -0 minisign -Vm data -x data.sig -p s.pub
	[ "${lines[1]}" = "Trusted comment: release 1.2" ]
	# minisign signs with our secret key, and we verify it
	minisign -S -s s.key -m data -x m.sig -t "by minisign"
	run -0 "$C" verify -p s.pub -x m.sig data
	[ "$output" = "$(printf 'Signature and comment signature verified\nTrusted comment: by minisign')" ]
}

@test "-m FILE as minisign takes it: sign -m A B signs both, verify -m FILE; one FILE to verify" {
	"$C" keygen --sign -q -o s.key -p s.pub
	cp data other
	"$C" sign -s s.key -m data other
	minisign -Vm data -p s.pub -q
	minisign -Vm other -p s.pub -q
	"$C" sign -s s.key -m data -m other -t "two -m"
	run -0 "$C" verify -p s.pub -m other
	[ "$output" = "$(printf 'Signature and comment signature verified\nTrusted comment: two -m')" ]
	minisign -S -s s.key -m data -x m.sig -t "by minisign"
	run -0 "$C" verify -x m.sig -p s.pub -q -m data
	[ -z "$output" ]
	run -2 "$C" verify -p s.pub -m data other
	[ "${lines[0]}" = "accel-crypt: verify takes one FILE (the operand or -m FILE)" ]
	run -2 "$C" sign -s s.key -x one.sig -m data -m other
	[ "${lines[0]}" = "accel-crypt: -x names the signature of one FILE only" ]
}

@test "verify: minisign's signatures (prehashed and legacy), -P, -q" {
	minisign -G -W -p m.pub -s m.key > /dev/null
	minisign -S -s m.key -m data -t "theirs"
	run -0 "$C" verify -p m.pub data
	[ "$output" = "$(printf 'Signature and comment signature verified\nTrusted comment: theirs')" ]
	run -0 "$C" verify -P "$(sed -n 2p m.pub)" -q data
	[ -z "$output" ]
	minisign -S -l -s m.key -m data -x legacy.sig -t "legacy"
	run -0 "$C" verify -p m.pub -x legacy.sig data
	[ "${lines[1]}" = "Trusted comment: legacy" ]
	# we sign with minisign's key
	"$C" sign -s m.key -x ours.sig data
	minisign -Vm data -x ours.sig -p m.pub -q
}

@test "verify: a changed file, a changed trusted comment, another key: exit 3; minisign agrees" {
	"$C" keygen --sign -q -o s.key -p s.pub
	"$C" sign -s s.key data
	cp data changed
	printf 'x' >> changed
	cp data.minisig changed.minisig
	run -3 "$C" verify -p s.pub changed
	[ "$output" = "accel-crypt: changed: signature verification failed (the file or the signature was changed)" ]
	run ! minisign -Vm changed -p s.pub
	sed '3s/file:data/file:evil/' data.minisig > tc.sig
	run -3 "$C" verify -p s.pub -x tc.sig data
	[ "$output" = "accel-crypt: data: the trusted comment's signature failed (the comment was changed)" ]
	run ! minisign -Vm data -x tc.sig -p s.pub
	"$C" keygen --sign -q -o o.key -p o.pub
	run -3 "$C" verify -p o.pub data
	[[ "$output" =~ ^"accel-crypt: data.minisig: signed by key "[0-9A-F]{16}", not by the key given ("[0-9A-F]{16}")"$ ]]
	echo garbage > bad.sig
	run -3 "$C" verify -p s.pub -x bad.sig data
	[ "$output" = "accel-crypt: bad.sig: not a minisign signature file" ]
}

@test "a secret key minisign -G encrypted (its own scrypt limits, 1 GiB): signed with --passphrase-file; minisign -V verifies" {
	F="$ROOT/tests/fixtures/crypt"
	echo "correct horse" > pw
	"$C" sign -s "$F/minisign-encrypted.key" --passphrase-file pw -t "from an encrypted key" -m data
	run -0 minisign -Vm data -p "$F/minisign-encrypted.pub"
	[ "${lines[1]}" = "Trusted comment: from an encrypted key" ]
}

@test "encrypted secret keys: minisign signs with ours; the passphrase from a file, an fd, the terminal; a wrong one is exit 3 and writes nothing" {
	"$C" keygen --sign -q -o s.key -p s.pub
	"$ROOT/tests/lib/minisign-encrypt.py" s.key e.key "tty pass"
	[ "$(head -c 4 <(sed -n 2p e.key | base64 -d) | tail -c 2)" = Sc ]
	# minisign reads the key as it reads its own
	on_tty "tty pass" minisign -S -s e.key -m data -x m.sig -t by-minisign
	"$C" verify -p s.pub -x m.sig -q data
	echo "tty pass" > pw
	"$C" sign -s e.key --passphrase-file pw -t "file" data
	minisign -Vm data -p s.pub -q
	"$C" sign -s e.key --passphrase-fd 3 -t "fd" -m data 3< pw
	[ "$(minisign -Vm data -p s.pub -Q)" = fd ]
	on_tty "tty pass" "$C" sign -s e.key -t "terminal" -m data
	[ "$(minisign -Vm data -p s.pub -Q)" = terminal ]
	# a wrong passphrase: exit 3, one line, no signature written or replaced
	echo "not it" > wrong
	cp data.minisig before
	run -3 "$C" sign -s e.key --passphrase-file wrong data -x new.minisig
	[ "$output" = "accel-crypt: e.key: wrong passphrase for this key (its checksum does not match)" ]
	[ ! -e new.minisig ]
	run -3 "$C" sign -s e.key --passphrase-file wrong data
	cmp before data.minisig
	run -1 setsid "$C" sign -s e.key data < /dev/null
	[ "$output" = "accel-crypt: no terminal to ask for the passphrase; use --passphrase-file or --passphrase-fd" ]
	cmp before data.minisig
	# an unencrypted key asks for nothing (--passphrase-file is not read)
	"$C" sign -s s.key --passphrase-file /nonexistent data
	run -2 "$C" sign -s e.key --passphrase-file pw --passphrase-fd 0 data
	[ "${lines[0]}" = "accel-crypt: --passphrase-file and --passphrase-fd exclude each other" ]
}

# rekey IN OUT PYTHON: OUT is the key of IN with its blob b changed by the
# Python statement.
rekey() {
	{ head -n 1 "$1"; sed -n 2p "$1" | base64 -d | /usr/bin/python3 -c '
import base64, sys
b = bytearray(sys.stdin.buffer.read()); '"$3"'
print(base64.b64encode(bytes(b)).decode())'; } > "$2"
}

@test "encrypted secret keys: another KDF, or scrypt limits beyond minisign's own, are refused before any passphrase" {
	"$C" keygen --sign -q -o s.key -p s.pub
	echo "tty pass" > pw
	rekey s.key kdf.key 'b[2:4] = b"Ar"'
	run -1 "$C" sign -s kdf.key --passphrase-file pw data
	[ "$output" = "accel-crypt: kdf.key: a minisign secret key encrypted with an unknown KDF" ]
	"$ROOT/tests/lib/minisign-encrypt.py" s.key e.key "tty pass"
	rekey e.key mem.key 'b[46:54] = (1 << 31).to_bytes(8, "little")'
	run -1 "$C" sign -s mem.key --passphrase-file /nonexistent data
	[ "$output" = "accel-crypt: mem.key: the key's scrypt limits are beyond minisign's own (2^25 operations, 1 GiB)" ]
	rekey e.key ops.key 'b[38:46] = (1 << 26).to_bytes(8, "little")'
	run -1 "$C" sign -s ops.key --passphrase-file pw data
	[ "$output" = "accel-crypt: ops.key: the key's scrypt limits are beyond minisign's own (2^25 operations, 1 GiB)" ]
	[ ! -e data.minisig ]
}

# noncanon FILE LINE: FILE with the unused low bits of the last base64
# symbol of LINE set (the same bytes, written another way).
noncanon() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import sys
A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
lines = open(sys.argv[1], "rb").read().decode().split("\n")
k = int(sys.argv[2]) - 1
l = lines[k]
pad = len(l) - len(l.rstrip("="))
i = len(l) - pad - 1
lines[k] = l[:i] + A[A.index(l[i]) | ((1 << 2 * pad) - 1)] + l[i + 1:]
sys.stdout.write("\n".join(lines))
PY
}

@test "minisign's leniency: any first line in key files, non-canonical base64 in signatures; a NUL byte is refused" {
	minisign -G -W -p m.pub -s m.key > /dev/null
	minisign -S -s m.key -m data -t "theirs"
	{ echo "my release key"; sed -n 2p m.pub; } > any.pub
	{ echo; sed -n 2p m.key; } > any.key
	minisign -Vm data -p any.pub -q
	run -0 "$C" verify -p any.pub -q data
	"$C" sign -s any.key -x any.sig data
	minisign -Vm data -x any.sig -p m.pub -q
	sed -n 2p m.pub > one.pub
	run ! minisign -Vm data -p one.pub
	run -1 "$C" verify -p one.pub data
	[ "$output" = "accel-crypt: one.pub: not a minisign public key" ]
	noncanon data.minisig 2 > n2.sig
	noncanon data.minisig 4 > n4.sig
	! cmp -s data.minisig n2.sig
	! cmp -s data.minisig n4.sig
	for s in n2.sig n4.sig; do
		minisign -Vm data -x $s -p m.pub -q
		run -0 "$C" verify -p m.pub -x $s -q data
	done
	# NUL bytes: not a key, not a signature
	{ printf 'untrusted comment: x\0y\n'; sed -n 2p m.pub; } > nul.pub
	run -1 "$C" verify -p nul.pub data
	[ "$output" = "accel-crypt: nul.pub: not a minisign public key" ]
	{ cat data.minisig; printf '\0'; } > nul.sig
	run -3 "$C" verify -p m.pub -x nul.sig data
	[ "$output" = "accel-crypt: nul.sig: not a minisign signature file" ]
	{ cat m.key; printf '\0'; } > nul.key
	run -1 "$C" sign -s nul.key -x x.sig data
	[ "$output" = "accel-crypt: nul.key: not a minisign Ed25519 secret key" ]
}
