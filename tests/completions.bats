#!/usr/bin/env bats
# The shell completions under completions/ are what the programs make of
# their option tables (`make completions` writes them); bash's and fish's
# are run here, zsh's parsed and read. accel-crypt's subcommands complete at
# the first word, each one's own options after it.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	C="$ROOT/build/accel-crypt"
	PROGS=$(cd "$ROOT/cmd" && ls accel-*.c | sed 's/\.c$//')
	SUBS="keygen hash sign verify"
	# fish's -b completion runs the program by the name it was called with
	export PATH="$ROOT/build:$PATH"
	cd "$BATS_TEST_TMPDIR"
}

# help_opts PROG [SUB]: the options --help shows (from the label column),
# short and long, one a line, sorted.
help_opts() {
	"$@" --help | grep -oE '^ +(-[A-Za-z0-9], )?(--[a-z0-9-]+|-[A-Za-z0-9])' |
		grep -oE -- '--?[A-Za-z0-9][a-z0-9-]*' | LC_ALL=C sort -u
}

# help_longs PROG [SUB]: the long options of --help.
help_longs() {
	help_opts "$@" | grep -- '^--'
}

# bash_comp PROG WORD...: what completions/bash/PROG completes the last
# WORD to after the others (the first is the program as typed), sorted.
bash_comp() {
	local p=$1
	shift
	bash -c 'source "$1"; f=$2; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); "$f";
		printf "%s\n" "${COMPREPLY[@]}"' _ "$ROOT/completions/bash/$p" "_${p//-/_}" "$@" | sed '/^$/d' | LC_ALL=C sort
}

# fish_comp PROG LINE: what completions/fish/PROG.fish completes the end
# of LINE to, without descriptions, sorted.
fish_comp() {
	fish -c 'source $argv[1]; complete -C $argv[2]' "$ROOT/completions/fish/$1.fish" "$2" | cut -f1 | LC_ALL=C sort
}

# zsh_longs PROG [BRANCH]: the long options named by the option specs of
# completions/zsh/_PROG (up to their descriptions), of its case BRANCH
# when given ('*' for the program's own).
zsh_longs() {
	local f="$ROOT/completions/zsh/_$1"
	if [ -n "${2:-}" ]; then
		sed -n "/^$2)\$/,/^  ;;\$/p" "$f"
	else
		cat "$f"
	fi | grep "^  '" | sed 's/\[.*//' | grep -o -- '--[a-z][a-z0-9-]*' | LC_ALL=C sort -u
}

# same WHAT GOT WANTED: equal, or say what differs.
same() {
	if [ "$2" != "$3" ]; then
		echo "$1 differs from --help:"
		diff <(echo "$3") <(echo "$2") || true
		return 1
	fi
}

@test "completions/ holds what the programs generate: run 'make completions' after changing an option" {
	for p in $PROGS; do
		for f in bash/$p zsh/_$p fish/$p.fish; do
			"$ROOT/build/$p" --completion "${f%%/*}" > new
			diff -u "$ROOT/completions/$f" new ||
				{ echo "completions/$f is stale: run 'make completions' and commit completions/"; false; }
			echo "$f" >> expected
		done
	done
	# and nothing else: the files of a program that is gone go too
	(cd "$ROOT/completions" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) > present
	LC_ALL=C sort expected | diff -u - present ||
		{ echo "completions/ holds files no program makes: run 'make completions', remove them"; false; }
}

@test "every program's completions offer exactly the long options of its --help, each subcommand's of its own" {
	for p in $PROGS; do
		run -0 bash_comp "$p" "$p" --
		same "bash completion of $p" "$output" "$(help_longs "$ROOT/build/$p")"
		run -0 fish_comp "$p" "$p --"
		same "fish completion of $p" "$output" "$(help_longs "$ROOT/build/$p")"
	done
	same "zsh completion of accel-compress" "$(zsh_longs accel-compress)" "$(help_longs "$ROOT/build/accel-compress")"
	same "zsh completion of accel-crypt" "$(zsh_longs accel-crypt '\*')" "$(help_longs "$C")"
	for s in $SUBS; do
		run -0 bash_comp accel-crypt "$C" "$s" --
		same "bash completion of accel-crypt $s" "$output" "$(help_longs "$C" "$s")"
		run -0 fish_comp accel-crypt "accel-crypt $s --"
		same "fish completion of accel-crypt $s" "$output" "$(help_longs "$C" "$s")"
		same "zsh completion of accel-crypt $s" "$(zsh_longs accel-crypt "$s")" "$(help_longs "$C" "$s")"
	done
}

@test "bash: accel-crypt completes a subcommand or a file at the first word, then that subcommand's options" {
	touch kfile
	[ "$(bash_comp accel-crypt "$C" "")" = "$(printf '%s\n' hash keygen kfile sign verify)" ]
	[ "$(bash_comp accel-crypt "$C" h)" = hash ]
	# only the first word names a subcommand
	[ "$(bash_comp accel-crypt "$C" -d "")" = kfile ]
	[ "$(bash_comp accel-crypt "$C" -o hash -)" = "$(help_opts "$C")" ]
	[ "$(bash_comp accel-crypt "$C" keygen hash -)" = "$(help_opts "$C" keygen)" ]
	for s in $SUBS; do
		[ "$(bash_comp accel-crypt "$C" "$s" -)" = "$(help_opts "$C" "$s")" ]
		[ "$(bash_comp accel-crypt "$C" "$s" k)" = kfile ]
	done
	[ "$(bash_comp accel-crypt "$C" -)" = "$(help_opts "$C")" ]
	# the arguments of a subcommand's options
	[ "$(bash_comp accel-crypt "$C" hash -a sha)" = "$(printf '%s\n' sha1 sha256 sha3-256 sha512)" ]
	[ "$(bash_comp accel-crypt "$C" hash --algorithm b)" = blake2b512 ]
	[ "$(bash_comp accel-crypt "$C" keygen -o "")" = kfile ]
	[ -z "$(bash_comp accel-crypt "$C" sign -t "")" ]
	[ "$(bash_comp accel-crypt "$C" hash --fallback n)" = "$(printf '%s\n' next none)" ]
	# -b asks the program for the backends its registry holds
	run -0 "$C" --completion backends
	[ "${lines[0]}" = auto ] && [ "${lines[1]}" = cpu ]
	[ "$(bash_comp accel-crypt "$C" hash -b "")" = "$(LC_ALL=C sort <<< "$output")" ]
	[ "$(bash_comp accel-crypt "$C" -b "")" = "$(LC_ALL=C sort <<< "$output")" ]
}

@test "fish: accel-crypt completes a subcommand or a file at the first word, then that subcommand's options" {
	command -v fish > /dev/null || { echo "fish is not installed (make deps installs it)"; false; }
	touch kfile
	[ "$(fish_comp accel-crypt 'accel-crypt ')" = "$(printf '%s\n' hash keygen kfile sign verify)" ]
	[ "$(fish_comp accel-crypt 'accel-crypt -d ')" = kfile ]
	[ "$(fish_comp accel-crypt 'accel-crypt keygen -o ')" = kfile ]
	[ "$(fish_comp accel-crypt 'accel-crypt -o hash --')" = "$(help_longs "$C")" ]
	[ "$(fish_comp accel-crypt 'accel-crypt hash -a sha')" = "$(printf '%s\n' sha1 sha256 sha3-256 sha512)" ]
	run -0 "$C" --completion backends
	[ "$(fish_comp accel-crypt 'accel-crypt hash -b ')" = "$(LC_ALL=C sort <<< "$output")" ]
}

@test "the zsh and fish completions parse" {
	command -v zsh > /dev/null || { echo "zsh is not installed (make deps installs it)"; false; }
	command -v fish > /dev/null || { echo "fish is not installed (make deps installs it)"; false; }
	for p in $PROGS; do
		zsh -n "$ROOT/completions/zsh/_$p"
		fish -n "$ROOT/completions/fish/$p.fish"
		[ "$(head -n 1 "$ROOT/completions/zsh/_$p")" = "#compdef $p" ]
	done
	# accel-crypt's: a branch per subcommand, the names described at the first word
	for s in $SUBS; do
		grep -qx "$s)" "$ROOT/completions/zsh/_accel-crypt"
		grep -q "^      '$s:" "$ROOT/completions/zsh/_accel-crypt"
	done
}

@test "--completion backends: auto, then the registry's backends, one a line" {
	run -0 --separate-stderr "$ROOT/build/accel-detect" --completion backends
	[ -z "$stderr" ]
	[ "${lines[0]}" = auto ]
	[ "${lines[1]}" = cpu ]
	for b in "${lines[@]:1}"; do
		[ "$b" = cpu ] || [ -f "$ROOT/build/plugins/accel_$b.so" ]
	done
	[ "${#lines[@]}" -eq $(($(ls "$ROOT/build/plugins" | grep -c '^accel_.*\.so$') + 2)) ]
}
