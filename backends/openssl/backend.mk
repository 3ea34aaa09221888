# OpenSSL: libcrypto from libssl-dev (OpenSSL 3, for the provider API and
# the EVP ciphers and digests of the openssl:cpu0 engine).
openssl_PKGS := libcrypto
openssl_SRC := backends/openssl/openssl.c backends/openssl/engine.c
