# OpenSSL: libcrypto from libssl-dev (OpenSSL 3, for the provider API and
# the EVP ciphers and digests of the openssl:cpu0 engine). The plugin
# (openssl.c) is the table; what calls OpenSSL is the companion object
# $(B)/plugins/openssl/crypto.so (engine.h), which its probe loads.
openssl_PKGS := libcrypto
openssl_SRC := backends/openssl/openssl.c
openssl_CFLAGS := -Wl,--as-needed
openssl_LIBS := -ldl -lpthread
openssl_PARTS := crypto
$(B)/plugins/openssl/crypto.so: backends/openssl/providers.c backends/openssl/engine.c | $(LIB)
	@mkdir -p $(@D)
	$(call hdeps,$(CPPFLAGS),backends/openssl/providers.c backends/openssl/engine.c)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=hidden $$(pkg-config --cflags libcrypto) -shared -o $@ \
		backends/openssl/providers.c backends/openssl/engine.c $(LDFLAGS) -L$(B)/lib -laccel $$(pkg-config --libs libcrypto)
