# accel-crypt: its keys, hashes and signatures link libcrypto (OpenSSL 3)
# and libsodium (minisign's encrypted keys), and load libssh.so.4 when an
# encrypted OpenSSH key is met (libcore/ops/crypt/ssh.c; its header from
# libssh-dev),
# its formats come from libaccel-crypt.a (libcore/ops/crypt/crypt.mk); the
# payload runs on the openssl plugin's engine.
accel-crypt_SRC := $(wildcard cmd/crypt/*.c)
accel-crypt_PKGS := libcrypto libsodium
accel-crypt_LIBS := $(CRYPT_LIB) $(CRYPT_LIBS)
$(B)/accel-crypt: $(CRYPT_LIB)
