#!/bin/sh
# Install the Debian packages accel needs to build, test and run its tour.
# Extra package names may be given as arguments (make fuzz adds clang), and
# each program's own packages are listed in tests/deps.d/*.list (one or more
# names a line, # comments). After the packages, each tests/deps.d/*.sh runs
# (build-local downloads that a program names, such as npm packages into
# build/); each does nothing when its files are there.
# Does nothing when they are all installed; runs apt-get update only when
# something is missing; works as root and through sudo.
set -eu
PKGS="build-essential pkg-config libzstd-dev liblz4-dev libisal-dev libhwloc-dev libcjson-dev libminizip-dev zlib1g-dev
libxxhash-dev libcmocka-dev bats jq zstd lz4 pigz gzip isal hwloc
libvulkan-dev mesa-vulkan-drivers vulkan-tools ocl-icd-opencl-dev opencl-headers
pocl-opencl-icd clinfo libpcap-dev libssl-dev libavutil-dev libavcodec-dev
libpci-dev pci.ids python3-xxhash $*
$(cat "$(dirname "$0")"/deps.d/*.list 2>/dev/null | sed 's/#.*//')"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps: all packages present"
else
	echo "deps: installing$missing"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing
fi
[ $# -gt 0 ] && exit 0
for s in "$(dirname "$0")"/deps.d/*.sh; do
	[ -f "$s" ] || continue
	sh "$s" || exit 1
done
