# Vulkan: headers from libvulkan-dev; the loader is dlopen'ed at probe time
# (--as-needed drops the link), so loading the plugin costs nothing.
vulkan_PKGS := vulkan
vulkan_SRC := backends/vulkan/vulkan.c
vulkan_CFLAGS := -Wl,--as-needed
# The rules above are made by the Makefile before its "all" target: keep
# "all" the default goal.
