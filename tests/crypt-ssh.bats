#!/usr/bin/env bats
# accel-crypt with SSH keys as age defines them: ssh-ed25519 and ssh-rsa
# recipients (-r, -R, authorized_keys lines) and unencrypted OpenSSH
# private keys as identities, interop with age both ways.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	C="$ROOT/build/accel-crypt"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	ssh-keygen -q -t ed25519 -N '' -C "ed@test" -f ed
	ssh-keygen -q -t rsa -b 2048 -N '' -C "rsa@test" -f rsa
	head -c 200000 /dev/urandom > p
}

@test "ssh-ed25519: age reads ours and we read age's; the stanza carries the key's tag" {
	"$C" -R ed.pub -o ours.age p
	sed -n 2p ours.age | grep -Eq '^-> ssh-ed25519 [A-Za-z0-9+/]{6} [A-Za-z0-9+/]{43}$'
	age -d -i ed ours.age | cmp - p
	"$C" -d -i ed ours.age | cmp - p
	age -R ed.pub p > theirs.age
	"$C" -d -i ed theirs.age | cmp - p
	"$C" -r "$(cat ed.pub)" p | age -d -i ed | cmp - p
}

@test "ssh-rsa: age reads ours and we read age's" {
	"$C" -R rsa.pub -o ours.age p
	sed -n 2p ours.age | grep -Eq '^-> ssh-rsa [A-Za-z0-9+/]{6}$'
	age -d -i rsa ours.age | cmp - p
	age -R rsa.pub p > theirs.age
	"$C" -d -i rsa theirs.age | cmp - p
}

@test "an authorized_keys file with options and comments, mixed with age recipients" {
	age-keygen -o key.txt 2> /dev/null
	{ echo "# keys"; echo "from=\"10.0.0.1\" $(cat ed.pub)"; cat rsa.pub; age-keygen -y key.txt; } > authorized_keys
	"$C" -R authorized_keys -o m.age p
	for id in ed rsa key.txt; do
		"$C" -d -i $id m.age | cmp - p
		age -d -i $id m.age | cmp - p
	done
}

@test "another SSH key does not open the file; encrypted and small keys are refused with a reason" {
	ssh-keygen -q -t ed25519 -N '' -f other
	"$C" -R ed.pub -o m.age p
	run -3 "$C" -d -i other m.age
	[ "$output" = "accel-crypt: m.age: cannot decrypt: no identity matched any of the recipients (wrong key)" ]
	ssh-keygen -q -t ed25519 -N 'secret' -f locked
	run -1 "$C" -d -i locked m.age
	[ "$output" = "accel-crypt: locked: an encrypted OpenSSH private key; only unencrypted keys are supported" ]
	ssh-keygen -q -t rsa -b 1024 -N '' -f small
	run -1 "$C" -R small.pub p
	[ "$output" = "accel-crypt: small.pub: line 1: the RSA key has 1024 bits; at least 2048 are needed" ]
	ssh-keygen -q -t ecdsa -N '' -f ec
	run -1 "$C" -R ec.pub p
	[ "$output" = "accel-crypt: ec.pub: line 1: not a supported SSH public key (ssh-ed25519 or ssh-rsa)" ]
}

@test "an OpenSSH key whose END line shares the BEGIN line's dashes holds no key, as age says (found by fuzz-crypt_identity)" {
	"$C" -R ed.pub -o m.age p
	printf -- '-----BEGIN OPENSSH PRIVATE KEY--------END OPENSSH PRIVATE KEY-----\n' > fused
	chmod 600 fused
	run -1 age -d -i fused m.age
	run -1 --separate-stderr "$C" -d -i fused -o out m.age
	[ "$stderr" = "accel-crypt: fused: not an OpenSSH private key" ]
	[ ! -e out ]
}

@test "keygen -y on an SSH key points to its .pub file" {
	run -1 "$C" keygen -y ed
	[ "$output" = "accel-crypt: ed: an SSH key; its recipient is its public key (the .pub file)" ]
}
