# libsodium: BLAKE2b file hashes on the CPU device (sodium:cpu0), headers
# from libsodium-dev; libsodium.so.23 is dlopen'ed at probe time
# (--as-needed drops the link), so loading the plugin maps nothing else.
sodium_PKGS := libsodium
sodium_SRC := backends/sodium/sodium.c
sodium_CFLAGS := -Wl,--as-needed
sodium_LIBS := -ldl -lpthread
