# accel-crypt's parsers of untrusted input: the age header, the armor,
# minisign signature files, checksum lists (hash -c), identity and
# recipients files.
CRYPT_FUZZ_SRC := cmd/crypt/header.c cmd/crypt/encoding.c cmd/crypt/primitives.c cmd/crypt/armor.c cmd/crypt/ssh.c
FUZZ_TARGETS += crypt_header crypt_armor crypt_minisig crypt_sums crypt_identity crypt_recipients
FUZZ_SRC_crypt_sums := tests/fuzz/crypt_sums.c cmd/crypt/sums.c
FUZZ_SRC_crypt_identity := tests/fuzz/crypt_identity.c $(CRYPT_FUZZ_SRC) cmd/crypt/keys.c cmd/crypt/sign.c
FUZZ_SRC_crypt_recipients := tests/fuzz/crypt_recipients.c $(CRYPT_FUZZ_SRC) cmd/crypt/keys.c cmd/crypt/sign.c
FUZZ_SRC_crypt_minisig := tests/fuzz/crypt_minisig.c $(CRYPT_FUZZ_SRC) cmd/crypt/sign.c cmd/crypt/keys.c
FUZZ_SRC_crypt_header := tests/fuzz/crypt_header.c $(CRYPT_FUZZ_SRC)
FUZZ_SRC_crypt_armor := tests/fuzz/crypt_armor.c $(CRYPT_FUZZ_SRC)
FUZZ_LIBS_crypt_header := $(shell pkg-config --libs libcrypto 2>/dev/null)
FUZZ_LIBS_crypt_armor := $(FUZZ_LIBS_crypt_header)
FUZZ_LIBS_crypt_minisig := $(FUZZ_LIBS_crypt_header)
FUZZ_LIBS_crypt_identity := $(FUZZ_LIBS_crypt_header)
FUZZ_LIBS_crypt_recipients := $(FUZZ_LIBS_crypt_header)
