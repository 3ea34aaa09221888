#!/usr/bin/env bats
# accel-crypt with SSH keys as age defines them: ssh-ed25519 and ssh-rsa
# recipients (-r, -R, authorized_keys lines) and OpenSSH private keys as
# identities, unencrypted or encrypted with a passphrase as ssh-keygen
# writes them (bcrypt KDF, aes256-ctr; opened through libssh), PEM private
# keys (PKCS#1, PKCS#8, encrypted or not; opened through OpenSSL), interop
# with age both ways.

bats_require_minimum_version 1.5.0

load lib/common
load lib/tty

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

@test "another SSH key does not open the file; small keys are refused with a reason" {
	ssh-keygen -q -t ed25519 -N '' -f other
	"$C" -R ed.pub -o m.age p
	run -3 "$C" -d -i other m.age
	[ "$output" = "accel-crypt: m.age: cannot decrypt: no identity matched any of the recipients (wrong key)" ]
	# keys age cannot encrypt to are skipped with a warning, as age skips
	# them (an authorized_keys file of mixed types works); alone, none is left
	ssh-keygen -q -t rsa -b 1024 -N '' -f small
	run -1 "$C" -R small.pub p
	[ "$output" = "accel-crypt: warning: small.pub: ignoring unsupported SSH key of type ssh-rsa at line 1: the RSA key has 1024 bits; at least 2048 are needed
accel-crypt: small.pub: no recipient found" ]
	ssh-keygen -q -t ecdsa -N '' -f ec
	run -1 "$C" -R ec.pub p
	[ "$output" = "accel-crypt: warning: ec.pub: ignoring unsupported SSH key of type ecdsa-sha2-nistp256 at line 1
accel-crypt: ec.pub: no recipient found" ]
	cat ec.pub small.pub ed.pub > mixed
	run -0 --separate-stderr "$C" -R mixed -o mixed.age p
	[ "$stderr" = "accel-crypt: warning: mixed: ignoring unsupported SSH key of type ecdsa-sha2-nistp256 at line 1
accel-crypt: warning: mixed: ignoring unsupported SSH key of type ssh-rsa at line 2: the RSA key has 1024 bits; at least 2048 are needed" ]
	age -d -i ed mixed.age | cmp - p
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

@test "an encrypted ssh-ed25519 key (ssh-keygen -N) opens age's file: --passphrase-file, --passphrase-fd, the terminal as age asks" {
	ssh-keygen -q -t ed25519 -N 'pass phrase' -C "locked@test" -f locked
	age -R locked.pub p > theirs.age
	echo 'pass phrase' > pw
	"$C" -d -i locked --passphrase-file pw theirs.age | cmp - p
	"$C" -d -i locked --passphrase-fd 3 -o out theirs.age 3< pw
	cmp out p
	# the key with others: an age identity file and an unencrypted SSH key
	age-keygen -o key.txt 2> /dev/null
	"$C" -R ed.pub -R locked.pub -r "$(age-keygen -y key.txt)" -o ours.age p
	"$C" -d -i key.txt -i locked -i ed --passphrase-file pw ours.age | cmp - p
	on_tty 'pass phrase' "$C" -d -i locked -o tty.out theirs.age
	cmp tty.out p
	# the prompt names the key, as age's does
	{ sleep 1; echo 'pass phrase'; } | script -qec "'$C' -d -i locked -o tty2.out theirs.age" /dev/null > typed
	cmp tty2.out p
	grep -q 'Enter passphrase for "locked": ' typed
}

@test "an encrypted ssh-rsa key: opened where libssh can hand it over (0.11), else a reason; a wrong passphrase either way" {
	ssh-keygen -q -t rsa -b 2048 -N pass -f locked
	age -R locked.pub p > theirs.age
	echo pass > pw
	echo wrong > bad
	run -3 --separate-stderr "$C" -d -i locked --passphrase-file bad -o out theirs.age
	[ "$stderr" = "accel-crypt: locked: wrong passphrase for this key (it does not decrypt)" ]
	[ ! -e out ]
	v=$(pkg-config --modversion libssh)
	if [ "$(printf '%s\n0.11.0\n' "$v" | sort -V | head -1)" = 0.11.0 ]; then
		"$C" -d -i locked --passphrase-file pw theirs.age | cmp - p
	else
		run -1 --separate-stderr "$C" -d -i locked --passphrase-file pw -o out theirs.age
		[ "$stderr" = "accel-crypt: locked: libssh $v/openssl/zlib cannot hand over the decrypted ssh-rsa key; convert it once with \`ssh-keygen -p -m PEM -f locked\` (same passphrase)" ]
		[ ! -e out ]
	fi
}

@test "an encrypted ssh-rsa key as ssh-keygen 9 writes it, converted once with ssh-keygen -p -m PEM as the refusal says, opens age's file" {
	# ssh-keygen's PEM writer (OpenSSL's) wants five characters at least
	ssh-keygen -q -t rsa -N 'pass phrase' -f k
	head -1 k | grep -qx -- '-----BEGIN OPENSSH PRIVATE KEY-----'
	age -R k.pub p > theirs.age
	ssh-keygen -q -p -m PEM -f k -P 'pass phrase' -N 'pass phrase' > /dev/null
	sed -n 1,2p k | tr '\n' ' ' | grep -qx -- '-----BEGIN RSA PRIVATE KEY----- Proc-Type: 4,ENCRYPTED '
	echo 'pass phrase' > pw
	"$C" -d -i k --passphrase-file pw -o out theirs.age
	cmp out p
	# ours to the same .pub, read by age with the converted key
	"$C" -R k.pub -o ours.age p
	on_tty 'pass phrase' age -d -i k -o age.out ours.age
	cmp age.out p
}

@test "PEM keys: PKCS#1 and PKCS#8 RSA, PKCS#8 Ed25519, as age reads them; both ways" {
	openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:2048 -out r8.pem 2> /dev/null
	openssl pkey -in r8.pem -traditional -out r1.pem
	head -1 r1.pem | grep -qx -- '-----BEGIN RSA PRIVATE KEY-----'
	head -1 r8.pem | grep -qx -- '-----BEGIN PRIVATE KEY-----'
	ssh-keygen -y -f r1.pem > r.pub
	chmod 600 r1.pem r8.pem
	"$C" -R r.pub -o ours.age p
	age -R r.pub p > theirs.age
	for k in r1.pem r8.pem; do
		"$C" -d -i $k ours.age | cmp - p
		"$C" -d -i $k theirs.age | cmp - p
		age -d -i $k ours.age | cmp - p
	done
	# the ssh-rsa stanza's tag is the same as for the OpenSSH form of the key
	[ "$(sed -n 2p ours.age | cut -d' ' -f3)" = "$(sed -n 2p theirs.age | cut -d' ' -f3)" ]
	# Ed25519 in PKCS#8: ssh-keygen 9.2 does not read it; its public key is
	# the last 32 bytes of the DER SubjectPublicKeyInfo (RFC 8410)
	openssl genpkey -algorithm ed25519 -out ed.pem
	raw=$(openssl pkey -in ed.pem -pubout -outform DER | tail -c 32 | base64 -w0)
	printf 'ssh-ed25519 %s\n' "$(python3 -c 'import base64,struct,sys; k=base64.b64decode(sys.argv[1]); s=lambda b: struct.pack(">I",len(b))+b; print(base64.b64encode(s(b"ssh-ed25519")+s(k)).decode())' "$raw")" > edpem.pub
	"$C" -R edpem.pub -o ed.age p
	"$C" -d -i ed.pem ed.age | cmp - p
	age -d -i ed.pem ed.age | cmp - p
	age -R edpem.pub p | "$C" -d -i ed.pem | cmp - p
	# another PEM key does not open it
	run -3 "$C" -d -i r8.pem ed.age
}

@test "encrypted PEM keys: PKCS#1 (openssl, ssh-keygen -m PEM) and PKCS#8 (ssh-keygen -m PKCS8, openssl genpkey -aes256): passphrase file, fd, terminal; a wrong one exit 3, nothing written" {
	ssh-keygen -q -t rsa -b 2048 -m PEM -N 'pass phrase' -f k1
	ssh-keygen -q -t rsa -b 2048 -m PKCS8 -N 'pass phrase' -f k8
	openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:2048 -aes256 -pass 'pass:pass phrase' -out o8.pem 2> /dev/null
	openssl pkey -in o8.pem -passin 'pass:pass phrase' -traditional -aes128 -passout 'pass:pass phrase' -out o1.pem
	head -1 k8 | grep -qx -- '-----BEGIN ENCRYPTED PRIVATE KEY-----'
	head -1 o8.pem | grep -qx -- '-----BEGIN ENCRYPTED PRIVATE KEY-----'
	sed -n 2p o1.pem | grep -qx 'Proc-Type: 4,ENCRYPTED'
	ssh-keygen -y -P 'pass phrase' -f o8.pem > o.pub
	echo 'pass phrase' > pw
	echo wrong > bad
	for k in k1 k8 o1.pem o8.pem; do
		pub=k1.pub
		case $k in k8) pub=k8.pub ;; o*) pub=o.pub ;; esac
		age -R $pub p > $k.age
		"$C" -d -i $k --passphrase-file pw $k.age | cmp - p
		"$C" -d -i $k --passphrase-fd 3 $k.age 3< pw | cmp - p
		run -3 --separate-stderr "$C" -d -i $k --passphrase-file bad -o out $k.age
		[ "$stderr" = "accel-crypt: $k: wrong passphrase for this key (it does not decrypt)" ]
		[ ! -e out ]
	done
	on_tty 'pass phrase' "$C" -d -i k8 -o tty.out k8.age
	cmp tty.out p
	{ sleep 1; echo 'pass phrase'; } | script -qec "'$C' -d -i k1 -o tty2.out k1.age" /dev/null > typed
	cmp tty2.out p
	grep -q 'Enter passphrase for "k1": ' typed
	# no terminal and no passphrase option: exit 1, nothing written
	run -1 --separate-stderr setsid "$C" -d -i o8.pem -o out o8.age < /dev/null
	[ "$stderr" = "accel-crypt: no terminal to ask for the passphrase; use --passphrase-file or --passphrase-fd" ]
	[ ! -e out ]
	# with an age identity and an unencrypted SSH key
	age-keygen -o key.txt 2> /dev/null
	"$C" -R ed.pub -R o.pub -r "$(age-keygen -y key.txt)" -o m.age p
	"$C" -d -i key.txt -i ed -i o1.pem --passphrase-file pw m.age | cmp - p
}

@test "PEM keys refused with a reason: EC (SEC 1 and PKCS#8, encrypted or not), small RSA, damaged; keygen -y points to the .pub file" {
	openssl ecparam -genkey -name prime256v1 -noout -out ec.pem
	run -1 "$C" -d -i ec.pem p
	[ "$output" = "accel-crypt: ec.pem: unsupported PEM key 'EC PRIVATE KEY' (RSA and Ed25519 keys are, as PKCS#1 or PKCS#8)" ]
	openssl pkcs8 -topk8 -nocrypt -in ec.pem -out ec8.pem
	run -1 "$C" -d -i ec8.pem p
	[ "$output" = "accel-crypt: ec8.pem: unsupported key type 'EC' in a PKCS#8 private key (RSA and Ed25519 are)" ]
	openssl pkcs8 -topk8 -v2 aes-256-cbc -passout pass:secret -in ec.pem -out ec8e.pem
	echo secret > pw
	run -1 "$C" -d -i ec8e.pem --passphrase-file pw p
	[ "$output" = "accel-crypt: ec8e.pem: unsupported key type 'EC' in a PKCS#8 private key (RSA and Ed25519 are)" ]
	openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:1024 -out small.pem 2> /dev/null
	run -1 "$C" -d -i small.pem p
	[ "$output" = "accel-crypt: small.pem: the RSA key has 1024 bits; at least 2048 are needed" ]
	openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:2048 -out r.pem 2> /dev/null
	{ head -5 r.pem; tail -1 r.pem; } > cut.pem
	chmod 600 cut.pem
	run -1 --separate-stderr "$C" -d -i cut.pem -o out p
	[ "$stderr" = "accel-crypt: cut.pem: malformed PKCS#8 private key" ]
	[ ! -e out ]
	run -1 "$C" keygen -y r.pem
	[ "$output" = "accel-crypt: r.pem: an SSH key; its recipient is its public key (the .pub file)" ]
}

@test "an encrypted SSH key: wrong passphrase exit 3, no terminal exit 1, nothing written either way" {
	ssh-keygen -q -t ed25519 -N pass -f locked
	"$C" -R locked.pub -o m.age p
	echo wrong > bad
	run -3 --separate-stderr "$C" -d -i locked --passphrase-file bad -o out m.age
	[ "$stderr" = "accel-crypt: locked: wrong passphrase for this key (it does not decrypt)" ]
	[ ! -e out ]
	run -1 --separate-stderr setsid "$C" -d -i locked -o out m.age < /dev/null
	[ "$stderr" = "accel-crypt: no terminal to ask for the passphrase; use --passphrase-file or --passphrase-fd" ]
	[ ! -e out ]
	on_tty 'wrong' "$C" -d -i locked -o out m.age || true
	[ ! -e out ]
	run -1 "$C" -d -i locked --passphrase-file missing m.age
	[ "$output" = "accel-crypt: cannot read the passphrase from missing: No such file or directory" ]
}

@test "an encrypted OpenSSH key is opened only when the file has a stanza for it (its public key is in the clear), as age asks" {
	ssh-keygen -q -t ed25519 -N pass -f locked
	age-keygen -o x.txt 2> /dev/null
	"$C" -r "$(age-keygen -y x.txt)" -o x.age p
	# no stanza for the locked key: no passphrase asked, no terminal needed
	run -0 --separate-stderr setsid "$C" -d -i locked -i x.txt -o out x.age < /dev/null
	[ -z "$stderr" ]
	cmp out p
	run -0 setsid age -d -i locked -i x.txt -o out2 x.age < /dev/null
	# the identities at hand are tried on every stanza before a passphrase is asked
	age -R locked.pub -r "$(age-keygen -y x.txt)" -o both.age p
	run -0 --separate-stderr setsid "$C" -d -i locked -i x.txt -o out3 both.age < /dev/null
	cmp out3 p
	# a stanza for it: the passphrase is asked then
	"$C" -R locked.pub -o l.age p
	run -1 --separate-stderr setsid "$C" -d -i x.txt -i locked -o out4 l.age < /dev/null
	[ "$stderr" = "accel-crypt: no terminal to ask for the passphrase; use --passphrase-file or --passphrase-fd" ]
	echo pass > pw
	"$C" -d -i x.txt -i locked --passphrase-file pw l.age | cmp - p
	# not the key the file was made for: no passphrase, the usual wrong-key line
	ssh-keygen -q -t ed25519 -N pass -f other
	run -3 --separate-stderr setsid "$C" -d -i other -o out5 l.age < /dev/null
	[ "$stderr" = "accel-crypt: l.age: cannot decrypt: no identity matched any of the recipients (wrong key)" ]
}

@test "encrypted SSH keys refused before any passphrase: AEAD ciphers, other key types; keygen -y points to the .pub file" {
	ssh-keygen -q -t ed25519 -N pass -Z chacha20-poly1305@openssh.com -f chacha
	run -1 setsid "$C" -d -i chacha p < /dev/null
	[ "$output" = "accel-crypt: chacha: an encrypted OpenSSH private key with cipher 'chacha20-poly1305@openssh.com' (AES in CTR or CBC mode is supported; ssh-keygen -p -Z aes256-ctr rewrites it)" ]
	ssh-keygen -q -t ecdsa -N pass -f ec
	run -1 setsid "$C" -d -i ec p < /dev/null
	[ "$output" = "accel-crypt: ec: unsupported SSH key type 'ecdsa-sha2-nistp256' (ssh-ed25519 and ssh-rsa are)" ]
	ssh-keygen -q -t ed25519 -N pass -Z aes128-cbc -f cbc
	"$C" -R cbc.pub -o m.age p
	echo pass > pw
	"$C" -d -i cbc --passphrase-file pw m.age | cmp - p
	run -1 setsid "$C" keygen -y cbc < /dev/null
	[ "$output" = "accel-crypt: cbc: an SSH key; its recipient is its public key (the .pub file)" ]
}

@test "an encrypted SSH key inside an identity file encrypted with a passphrase (age -p of it)" {
	ssh-keygen -q -t ed25519 -N pass -f locked
	echo pass > pw
	"$C" -p --passphrase-file pw -o locked.age locked
	"$C" -R locked.pub -o m.age p
	"$C" -d -i locked.age --passphrase-file pw m.age | cmp - p
}
