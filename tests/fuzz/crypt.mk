# accel-crypt's parsers of untrusted input (libcore/ops/crypt): the age
# header, the armor, minisign signature files, checksum lists (hash -c),
# identity and recipients files. Each target compiles the archive's
# sources (CRYPT_SRC), so libFuzzer sees their coverage.
FUZZ_TARGETS += crypt_header crypt_armor crypt_minisig crypt_sums crypt_identity crypt_recipients
FUZZ_SRC_crypt_sums := tests/fuzz/crypt_sums.c libcore/ops/crypt/sums.c
FUZZ_SRC_crypt_identity := tests/fuzz/crypt_identity.c $(CRYPT_SRC)
FUZZ_SRC_crypt_recipients := tests/fuzz/crypt_recipients.c $(CRYPT_SRC)
FUZZ_SRC_crypt_minisig := tests/fuzz/crypt_minisig.c $(CRYPT_SRC)
FUZZ_SRC_crypt_header := tests/fuzz/crypt_header.c $(CRYPT_SRC)
FUZZ_SRC_crypt_armor := tests/fuzz/crypt_armor.c $(CRYPT_SRC)
FUZZ_LIBS_crypt_header := $(CRYPT_LIBS)
FUZZ_LIBS_crypt_armor := $(CRYPT_LIBS)
FUZZ_LIBS_crypt_minisig := $(CRYPT_LIBS)
FUZZ_LIBS_crypt_identity := $(CRYPT_LIBS)
FUZZ_LIBS_crypt_recipients := $(CRYPT_LIBS)
