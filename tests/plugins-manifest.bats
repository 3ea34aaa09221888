#!/usr/bin/env bats
# The plugin manifest (accel(7), PLUGINS): a program registers the plugins
# from PLUGINDIR/plugins.manifest and dlopens one only when it is probed,
# so a route on the built-in CPU engine maps no plugin. A plugin the
# manifest does not list is loaded as before; a manifest that is stale (a
# plugin it lists missing, or modified or put in place after it), malformed or of another ABI makes the
# folder scanned. What is mapped is read from the dynamic loader's trace
# (LD_DEBUG=files), not from timings.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	B="$ROOT/build"
	[ -f "$B/plugins/plugins.manifest" ] || skip "no plugin manifest (make builds it)"
	cd "$BATS_TEST_TMPDIR"
	# A plugin folder of our own, scanned first (ACCEL_BACKEND_PATH): its
	# plugins stand for those of the build, which have the same names.
	mkdir p
	cp -p "$B"/plugins/accel_*.so p/
	cp -p "$B/plugins/plugins.manifest" p/
	# Their companion objects (PLUGINDIR/NAME/), linked.
	for d in "$B"/plugins/*/; do
		ln -s "$d" "p/$(basename "$d")"
	done
	export ACCEL_BACKEND_PATH="$PWD/p"
}

# mapped CMD...: run CMD (stdin as given) with the loader's trace; mapped.txt
# gets the plugins (accel_NAME.so) it loaded, one path a line.
mapped() {
	LD_DEBUG=files LD_DEBUG_OUTPUT="$PWD/ld" "$@"
	cat ld.* | grep -oE 'file=[^ ]*/accel_[a-z0-9_]+\.so' | sed 's/^file=//' | sort -u > mapped.txt
	rm -f ld.*
}

@test "a run on the built-in CPU engine maps no plugin, and the output is right" {
	printf x | mapped "$B/accel-compress" -c > x.zst
	[ "$(zstd -dc x.zst)" = x ]
	[ ! -s mapped.txt ]
	printf x | mapped "$B/accel-compress" -c --format gzip > x.gz
	[ "$(gzip -dc x.gz)" = x ]
	[ ! -s mapped.txt ]
}

@test "an operation a plugin offers maps that plugin and no other" {
	printf x | mapped "$B/accel-crypt" hash > sum
	[ "$(cat sum)" = "$(printf x | sha256sum)" ]
	[ "$(cat mapped.txt)" = "$PWD/p/accel_openssl.so" ]
}

@test "--backend NAME loads its plugin, and an unknown name still lists every plugin" {
	printf x | mapped "$B/accel-crypt" hash -b openssl -v > sum 2> err
	[ "$(cat sum)" = "$(printf x | sha256sum)" ]
	grep -q 'openssl' err
	grep -qxF "$PWD/p/accel_openssl.so" mapped.txt
	run -2 "$B/accel-crypt" hash -b nosuch < /dev/null
	for p in p/accel_*.so; do
		n=${p##*/accel_}
		[[ "$output" == *"${n%.so}"* ]]
	done
}

@test "accel-detect lists every plugin from the manifest, and probing loads each" {
	mapped "$B/accel-detect" --class cpu --json > cpu.json
	[ ! -s mapped.txt ]
	mapped "$B/accel-detect" --json > all.json
	for p in p/accel_*.so; do
		n=${p##*/accel_}
		jq -e --arg n "${n%.so}" --arg o "$PWD/$p" \
			'[.probes[] | select(.name == $n and .origin == $o)] | length == 1' cpu.json
		jq -e --arg n "${n%.so}" '.probes[] | select(.name == $n) | .probed' all.json
		grep -qxF "$PWD/$p" mapped.txt
	done
}

@test "a plugin the manifest does not list is found by a scan and loaded at once" {
	cp "$B/tests/plugins/accel_test.so" p/
	mapped "$B/accel-detect" --class cpu --json > d.json
	[ "$(cat mapped.txt)" = "$PWD/p/accel_test.so" ]
	jq -e '[.probes[] | select(.name == "test")] | length == 1' d.json
}

@test "a stale manifest (a plugin newer, put in place later, or missing) makes the folder scanned" {
	touch -d '+1 minute' p/accel_fftw.so
	printf x | mapped "$B/accel-compress" -c > x.zst
	[ "$(zstd -dc x.zst)" = x ]
	[ "$(grep -c "^$PWD/p/" mapped.txt)" = "$(ls p/accel_*.so | wc -l)" ]

	# As old as the manifest again, and the manifest written after them:
	# fresh.
	touch -r p/plugins.manifest p/accel_*.so
	touch p/plugins.manifest
	printf x | mapped "$B/accel-compress" -c > x.zst
	[ ! -s mapped.txt ]
	# A plugin put in place after the manifest with an older date (cp -p,
	# a package): stale, by its ctime.
	cp -p p/accel_fftw.so fftw.so
	touch -d '-1 day' fftw.so
	cp -p fftw.so p/accel_fftw.so
	printf x | mapped "$B/accel-compress" -c > x.zst
	[ "$(grep -c "^$PWD/p/" mapped.txt)" = "$(ls p/accel_*.so | wc -l)" ]
	touch p/plugins.manifest
	rm p/accel_nic.so
	printf x | mapped "$B/accel-compress" -c > x.zst
	[ "$(grep -c "^$PWD/p/" mapped.txt)" = "$(ls p/accel_*.so | wc -l)" ]
}

@test "a manifest of another ABI or format, or malformed, makes the folder scanned" {
	n=$(ls p/accel_*.so | wc -l)
	for change in 's/^accel-plugin-manifest 1 \([0-9]*\)$/accel-plugin-manifest 1 999/' \
		      's/^accel-plugin-manifest 1 /accel-plugin-manifest 2 /' \
		      's/^\(accel_fftw\.so\t[^\t]*\t\)[0-9]*/\1high/'; do
		sed "$change" "$B/plugins/plugins.manifest" > p/plugins.manifest
		! cmp -s p/plugins.manifest "$B/plugins/plugins.manifest"
		printf x | mapped "$B/accel-compress" -c > x.zst
		[ "$(grep -c "^$PWD/p/" mapped.txt)" = "$n" ]
	done
}

@test "a listed plugin that fails to load when probed says why, as a scan would" {
	printf 'not an ELF file\n' > p/accel_broken.so
	printf 'accel_broken.so\tbroken\t90\t0\tsha256\t-\t-\ta plugin that cannot be loaded\n' >> p/plugins.manifest
	printf x | mapped "$B/accel-compress" -c > x.zst
	[ ! -s mapped.txt ]
	"$B/accel-detect" --json > d.json
	jq -e '.probes[] | select(.name == "broken") | .ok == false and (.reason | startswith("cannot load plugin"))' d.json
	# Its operation still runs, on the engines that load.
	printf x | "$B/accel-crypt" hash > sum
	[ "$(cat sum)" = "$(printf x | sha256sum)" ]
}
