# nic: headers from libpcap-dev; libpcap is dlopen'ed at probe time
# (--as-needed drops the link), so loading the plugin costs nothing.
nic_PKGS := libpcap
nic_SRC := backends/nic/nic.c
nic_CFLAGS := -Wl,--as-needed
