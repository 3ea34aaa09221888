#!/usr/bin/python3
# minisign-encrypt.py IN OUT PASSPHRASE: encrypt the unencrypted minisign
# secret key IN into OUT as minisign does ("Sc": the key id, the secret key
# and their BLAKE2b-256 checksum XORed with scrypt of the passphrase), with
# small scrypt limits (libsodium's interactive ones: opslimit 2^19, memlimit
# 16 MiB, which its parameter choice makes N 2^14, r 8, p 1) so tests run
# fast; minisign reads the limits from the key.
import base64, hashlib, os, sys

src, dst, pw = sys.argv[1], sys.argv[2], sys.argv[3].encode()
b = bytearray(base64.b64decode(open(src).read().split("\n")[1]))
assert len(b) == 158 and b[:6] == b"Ed\0\0B2"
salt = os.urandom(32)
b[2:4] = b"Sc"
b[6:38] = salt
b[38:46] = (1 << 19).to_bytes(8, "little")
b[46:54] = (1 << 24).to_bytes(8, "little")
b[126:158] = hashlib.blake2b(bytes(b[0:2] + b[54:126]), digest_size=32).digest()
stream = hashlib.scrypt(pw, salt=salt, n=1 << 14, r=8, p=1, maxmem=64 << 20, dklen=104)
b[54:158] = bytes(x ^ y for x, y in zip(b[54:158], stream))
with open(dst, "w") as f:
    f.write("untrusted comment: minisign encrypted secret key\n" + base64.b64encode(bytes(b)).decode() + "\n")
os.chmod(dst, 0o600)
