# accel-crypt's formats (libcore/ops/crypt): the age header and stanzas,
# base64 and bech32, the armor, recipients and identities files, SSH keys,
# minisign files, checksum lists, and the libcrypto primitives under them.
# They need libcrypto and libsodium (minisign's encrypted keys), which
# libaccel.so does not load (every program would pay for them), so they
# make a static archive of their own: accel-crypt links it
# (cmd/accel-crypt.mk) and the crypt fuzz targets compile its sources
# (tests/fuzz/crypt.mk). ssh.c includes libssh's header and dlopens
# libssh.so.4 when an encrypted OpenSSH key is met (nothing links it).
CRYPT_SRC := $(wildcard libcore/ops/crypt/*.c)
CRYPT_OBJ := $(CRYPT_SRC:%.c=$(B)/obj/%.o)
CRYPT_LIB := $(B)/lib/libaccel-crypt.a
CRYPT_LIBS := $(shell pkg-config --libs libcrypto libsodium 2>/dev/null)
$(CRYPT_OBJ): CPPFLAGS += $(shell pkg-config --cflags libcrypto libsodium 2>/dev/null)

$(CRYPT_LIB): $(CRYPT_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $(CRYPT_OBJ)
