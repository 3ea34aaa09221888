#!/usr/bin/env bats
# The option declaration is the one source of --help, the man page and the
# bash/zsh/fish completions: check that they name the same long options, and
# that usage errors exit 2 with a pointer to --help.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	MAN="$ROOT/build/man/accel-compress.1"
	cd "$BATS_TEST_TMPDIR"
}

# Long options of --help (from the label column, not the descriptions),
# sorted, one a line.
help_longs() {
	"$A" --help | grep -E '^ +-' | cut -c1-27 | grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

# same NAME LIST1 LIST2: the two lists are equal, or say what differs.
same() {
	if [ "$2" != "$3" ]; then
		echo "$1 differs from --help:"
		diff <(echo "$3") <(echo "$2") || true
		return 1
	fi
}

@test "--help names a set of long options" {
	run help_longs
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -ge 20 ]
	[[ "$output" == *"--decompress"* && "$output" == *"--backend"* && "$output" == *"--no-check"* ]]
}

@test "the man page documents exactly the options of --help" {
	[ -f "$MAN" ]
	# the OPTIONS section, roff hyphens made plain
	man_opts=$(sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$MAN" | sed 's/\\-/-/g' |
		grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
	same "man page OPTIONS" "$man_opts" "$(help_longs)"
	# and every long option the whole page mentions exists
	for o in $(sed 's/\\-/-/g' "$MAN" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
		grep -qx -- "$o" <<< "$(help_longs)" || { echo "man page mentions unknown $o"; false; }
	done
	# the man page is the one the program makes now
	"$A" --help-man > opts
	grep -qF -f opts "$MAN"
}

@test "bash completion offers exactly the options of --help" {
	"$A" --completion bash > comp.bash
	cmp comp.bash "$ROOT/completions/bash/accel-compress"
	run bash -c 'source "$1"; COMP_WORDS=(accel-compress --); COMP_CWORD=1; _accel_compress;
		printf "%s\n" "${COMPREPLY[@]}"' _ comp.bash
	[ "$status" -eq 0 ]
	same "bash completion" "$(sort -u <<< "$output")" "$(help_longs)"
	# values of an option with a fixed set
	run bash -c 'source "$1"; COMP_WORDS=(accel-compress --fallback ""); COMP_CWORD=2; _accel_compress;
		printf "%s\n" "${COMPREPLY[@]}"' _ comp.bash
	[ "$output" = "$(printf 'cpu\nnext\nnone')" ]
	run bash -c 'source "$1"; COMP_WORDS=(accel-compress -F l); COMP_CWORD=2; _accel_compress;
		printf "%s\n" "${COMPREPLY[@]}"' _ comp.bash
	[ "$output" = lz4 ]
}

@test "zsh completion names exactly the options of --help" {
	"$A" --completion zsh > _accel-compress
	cmp _accel-compress "$ROOT/completions/zsh/_accel-compress"
	[ "$(head -n 1 _accel-compress)" = "#compdef accel-compress" ]
	# the option specs, up to their description
	zsh_opts=$(grep "^  '" _accel-compress | sed 's/\[.*//' | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
	same "zsh completion" "$zsh_opts" "$(help_longs)"
	if command -v zsh > /dev/null; then zsh -n _accel-compress; fi
}

@test "fish completion names exactly the options of --help" {
	"$A" --completion fish > accel-compress.fish
	cmp accel-compress.fish "$ROOT/completions/fish/accel-compress.fish"
	fish_opts=$(grep '^complete ' accel-compress.fish | grep -o -- ' -l [a-z][a-z0-9-]*' | sed 's/ -l /--/' | sort -u)
	same "fish completion" "$fish_opts" "$(help_longs)"
	[ "$(grep -c '^complete -c accel-compress ' accel-compress.fish)" -eq "$(help_longs | wc -l)" ]
	if command -v fish > /dev/null; then fish -n accel-compress.fish; fi
}

# usage ARGS...: exit 2, the error line, then "Try 'accel-compress --help' ...".
usage() {
	run --separate-stderr "$A" -o "$BATS_TEST_TMPDIR/out" "$@" < /dev/null
	echo "args: $*; status $status; stderr: $stderr"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ ! -e "$BATS_TEST_TMPDIR/out" ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	[[ "${stderr_lines[0]}" == "accel-compress: "* ]]
	[ "${stderr_lines[1]}" = "Try 'accel-compress --help' for more information." ]
}

@test "usage errors exit 2 with \"Try 'accel-compress --help'\"" {
	usage --frob
	[ "${stderr_lines[0]}" = "accel-compress: unknown option '--frob'" ]
	usage -x
	[ "${stderr_lines[0]}" = "accel-compress: unknown option '-x'" ]
	usage --no
	[ "${stderr_lines[0]}" = "accel-compress: option '--no' is ambiguous" ]
	usage -o
	[ "${stderr_lines[0]}" = "accel-compress: option '-o' needs an argument (FILE)" ]
	usage --threads
	usage --quiet=1
	usage -T many
	usage --threads=-1
	usage -25
	usage -20
	usage -F 7z
	usage --format=zip
	usage -B 1
	usage -B 2G
	usage --chunk-size=lots
	usage --fallback sometimes
	usage --completion tcsh
	usage -b ,
	usage -b auto,cpu
}

@test "an empty element in -b is a usage error" {
	usage -b ,cpu
	usage -b cpu,
}

@test "malformed environment settings are usage errors" {
	run --separate-stderr env ACCEL_THREADS=lots "$A" < /dev/null
	[ "$status" -eq 2 ]
	[ "$stderr" = "accel-compress: ACCEL_THREADS: 'lots' is not a number of threads (0-4096)" ]
	run --separate-stderr env ACCEL_FALLBACK=maybe "$A" < /dev/null
	[ "$status" -eq 2 ]
	[ "$stderr" = "accel-compress: ACCEL_FALLBACK: 'maybe' is not one of cpu, next, none" ]
}

@test "options and operands mix; -- ends options" {
	printf 'hello\n' > -f
	printf 'world\n' > a
	"$A" -c a -T1 -q -- -f > out.zst
	[ "$("$A" -d < out.zst)" = "$(printf 'world\nhello')" ]
	"$A" -c -d -- - < out.zst | cmp <(printf 'world\nhello\n') -
}

@test "a program without its man page stops the build with one line naming the page" {
	mkdir -p tree/cmd tree/man
	cp "$ROOT/Makefile" tree/
	touch tree/cmd/accel-new.c tree/cmd/accel-old.c tree/man/accel-old.1.in
	run -2 make -s -C tree help
	[[ "$output" == "Makefile:"*": *** man/accel-new.1.in is missing: every program has a man page.  Stop." ]]
	[ "${#lines[@]}" -eq 1 ]
	touch tree/man/accel-new.1.in
	run -0 make -s -C tree help
	[[ "$output" == targets:* ]]
}

@test "without libhwloc-dev (a fresh machine) make deps parses, so that deps can install it; a goal that builds now stops with one line naming make deps" {
	mkdir -p tree/cmd tree/man
	cp "$ROOT/Makefile" tree/
	touch tree/cmd/accel-old.c tree/man/accel-old.1.in
	# CC=false: the compiler names no libhwloc.so, as where it is not installed.
	run -0 make -n -C tree deps clean CC=false
	[[ "$output" == *"sh tests/deps.sh"* ]]
	run -2 make -s -C tree help CC=false
	[[ "$output" == "Makefile:"*": *** accel: cannot find libhwloc.so (libhwloc-dev, from make deps) or read its soname (readelf, binutils).  Stop." ]]
	[ "${#lines[@]}" -eq 1 ]
	run -0 make -s -C tree help
}
