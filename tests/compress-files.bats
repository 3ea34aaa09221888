#!/usr/bin/env bats
# accel-compress's file habits, zstd's: FILE to FILE.zst (.gz, .lz4) beside
# it, -d back by suffix, --rm, -k, -c, -r, -f, the owner, mode and times
# of the source, and no binary on a terminal.

bats_require_minimum_version 1.5.0

load lib/common
load lib/tty

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	seq 1 30000 > a
	head -c 200000 /dev/urandom > b
}

@test "several FILEs: each to FILE.zst, .gz, .lz4 beside it, the sources kept; the peers read them" {
	run -0 --separate-stderr "$A" a b
	[ -z "$output" ] && [ -z "$stderr" ]
	zstd -q -d -c a.zst | cmp - a
	zstd -q -d -c b.zst | cmp - b
	"$A" -F gzip a b
	gzip -d -c a.gz | cmp - a
	gzip -d -c b.gz | cmp - b
	"$A" -F lz4 -k a
	lz4 -q -d -c a.lz4 | cmp - a
	[ -f a ] && [ -f b ]
}

@test "-d restores FILE from FILE.zst, .gz, .lz4, .tzst, .tgz; the format from the data" {
	cp a keep
	for f in zstd gzip lz4; do
		"$A" -F "$f" --rm a
		ext=$([ "$f" = zstd ] && echo zst || { [ "$f" = gzip ] && echo gz || echo lz4; })
		[ ! -e a ] && [ -f "a.$ext" ]
		"$A" -d "a.$ext"
		cmp a keep
		[ -f "a.$ext" ]
		rm "a.$ext"
	done
	tar cf t.orig a b
	zstd -q t.orig -o t.tzst
	gzip -c t.orig > u.tgz
	"$A" -d t.tzst u.tgz
	cmp t.tar t.orig
	cmp u.tar t.orig
	# a gzip file named .zst: named by the suffix, read by its magic
	gzip -c a > g.zst
	"$A" -d g.zst
	cmp g a
}

@test "--rm removes the source only once the output is complete; -k keeps it; -c never removes" {
	cp a a.keep
	"$A" --rm a
	[ ! -e a ] && [ -f a.zst ]
	"$A" -d --rm -k a.zst
	[ -f a.zst ] && cmp a a.keep
	"$A" -c --rm a > c.zst
	[ -f a ]
	cmp c.zst a.zst
	# a failed run (an injected fault, no engine left) keeps the source, no output
	rm a.zst
	run --separate-stderr env ACCEL_BACKEND_PATH="$ROOT/build/tests/plugins" ACCEL_FAULT='test:*' \
		"$A" --rm -B 64K -b test:other0 --fallback none a
	[ "$status" -eq 1 ]
	[ -f a ] && [ ! -e a.zst ]
	[ -z "$(find . -name '.a.zst.*')" ]
	# a damaged FILE.zst: exit 3, kept, nothing restored
	"$A" -B 64K b
	head -c 50000 b.zst > cut.zst
	run --separate-stderr "$A" -d --rm cut.zst
	[ "$status" -eq 3 ]
	[ -f cut.zst ] && [ ! -e cut ]
}

@test "an existing output needs -f; the other FILEs go on; exit 1" {
	"$A" a
	echo old > b.zst
	cp a.zst a.zst.first
	run --separate-stderr "$A" b a
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: b.zst already exists; use -f to overwrite it
accel-compress: a.zst already exists; use -f to overwrite it" ]
	[ "$(cat b.zst)" = old ]
	rm a.zst
	run --separate-stderr "$A" b a
	[ "$status" -eq 1 ]
	[ -f a.zst ] && [ "$(cat b.zst)" = old ]
	"$A" -f b
	zstd -q -d -c b.zst | cmp - b
	# an output that is the input itself is refused, -f or not
	ln a.zst same
	run --separate-stderr "$A" -f -d -o same a.zst
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: a.zst: the output same is the input itself" ]
}

@test "FILE...: one run for all; a FILE whose run fails leaves no output and its source, the FILEs after it go on" {
	echo small > c
	echo tiny > d
	# unit 2 of every FILE fails: only b (200 KB in 1 KiB chunks) has one
	run --separate-stderr env ACCEL_FAULT='cpu:2' "$A" --fallback none -B 1K --rm c b d
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: b: cpu: unit 2 (byte offset 2048) failed: injected fault (ACCEL_FAULT); --fallback none" ]
	[ ! -e b.zst ] && [ -f b ] && [ ! -e c ] && [ ! -e d ]
	zstd -q -d -c c.zst | grep -qx small
	zstd -q -d -c d.zst | grep -qx tiny
	[ -z "$(ls -A | grep '^\.')" ]
	# many small FILEs, each its own output, the same bytes zstd reads
	mkdir m
	for i in $(seq 200); do echo "file $i" > m/f$i; done
	"$A" -q m/f*
	for i in 1 77 200; do [ "$(zstd -q -d -c m/f$i.zst)" = "file $i" ]; done
	[ "$(ls m/*.zst | wc -l)" -eq 200 ]
}

@test "-d with an unknown suffix: zstd's kind of line, the other FILEs done, exit 1" {
	"$A" b
	mv b b.orig
	cp a a.txt
	run --separate-stderr "$A" -d a.txt b.zst
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: a.txt: unknown suffix (.zst/.tzst/.gz/.tgz/.lz4/.tlz4 expected); cannot name the output: use -o FILE or -c; skipped" ]
	cmp b b.orig
	# a name that is only the suffix leaves nothing to restore
	cp b.zst .zst
	run --separate-stderr "$A" -d .zst
	[ "$status" -eq 1 ]
}

@test "-c and -o: everything into one output; several inputs into -o need -f, as zstd asks" {
	"$A" -c a b > ab.zst
	zstd -q -d -c ab.zst | cmp - <(cat a b)
	[ ! -e a.zst ] && [ ! -e b.zst ]
	run --separate-stderr "$A" -o ab2.zst a b
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: 2 inputs into one file ab2.zst lose their names; use -f to concatenate them, or -c" ]
	[ ! -e ab2.zst ]
	"$A" -f -o ab2.zst a b
	cmp ab.zst ab2.zst
	# stdin alone stays a filter; '-' among FILEs goes to stdout
	"$A" < a | zstd -q -d -c | cmp - a
	"$A" - < b > s.zst
	zstd -q -d -c s.zst | cmp - b
	[ ! -e a.zst ]
}

@test "into stdout (-c, -dc) and with -t a FILE that fails is reported and the others go on, as zstd; a symlink is skipped there too" {
	run --separate-stderr bash -c '"$0" -c missing a b > ab.zst' "$A"
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: cannot read missing: No such file or directory" ]
	zstd -q -d -c ab.zst | cmp - <(cat a b)
	"$A" -c a missing b 2> /dev/null | zstd -q -d -c | cmp - <(cat a b)
	"$A" a b
	head -c 100 a.zst > t.zst
	run --separate-stderr bash -c '"$0" -dc t.zst missing b.zst > out' "$A"
	[ "$status" -eq 3 ]
	[ "$stderr" = "accel-compress: t.zst: truncated frame: input ends at byte offset 100
accel-compress: cannot read missing: No such file or directory" ]
	tail -c "$(stat -c %s b)" out | cmp - b
	run -1 --separate-stderr "$A" -t missing t.zst b.zst
	[ "$stderr" = "accel-compress: cannot read missing: No such file or directory
accel-compress: t.zst: truncated frame: input ends at byte offset 100" ]
	# into one -o FILE the first failure ends it, nothing written
	run -1 "$A" -f -o one.zst a missing b
	[ ! -e one.zst ]
	# symlinks: skipped without -f into stdout too, as zstd skips them
	ln -s a la
	run --separate-stderr bash -c '"$0" -c a la b | zstd -q -d -c' "$A"
	[ "$stderr" = "accel-compress: warning: la is a symbolic link; skipped (-f follows it)" ]
	[ "$output" = "$(cat a b)" ]
	"$A" -f -c la | zstd -q -d -c | cmp - a
}

@test "-r: every regular file under the folder, symlinks skipped; a folder without -r is an error" {
	mkdir -p d/e
	cp a d/x
	cp b d/e/y
	ln -s ../a d/link
	run --separate-stderr "$A" d
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: d is a folder; skipped (-r reads the files under it)" ]
	run --separate-stderr "$A" -r d
	[ "$status" -eq 0 ]
	[ "$stderr" = "accel-compress: warning: d/link is a symbolic link; skipped" ]
	[ "$(cd d && find . | sort | tr '\n' ' ')" = ". ./e ./e/y ./e/y.zst ./link ./x ./x.zst " ]
	# -d -r: a FILE without a known suffix is skipped, exit 1, as zstd -d -r
	run --separate-stderr "$A" -d -r -f --rm d/e
	[ "$status" -eq 1 ]
	[[ "$stderr" == "accel-compress: d/e/y: unknown suffix "* ]]
	[ "$(cd d/e && ls)" = y ]
	cmp d/e/y b
	"$A" -q -r --rm d/e
	run -0 "$A" -q -d -r --rm d/e
	[ "$(cd d/e && ls)" = y ]
	cmp d/e/y b
	# -r with -c: the files one after another, in name order
	"$A" -r -q -c d/e d/x > all.zst
	zstd -q -d -c all.zst | cmp - <(cat b a)
	# a symlinked FILE: skipped (exit 1 when it is all), -f follows it
	ln -s a la
	run --separate-stderr "$A" la
	[ "$status" -eq 1 ] && [ ! -e la.zst ]
	"$A" -f la
	zstd -q -d -c la.zst | cmp - a
}

@test "the output has the source's mode and times (and owner), as zstd gives them" {
	chmod 640 a
	touch -d '2001-02-03 04:05:06.5' a
	"$A" a
	zstd -q a -o z.zst
	[ "$(stat -c '%a %Y %u %g' a.zst)" = "$(stat -c '%a %Y %u %g' a)" ]
	[ "$(stat -c '%a %Y' a.zst)" = "$(stat -c '%a %Y' z.zst)" ]
	[ "$(stat -c %y a.zst)" = "$(stat -c %y a)" ]
	# the access time is the run's, as zstd and lz4 set it (gzip copies it)
	touch -a -d 2002-01-01 a
	rm a.zst z.zst
	"$A" a
	zstd -q a -o z.zst
	[ "$(stat -c %X a.zst)" -gt "$(date -d 2020-01-01 +%s)" ]
	[ "$(stat -c %X z.zst)" -gt "$(date -d 2020-01-01 +%s)" ]
	mv a a.orig
	umask 077
	"$A" -d a.zst
	[ "$(stat -c '%a %Y' a)" = "640 $(stat -c %Y a.orig)" ]
	# -o from one FILE too
	"$A" -d -o o a.zst
	[ "$(stat -c '%a %y' o)" = "$(stat -c '%a %y' a.orig)" ]
	if [ "$(id -u)" = 0 ]; then
		chown 12345:54321 b
		"$A" b
		[ "$(stat -c '%u %g' b.zst)" = "12345 54321" ]
	fi
}

@test "binary to a terminal is refused: '-' and stdin; a FILE's output goes beside it, the terminal untouched" {
	command -v script > /dev/null || skip "no script(1)"
	run script -qec "'$A' - < a; echo rc=\$?" /dev/null
	[[ "$output" == *"refusing to write compressed data to a terminal"* && "$output" == *"rc=1"* ]]
	run script -qec "'$A' -q a; echo rc=\$?" /dev/null
	[[ "$output" == *"rc=0"* ]]
	zstd -q -d -c a.zst | cmp - a
	# decompressed data may go to a terminal
	run script -qec "'$A' -dc a.zst | tail -n 1; echo rc=\$?" /dev/null
	[[ "$output" == *"30000"* && "$output" == *"rc=0"* ]]
}

@test "progress on a terminal for each FILE; -q silences it" {
	command -v script > /dev/null || skip "no script(1)"
	head -c 20000000 /dev/urandom > big
	run script -qec "'$A' --progress -T1 big 2>&1; echo rc=\$?" /dev/null
	[[ "$output" == *"zstd.compress: "*"(100%)"* && "$output" == *"rc=0"* ]]
	rm big.zst
	run script -qec "'$A' -q --progress -T1 big 2>&1; echo rc=\$?" /dev/null
	[[ "$output" != *"zstd.compress"* && "$output" == *"rc=0"* ]]
}
