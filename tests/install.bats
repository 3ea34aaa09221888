#!/usr/bin/env bats
# make install PREFIX=/opt/accel DESTDIR=... after the plain build: accel.pc
# (its directories, pkg-config's answer, a program built and run against the
# installed tree), no installed file naming the build tree (strings, RUNPATH,
# links), ONNX Runtime loaded from the installed copy, the man pages, and the
# tour run from another folder against the installed programs with the build
# tree hidden (a mount namespace, where one can be made).

bats_require_minimum_version 1.5.0

load lib/common

setup_file() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	make -s --no-print-directory -C "$ROOT" install PREFIX=/opt/accel DESTDIR="$BATS_FILE_TMPDIR/dest" >&2
}

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	D="$BATS_FILE_TMPDIR/dest"
	I="$D/opt/accel"
	cd "$BATS_TEST_TMPDIR"
}

# have_ort: the onnxruntime plugin was installed.
have_ort() {
	[ -f "$I/lib/accel/accel_onnxruntime.so" ]
}

@test "install: accel.pc names the install PREFIX (not the build's), libdir and includedir under it" {
	cat > want.pc <<-'EOF'
	prefix=/opt/accel
	libdir=${prefix}/lib
	includedir=${prefix}/include

	Name: accel
	Description: accelerator discovery, routing and stream engine
	Version: 0.1.0
	Libs: -L${libdir} -laccel
	Cflags: -I${includedir}
	EOF
	diff want.pc "$I/lib/pkgconfig/accel.pc"
	[ -f "$I/include/accel.h" ] && [ -f "$I/include/accel/context.h" ] && [ -f "$I/include/accel/ops/tensor.h" ]
	[ -L "$I/lib/libaccel.so" ] && [ -L "$I/lib/libaccel.so.0" ] && [ -f "$I/lib/libaccel.so.0.1.0" ]
	export PKG_CONFIG_PATH="$I/lib/pkgconfig"
	[ "$(pkg-config --cflags --libs accel | sed 's/ *$//')" = "-I/opt/accel/include -L/opt/accel/lib -laccel" ]
	[ "$(pkg-config --modversion accel)" = 0.1.0 ]
	[ "$(PKG_CONFIG_SYSROOT_DIR="$D" pkg-config --cflags --libs accel | sed 's/ *$//')" = "-I$I/include -L$I/lib -laccel" ]
	[ "$(pkg-config --define-prefix --cflags --libs accel | sed 's/ *$//')" = "-I$I/include -L$I/lib -laccel" ]
}

@test "install: a program including <accel.h> builds with pkg-config and finds the plugins in accel/ beside the installed libaccel" {
	cat > p.c <<-'EOF'
	#include <stdio.h>
	#include <string.h>
	#include <accel.h>

	int main(void)
	{
		struct accel_ctx *ctx = accel_ctx_new();
		if (!ctx)
			return 1;
		int ort = accel_probe_backend(ctx, "onnxruntime");
		for (int i = 0; i < accel_backend_count(ctx); i++) {
			const struct accel_backend_status *s = accel_backend_status(ctx, i);
			printf("%s %s\n", s->name, s->origin);
			if (!strcmp(s->name, "onnxruntime") && !ort)
				printf("note %s\n", s->notes[0]);
		}
		accel_ctx_free(ctx);
		return 0;
	}
	EOF
	flags=$(PKG_CONFIG_PATH="$I/lib/pkgconfig" pkg-config --define-prefix --cflags --libs accel)
	# shellcheck disable=SC2086
	cc -std=c11 -Wall -Werror -o p p.c $flags -Wl,-rpath,"$I/lib"
	run -0 ./p
	[[ "${lines[0]}" == "cpu built-in" ]]
	# every plugin comes from the installed folder (the program lives elsewhere)
	[ -z "$(grep -v -e ' built-in$' -e '^note ' -e " $I/lib/accel/accel_[a-z0-9]*\.so\$" <<< "$output")" ]
	grep -qx "openssl $I/lib/accel/accel_openssl.so" <<< "$output"
	if have_ort; then
		grep -qx "onnxruntime $I/lib/accel/accel_onnxruntime.so" <<< "$output"
		[[ "$output" == *"note onnxruntime: $I/lib/accel/onnxruntime/libonnxruntime.so.1, ONNX Runtime "* ]]
	fi
	# The manifest is installed after the plugins, so it is fresh: the
	# program loaded only the plugin it probed.
	[ -f "$I/lib/accel/plugins.manifest" ]
	LD_DEBUG=files LD_DEBUG_OUTPUT="$PWD/ld" ./p > /dev/null
	run -0 sh -c "cat ld.* | grep -oE 'file=[^ ]*/accel_[a-z0-9]+\.so' | sort -u"
	rm -f ld.*
	[ "$output" = "file=$I/lib/accel/accel_onnxruntime.so" ]
}

@test "install: no installed file names the build tree (strings, RUNPATH, links); RUNPATHs are \$ORIGIN-relative" {
	[ -z "$(grep -rlaF "$ROOT" "$D")" ]
	[ -z "$(find "$D" -type l -lname '/*')" ]
	n=0
	while read -r f; do
		head -c 4 "$f" | grep -q 'ELF' || continue
		n=$((n + 1))
		run -0 readelf -d "$f"
		[[ "$output" != *"(RPATH)"* ]]
		paths=$(sed -n 's/.*(RUNPATH).*\[\(.*\)\]$/\1/p' <<< "$output" | tr ':' '\n')
		[ -z "$(grep -v '^\$ORIGIN' <<< "$paths" | grep -v '^$')" ] || { echo "$f: $paths"; false; }
	done < <(find "$D" -type f)
	[ "$n" -ge 8 ]
}

@test "install: the installed accel-infer runs a model on ONNX Runtime copied beside the plugin" {
	have_ort || skip "no onnxruntime backend: run make deps (ONNX Runtime from npm) and make"
	[ -f "$I/lib/accel/onnxruntime/libonnxruntime.so.1" ]
	run -0 readelf -d "$I/lib/accel/accel_onnxruntime.so"
	[[ "$output" == *'(RUNPATH)'*'[$ORIGIN/onnxruntime]'* ]]
	run -0 "$I/bin/accel-detect" -v
	[[ "$output" == *"onnxruntime: $I/bin/../lib/accel/onnxruntime/libonnxruntime.so.1, ONNX Runtime "* ]]
	/usr/bin/python3 "$ROOT/tests/infer/models.py" . >&2
	/usr/bin/python3 -c "import numpy as np; np.save('x.npy', np.arange(4, dtype=np.float32).reshape(1, 4))"
	"$I/bin/accel-infer" -m lin.onnx -b onnxruntime --output z x.npy > z.npy
	run -0 /usr/bin/python3 -c "import numpy as np; print(np.load('z.npy').tolist())"
	[ "$output" = "[[0.0, 2.0, 4.0, 6.0]]" ]
	# accel-bench --vs's peer of onnx.run, installed, finds that copy too.
	[ -x "$I/libexec/accel/infer-direct" ]
	run -0 ldd "$I/libexec/accel/infer-direct"
	[[ "$output" == *"libonnxruntime.so.1 => $I/libexec/accel/../../lib/accel/onnxruntime/libonnxruntime.so.1 "* ]]
}

@test "install: man finds the installed pages (accel-crypt(1), accel(7)) and they format without a warning" {
	run -0 --separate-stderr env MANWIDTH=80 man --warnings -M "$I/share/man" -P cat accel-crypt
	[[ "${lines[0]}" == "ACCEL-CRYPT(1)"*"User Commands"*"ACCEL-CRYPT(1)" ]]
	[ -z "$stderr" ]
	run -0 --separate-stderr env MANWIDTH=80 man --warnings -M "$I/share/man" -P cat 7 accel
	[[ "${lines[0]}" == "ACCEL(7)"* ]]
	[ -z "$stderr" ]
	for p in "$ROOT"/cmd/accel-*.c; do
		p=$(basename "$p" .c)
		[ -f "$I/share/man/man1/$p.1" ] && [ -f "$I/share/bash-completion/completions/$p" ] &&
			[ -f "$I/share/zsh/site-functions/_$p" ] && [ -f "$I/share/fish/vendor_completions.d/$p.fish" ]
	done
}

@test "install: the tour runs from another folder against the installed programs, the build tree hidden where a mount namespace can be made" {
	mkdir models
	cp -r "$ROOT/build/deps/models/ocr" models/ 2> /dev/null || true
	cat > tour.sh <<-'EOF'
	# hide: the build tree under an empty tmpfs, where a mount namespace can be made
	[ "$1" = hide ] && { mount -t tmpfs none "$ROOT/build" && [ ! -e "$ROOT/build/accel-detect" ] || exit 99; }
	cd "$BATS_TEST_TMPDIR"
	PATH=/usr/sbin:/usr/bin:/sbin:/bin ACCEL_BUILD="$I/bin" ACCEL_TOUR_MB=2 ACCEL_CORPUS_DIR="$PWD/corpus" \
		ACCEL_MODELS="$PWD/models" sh "$ROOT/examples/tour.sh"
	EOF
	export ROOT I
	if unshare -rm true 2> /dev/null; then
		run -0 unshare -rm sh tour.sh hide
	else
		run -0 sh tour.sh plain
	fi
	[ "${lines[-1]}" = "tour done" ]
	[[ "$output" == *"sha256sum agrees: ok"* ]]
	[[ "$output" == *"ffprobe: video hevc,160,120,25, audio aac"* ]]
	if have_ort && [ -d models/ocr ]; then
		[[ "$output" == *"read: 'Hello accel 2026'"* ]]
	fi
}
