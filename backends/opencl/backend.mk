# OpenCL: headers from opencl-headers; the ICD loader (libOpenCL.so.1) is
# dlopen'ed at probe time, so loading the plugin costs nothing.
opencl_PKGS := OpenCL
opencl_SRC := backends/opencl/opencl.c
opencl_CFLAGS := -Wl,--as-needed -DCL_TARGET_OPENCL_VERSION=300
# The rules above are made by the Makefile before its "all" target: keep
# "all" the default goal.
