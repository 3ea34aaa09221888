# qat: needs no package (it reads sysfs), so it is always built.
qat_PKGS :=
qat_SRC := $(wildcard backends/qat/*.c)
