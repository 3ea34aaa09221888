# accel-crypt: the age header, keys, armor, hashes and signatures link
# libcrypto (OpenSSL 3); the payload runs on the openssl plugin's engine.
accel-crypt_SRC := $(wildcard cmd/crypt/*.c)
accel-crypt_PKGS := libcrypto
$(B)/accel-crypt: $(wildcard cmd/crypt/*.h)
