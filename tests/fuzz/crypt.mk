# accel-crypt's parsers of untrusted input: the age header, the armor and
# minisign signature files.
CRYPT_FUZZ_SRC := cmd/crypt/header.c cmd/crypt/encoding.c cmd/crypt/primitives.c cmd/crypt/armor.c cmd/crypt/ssh.c
FUZZ_TARGETS += crypt_header crypt_armor crypt_minisig
FUZZ_SRC_crypt_minisig := tests/fuzz/crypt_minisig.c $(CRYPT_FUZZ_SRC) cmd/crypt/sign.c cmd/crypt/keys.c
FUZZ_SRC_crypt_header := tests/fuzz/crypt_header.c $(CRYPT_FUZZ_SRC)
FUZZ_SRC_crypt_armor := tests/fuzz/crypt_armor.c $(CRYPT_FUZZ_SRC)
FUZZ_LIBS_crypt_header := $(shell pkg-config --libs libcrypto 2>/dev/null)
FUZZ_LIBS_crypt_armor := $(FUZZ_LIBS_crypt_header)
FUZZ_LIBS_crypt_minisig := $(FUZZ_LIBS_crypt_header)
