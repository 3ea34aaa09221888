#!/usr/bin/env bats
# The plugin manifest (accel(7), PLUGINS): a program registers the plugins
# from PLUGINDIR/plugins.manifest and dlopens one only when it is probed,
# so a route on the built-in CPU engine maps no plugin. A plugin the
# manifest does not list is loaded as before; a manifest that is stale (a
# plugin it lists missing, or not the file it recorded: another size or
# build-id, or, without a build-id, another modification time), malformed
# or of another format or ABI makes the folder scanned. What is mapped is
# read from the dynamic loader's trace (LD_DEBUG=files), not from timings.

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

# scanned: each plugin of p/ was mapped (a scan), or none (the manifest read).
scanned() {
	[ "$(grep -c "^$PWD/p/" mapped.txt)" = "$(ls p/accel_*.so | wc -l)" ]
}

@test "a stale manifest (a plugin rebuilt, replaced by a copy that keeps an older date, or missing) makes the folder scanned" {
	printf x | mapped "$B/accel-compress" -c > x.zst
	[ ! -s mapped.txt ]
	# Another build in its place (the test plugin, renamed: another
	# build-id and size), with the date of the one it replaces (cp -p,
	# rsync -t): stale.
	cp -p p/accel_fftw.so fftw.so
	cp "$B/tests/plugins/accel_test.so" p/accel_fftw.so
	touch -r fftw.so p/accel_fftw.so
	printf x | mapped "$B/accel-compress" -c > x.zst
	[ "$(zstd -dc x.zst)" = x ]
	scanned
	# The same size with another build-id: stale too.
	cp -p fftw.so p/accel_fftw.so
	id=$(awk -F '\t' '$1 == "accel_fftw.so" { print $3 }' p/plugins.manifest)
	python3 -c 'import sys; p, i = sys.argv[1], bytes.fromhex(sys.argv[2][9:]); b = open(p, "rb").read(); assert b.count(i) == 1; open(p, "wb").write(b.replace(i, bytes(x ^ 0xff for x in i)))' p/accel_fftw.so "$id"
	run -1 cmp -s fftw.so p/accel_fftw.so
	[ "$(stat -c %s p/accel_fftw.so)" = "$(stat -c %s fftw.so)" ]
	printf x | mapped "$B/accel-compress" -c > x.zst
	scanned
	# The same plugin back, however old: fresh.
	cp -p fftw.so p/accel_fftw.so
	touch -d '-1 year' p/accel_fftw.so
	printf x | mapped "$B/accel-compress" -c > x.zst
	[ ! -s mapped.txt ]
	rm p/accel_nic.so
	printf x | mapped "$B/accel-compress" -c > x.zst
	scanned
}

@test "a plugin hard-linked (perf's build-id cache, backups), chmod'ed, touched or copied after the manifest leaves it fresh" {
	mkdir cache
	ln p/accel_fftw.so cache/fftw.so
	chmod 700 p/accel_openssl.so
	touch -c p/accel_nic.so
	touch -d '+1 day' p/accel_pci.so
	cp p/accel_qat.so qat.so
	mv qat.so p/accel_qat.so
	printf x | mapped "$B/accel-compress" -c > x.zst
	[ "$(zstd -dc x.zst)" = x ]
	[ ! -s mapped.txt ]
	printf x | mapped "$B/accel-crypt" hash > sum
	[ "$(cat sum)" = "$(printf x | sha256sum)" ]
	[ "$(cat mapped.txt)" = "$PWD/p/accel_openssl.so" ]
}

@test "a plugin without a build-id is known by its size and modification time" {
	command -v objcopy > /dev/null || skip "no objcopy (binutils)"
	objcopy --remove-section=.note.gnu.build-id p/accel_fftw.so fftw.so
	mv fftw.so p/accel_fftw.so
	LD_LIBRARY_PATH="$B/lib" "$B/tools/plugin-manifest" p > p/plugins.manifest
	grep -qP '^accel_fftw\.so\t[0-9]+\tmtime:[0-9]+\.[0-9]{9}\t' p/plugins.manifest
	grep -qP '^accel_openssl\.so\t[0-9]+\tbuild-id:[0-9a-f]{40}\t' p/plugins.manifest
	ln p/accel_fftw.so fftw-link.so
	printf x | mapped "$B/accel-compress" -c > x.zst
	[ ! -s mapped.txt ]
	touch -c p/accel_fftw.so
	printf x | mapped "$B/accel-compress" -c > x.zst
	scanned
}

@test "a manifest of another ABI or format, or malformed, makes the folder scanned" {
	n=$(ls p/accel_*.so | wc -l)
	for change in 's/^accel-plugin-manifest 3 \([0-9]*\)$/accel-plugin-manifest 3 999/' \
		      's/^accel-plugin-manifest 3 /accel-plugin-manifest 2 /' \
		      's/^accel-plugin-manifest 3 /accel-plugin-manifest 4 /' \
		      's/^\(accel_fftw\.so\t[^\t]*\t[^\t]*\t[^\t]*\t\)[0-9]*/\1high/' \
		      's/^\(accel_cufft\.so\t.*\t\)fft\.c2c=[0-9]*/\1fft.c2c=fast/' \
		      's/^\(accel_cufft\.so\t.*\t\)fft\.c2c=[0-9]*/\1fft.c2c=-5/' \
		      's/^\(accel_fftw\.so\t[^\t]*\t\)[^\t]*/\1-/'; do
		sed "$change" "$B/plugins/plugins.manifest" > p/plugins.manifest
		! cmp -s p/plugins.manifest "$B/plugins/plugins.manifest"
		printf x | mapped "$B/accel-compress" -c > x.zst
		[ "$(grep -c "^$PWD/p/" mapped.txt)" = "$n" ]
	done
}

@test "a listed plugin that fails to load when probed says why, as a scan would" {
	# A plugin whose library is gone since the manifest was written.
	cp p/accel_fftw.so p/accel_broken.so
	python3 -c 'import sys; p = sys.argv[1]; b = open(p, "rb").read(); assert b.count(b"libc.so.6\0") == 1; open(p, "wb").write(b.replace(b"libc.so.6\0", b"libq.so.6\0"))' p/accel_broken.so
	id=$(awk -F '\t' '$1 == "accel_fftw.so" { print $3 }' p/plugins.manifest)
	printf 'accel_broken.so\t%s\t%s\tbroken\t90\t0\tsha256\t-\t-\t-\ta plugin that cannot be loaded\n' \
		"$(stat -c %s p/accel_broken.so)" "$id" >> p/plugins.manifest
	printf x | mapped "$B/accel-compress" -c > x.zst
	[ ! -s mapped.txt ]
	"$B/accel-detect" --json > d.json
	jq -e '.probes[] | select(.name == "broken") | .ok == false and (.reason | startswith("cannot load plugin"))' d.json
	# Its operation still runs, on the engines that load.
	printf x | "$B/accel-crypt" hash > sum
	[ "$(cat sum)" = "$(printf x | sha256sum)" ]
}
