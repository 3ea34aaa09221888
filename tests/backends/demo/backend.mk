# demo: a backend for the tests only (built into build/tests/backends, never
# installed), to show that a backend is one folder: it needs no package.
demo_PKGS :=
demo_SRC := $(wildcard tests/backends/demo/*.c)
