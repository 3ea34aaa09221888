# OpenSSL: libcrypto from libssl-dev (OpenSSL 3, for the provider API).
openssl_PKGS := libcrypto
openssl_SRC := backends/openssl/openssl.c
