# accel-crypt: its keys, hashes and signatures link libcrypto (OpenSSL 3)
# and libsodium (minisign's encrypted keys),
# its formats come from libaccel-crypt.a (libcore/ops/crypt/crypt.mk); the
# payload runs on the openssl plugin's engine.
accel-crypt_SRC := $(wildcard cmd/crypt/*.c)
accel-crypt_PKGS := libcrypto libsodium
accel-crypt_LIBS := $(CRYPT_LIB) $(CRYPT_LIBS)
$(B)/accel-crypt: $(CRYPT_LIB)
