#!/usr/bin/env bats
# accel-crypt keygen --sign, sign and verify: minisign's key and signature
# files both ways (minisign -V verifies ours, we verify minisign's, minisign
# signs with our key), tampering, wrong keys.

bats_require_minimum_version 1.5.0

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

@test "an encrypted minisign secret key is refused with a reason" {
	# minisign's encrypted keys say "Sc" (scrypt) where unencrypted ones hold zeros
	"$C" keygen --sign -q -o s.key -p s.pub
	{ head -n 1 s.key; sed -n 2p s.key | base64 -d | /usr/bin/python3 -c '
import base64, sys
b = bytearray(sys.stdin.buffer.read()); b[2:4] = b"Sc"
print(base64.b64encode(bytes(b)).decode())'; } > e.key
	run -1 "$C" sign -s e.key data
	[ "$output" = "accel-crypt: e.key: an encrypted minisign secret key; only unencrypted keys are supported (minisign -G -W, or accel-crypt keygen --sign)" ]
}
