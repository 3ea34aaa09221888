# pci: needs no package (it reads sysfs), so it is always built.
pci_PKGS :=
pci_SRC := $(wildcard backends/pci/*.c)
pci_LIBS := -ldl
