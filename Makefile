# accel - build, test, install. `make help` lists the targets.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
LIBEXECDIR ?= $(PREFIX)/libexec
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share
PLUGINDIR ?= $(LIBDIR)/accel
DESTDIR ?=

.DEFAULT_GOAL := all
CC ?= cc
B ?= build
VERSION := 0.1.0
SOVERSION := 0

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
ifneq ($(CI),)
WERROR ?= 1
endif
ifeq ($(WERROR),1)
WARN += -Werror
endif
ifneq ($(SANITIZE),)
# Any sanitizer report fails the run (UBSan would otherwise only print).
SAN := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
# LLVM (inside lavapipe and PoCL) replaces a probe thread's alternate
# signal stack, which ASan then fails to unmap when the thread ends.
export ASAN_OPTIONS ?= use_sigaltstack=0
export UBSAN_OPTIONS ?= print_stacktrace=1
endif
OPT ?= -O2 -g
CFLAGS ?=
# Debug information and __FILE__ name sources relative to the tree, so that
# no installed file holds the path of the build folder.
PREFIX_MAP := -ffile-prefix-map=$(CURDIR)=.
CFLAGS += $(OPT) $(WARN) $(SAN) $(PREFIX_MAP) -std=gnu11 -pthread -fPIC -D_GNU_SOURCE
CPPFLAGS += -Ilibcore/include -Ilibcore
LDFLAGS += $(SAN) -pthread

# The compression libraries: headers at build time, loaded at run time
# (CODEC_LIBS below).
CODEC_PKGS := libzstd liblz4 libisal libdeflate minizip zlib libxxhash
PKGS := $(CODEC_PKGS) libcjson
# soname NAME: the soname of the shared library -lNAME links, for one that
# is loaded with dlopen instead of linked (its headers are used).
soname = $(shell readelf -d $$($(CC) -print-file-name=lib$(1).so) 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]$$/\1/p')
# hwloc (and libudev through it) is loaded only when topology is asked
# for (libcore/hwloc_dl.h): its headers, not its library.
HWLOC_SONAME := $(call soname,hwloc)
# On a fresh machine libhwloc-dev comes with `make deps`: `make deps check`
# (and demo, bench, fuzz, check-sanitize) builds in a second make, run
# after deps, that finds it. Any other goal needs it now.
DEPS_FIRST_GOALS := deps check check-sanitize demo bench fuzz clean
# build_note LINE: say what the build leaves out (a missing package), but
# not in the make of `make deps ...` that parses before deps installs the
# packages: its second make says what is still missing then.
comma := ,
build_note = $(if $(filter deps,$(MAKECMDGOALS)),,$(info $(1)))
ifeq ($(HWLOC_SONAME),)
ifeq ($(filter deps,$(MAKECMDGOALS))$(filter-out $(DEPS_FIRST_GOALS),$(MAKECMDGOALS)),deps)
else ifeq ($(MAKECMDGOALS),clean)
else
$(error accel: cannot find libhwloc.so (libhwloc-dev, from make deps) or read its soname (readelf, binutils))
endif
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) hwloc 2>/dev/null) -DACCEL_HWLOC_SONAME='"$(HWLOC_SONAME)"'
# The compression libraries are loaded when a job needs one
# (libcore/codec_dl.h): libaccel links cJSON alone. Programs of the tests
# that call them link them (CODEC_LIBS), and libaccel binds to those.
PKG_LIBS := $(shell pkg-config --libs libcjson 2>/dev/null) -lm
CODEC_LIBS := $(shell pkg-config --libs $(CODEC_PKGS) 2>/dev/null)
# Their sonames, read when codec_dl.c is compiled (after make deps).
CODEC_SONAMES = -DACCEL_ZSTD_SONAME='"$(call soname,zstd)"' -DACCEL_LZ4_SONAME='"$(call soname,lz4)"' \
	-DACCEL_ISAL_SONAME='"$(call soname,isal)"' -DACCEL_DEFLATE_SONAME='"$(call soname,deflate)"' \
	-DACCEL_ZLIB_SONAME='"$(call soname,z)"' -DACCEL_MINIZIP_SONAME='"$(call soname,minizip)"' \
	-DACCEL_XXHASH_SONAME='"$(call soname,xxhash)"'
$(B)/obj/libcore/codec_dl.o: CPPFLAGS += $(CODEC_SONAMES)

CORE_SRC := $(wildcard libcore/*.c libcore/ops/*.c) $(wildcard backends/cpu/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(B)/obj/%.o)
# Programs: one cmd/accel-NAME.c each. A program that needs more than
# libaccel has cmd/accel-NAME.mk setting accel-NAME_SRC (extra sources, for
# example under cmd/NAME/), accel-NAME_PKGS (pkg-config names) and
# accel-NAME_LIBS.
PROGS := $(sort $(patsubst cmd/%.c,%,$(wildcard cmd/accel-*.c)))
NO_MAN := $(filter-out $(patsubst man/%.1.in,%,$(wildcard man/accel-*.1.in)),$(PROGS))
ifneq ($(NO_MAN),)
$(error man/$(firstword $(NO_MAN)).1.in is missing: every program has a man page)
endif
PROG_BIN := $(PROGS:%=$(B)/%)
-include libcore/ops/crypt/crypt.mk
-include $(wildcard cmd/*.mk)
LIB := $(B)/lib/libaccel.so.$(VERSION)

# Optional backends are plugins: backends/<name>/backend.mk sets
# <name>_PKGS (pkg-config names; empty for none), <name>_SRC and, if it
# needs them, <name>_CFLAGS and <name>_LIBS; a backend whose packages are
# missing is left out with one line saying so. A folder under
# tests/backends/ is a backend built the same way into $(B)/tests/backends,
# for the tests only (never installed). Adding a backend is adding a folder.
# A plugin links no library heavier than libaccel's own (accel(7), PLUGINS):
# <name>_PARTS names its companion objects, $(B)/plugins/<name>/PART.so,
# which its backend.mk builds and its probe loads (accel_probe_dlopen).
# backends/common/ holds what several backends share (their backend.mk
# list its sources). A plugin exports only its table (ACCEL_PLUGIN_EXPORT;
# backends/common/plugin.ver hides the rest, templates and static
# libraries included).
OPT_BACKENDS := $(filter-out cpu common,$(notdir $(patsubst %/,%,$(wildcard backends/*/))))
PLUGIN_CFLAGS := -fvisibility=hidden -Wl,--version-script=backends/common/plugin.ver
TEST_BACKENDS := $(notdir $(patsubst %/,%,$(wildcard tests/backends/*/)))
-include $(wildcard backends/*/backend.mk) $(wildcard tests/backends/*/backend.mk)
# backend_rule NAME SRCDIR OUTDIR LIST: build OUTDIR/accel_NAME.so, added to LIST.
define backend_rule
$(1)_OK := $$(if $$(strip $$($(1)_PKGS)),$$(shell pkg-config --exists $$($(1)_PKGS) 2>/dev/null && echo yes),yes)
ifeq ($$($(1)_OK),yes)
$(4) += $(3)/accel_$(1).so
PLUGIN_PARTS += $$($(1)_PARTS:%=$(3)/$(1)/%.so)
$(3)/accel_$(1).so: $$($(1)_SRC) backends/common/plugin.ver | $(LIB)
	@mkdir -p $$(@D)
	$$(call hdeps,$$(CPPFLAGS) $$($(1)_CFLAGS) $$(if $$(strip $$($(1)_PKGS)),$$(shell pkg-config --cflags $$($(1)_PKGS))),$$($(1)_SRC))
	$$(CC) $$(CPPFLAGS) $$(CFLAGS) $(PLUGIN_CFLAGS) $$($(1)_CFLAGS) $$(if $$(strip $$($(1)_PKGS)),$$(shell pkg-config --cflags $$($(1)_PKGS))) \
		-shared -o $$@ $$($(1)_SRC) $$(LDFLAGS) -L$(B)/lib -laccel \
		$$(if $$(strip $$($(1)_PKGS)),$$(shell pkg-config --libs $$($(1)_PKGS))) $$($(1)_LIBS)
else
$$(call build_note,accel: leaving out the $(1) backend: pkg-config cannot find $$($(1)_PKGS))
endif
endef
$(foreach b,$(OPT_BACKENDS),$(eval $(call backend_rule,$(b),backends,$(B)/plugins,PLUGINS)))
$(foreach b,$(TEST_BACKENDS),$(eval $(call backend_rule,$(b),tests/backends,$(B)/tests/backends,TEST_BACKEND_SO)))

TEST_PLUGINS := $(B)/tests/plugins/accel_test.so $(B)/tests/plugins/accel_badabi.so \
	$(B)/tests/badplugins/accel_norun.so $(B)/tests/badplugins/accel_noname.so
# Test drivers: programs of the tests, linked to libaccel.so as ours are.
TEST_DRIVERS := $(B)/tests/fft-inprocess
# Fuzz targets (tests/fuzz): one per parser of untrusted input. `make
# check` replays their corpus through a plain driver (no clang needed);
# `make fuzz` runs each under libFuzzer for FUZZ_TIME seconds.
# A target T has FUZZ_SRC_T (its sources, with LLVMFuzzerTestOneInput),
# FUZZ_LIBS_T and FUZZ_DEF_T; tests/fuzz/*.mk add targets of their own
# (FUZZ_TARGETS += T) and its seed corpus lives in tests/fuzz/corpus/T.
FUZZ_TARGETS := frame zstd gzip lz4
FUZZ_TIME ?= 60
FUZZ_CC ?= clang
FUZZ_REF_LIBS := $(shell pkg-config --libs libzstd liblz4 zlib 2>/dev/null)
FUZZ_SRC_frame := tests/fuzz/frame.c tests/fuzz/ref.c
FUZZ_SRC_zstd := tests/fuzz/decompress.c tests/fuzz/ref.c
FUZZ_SRC_gzip := tests/fuzz/decompress.c tests/fuzz/ref.c
FUZZ_SRC_lz4 := tests/fuzz/decompress.c tests/fuzz/ref.c
FUZZ_LIBS_frame := $(FUZZ_REF_LIBS)
FUZZ_LIBS_zstd := $(FUZZ_REF_LIBS)
FUZZ_LIBS_gzip := $(FUZZ_REF_LIBS)
FUZZ_LIBS_lz4 := $(FUZZ_REF_LIBS)
-include $(wildcard tests/fuzz/*.mk)
FUZZ_DEF_zstd := -DFUZZ_FORMAT=ACCEL_FORMAT_ZSTD
FUZZ_DEF_gzip := -DFUZZ_FORMAT=ACCEL_FORMAT_GZIP
FUZZ_DEF_lz4 := -DFUZZ_FORMAT=ACCEL_FORMAT_LZ4
FUZZ_REPLAY = $(FUZZ_TARGETS:%=$(B)/fuzz/replay-%)

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)

MAN_PAGES := $(PROGS:%=$(B)/man/%.1) $(B)/man/accel.7
# Shell completions are generated from each program's option table and
# committed under completions/ (installed from there); `make completions`
# writes them again, which tests/completions.bats asks for when they are stale.
COMPLETIONS := $(PROGS:%=completions/bash/%) $(PROGS:%=completions/zsh/_%) \
	$(PROGS:%=completions/fish/%.fish)

MANIFEST := $(B)/plugins/plugins.manifest
all: $(LIB) $(PROG_BIN) $(PLUGINS) $(PLUGIN_PARTS) $(MANIFEST) $(MAN_PAGES) $(B)/accel.pc

# The plugin manifest (libcore/manifest.c): each plugin's table, read once
# here, so that a program loads a plugin only when it is probed. Written
# after the plugins, with each one's size and build-id (a plugin rebuilt
# since makes it stale: the folder is then scanned); installed as is, since
# install copies the plugins byte for byte. The tool links libcore's objects
# (it reads internals), exported so that the plugins it loads bind to them.
$(B)/tools/plugin-manifest: libcore/tools/plugin-manifest.c $(CORE_OBJ)
	@mkdir -p $(@D)
	$(call hdeps,$(CPPFLAGS) $(PKG_CFLAGS),$<)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) -rdynamic -o $@ $< $(CORE_OBJ) $(LDFLAGS) $(PKG_LIBS) -ldl

$(MANIFEST): $(B)/tools/plugin-manifest $(PLUGINS) | $(LIB)
	@mkdir -p $(@D)
	LD_LIBRARY_PATH=$(B)/lib $(B)/tools/plugin-manifest $(B)/plugins > $@.tmp
	mv $@.tmp $@

# --version says minizip's version as pkg-config gives it (the library tells none).
$(B)/obj/libcore/version.o: CPPFLAGS += -DACCEL_MINIZIP_VERSION='"$(shell pkg-config --modversion minizip 2>/dev/null)"'

# libaccel exports only what accel.h declares (it says so with a visibility
# pragma); core_ internals and the backends' own symbols stay hidden.
$(CORE_OBJ): CFLAGS += -fvisibility=hidden

$(B)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) -MMD -MP $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) -DACCEL_PLUGIN_DIR='"$(PLUGINDIR)"' -c -o $@ $<

$(LIB): $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libaccel.so.$(SOVERSION) -o $@ $(CORE_OBJ) $(LDFLAGS) $(PKG_LIBS) -ldl
	ln -sf libaccel.so.$(VERSION) $(B)/lib/libaccel.so.$(SOVERSION)
	ln -sf libaccel.so.$(VERSION) $(B)/lib/libaccel.so

# Header dependencies: objects compiled one by one write their .d (-MMD
# -MP); a target built by one cc call over several sources (a program, a
# plugin, a companion object, a test) writes its .d with $(call hdeps,FLAGS,
# SOURCES), gcc -MM over the same include flags. Each rebuilds when a header
# it includes changes, and no other. What links libaccel.so has it as an
# order-only prerequisite: a new libaccel (its soname unchanged) is taken at
# run time, so editing one libcore file relinks libaccel alone.
# (Those go under $(B)/dep/, out of reach of the pattern rules that build
# $(B)/%.)
# The sources get empty rules too (as -MP gives headers), so a source moved
# or removed stops nothing.
depfile = $(B)/dep/$(patsubst $(B)/%,%,$@).d
hdeps = @mkdir -p $(dir $(depfile)) && \
	$(CC) -MM -MP -MT $@ $(filter -I% -D% -U% -std=%,$(1)) $(2) > $(depfile) && \
	printf '%s:\n' $(2) >> $(depfile)
-include $(shell find $(B)/obj $(B)/dep -name '*.d' 2>/dev/null)

# Programs find libaccel beside them in the build tree and in ../lib installed.
.SECONDEXPANSION:
$(B)/%: cmd/%.c $$($$*_SRC) | $(LIB)
	$(call hdeps,$(CPPFLAGS) $(PKG_CFLAGS) $($*_CFLAGS) $(if $($*_PKGS),$(shell pkg-config --cflags $($*_PKGS))),$< $($*_SRC))
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) $($*_CFLAGS) $(if $($*_PKGS),$(shell pkg-config --cflags $($*_PKGS))) \
		-o $@ $< $($*_SRC) $(LDFLAGS) -L$(B)/lib -laccel \
		-Wl,-rpath,'$$ORIGIN/lib:$$ORIGIN/../lib' $(PKG_LIBS) \
		$(if $($*_PKGS),$(shell pkg-config --libs $($*_PKGS))) $($*_LIBS)

$(B)/man/%.1: man/%.1.in $(B)/%
	@mkdir -p $(@D)
	$(B)/$* --help-man > $@.opts
	sed -e '/^@OPTIONS@$$/{r $@.opts' -e 'd}' -e 's/@VERSION@/$(VERSION)/g' $< > $@
	rm -f $@.opts

$(B)/man/accel.7: man/accel.7.in
	@mkdir -p $(@D)
	sed -e 's/@VERSION@/$(VERSION)/g' $< > $@

completions: $(PROG_BIN)
	@mkdir -p completions/bash completions/zsh completions/fish
	@for p in $(PROGS); do \
		$(B)/$$p --completion bash > completions/bash/$$p && \
		$(B)/$$p --completion zsh > completions/zsh/_$$p && \
		$(B)/$$p --completion fish > completions/fish/$$p.fish || exit 1; \
	done

# accel.pc says where `make install` puts libaccel and its headers: it is
# written again when PREFIX, LIBDIR or INCLUDEDIR differ from the last
# build's (`make install PREFIX=...` after a plain `make`), as git's
# GIT-PREFIX does. Directories under PREFIX are written ${prefix}-relative,
# so that pkg-config --define-prefix can relocate them.
PC_DIRS := $(PREFIX):$(LIBDIR):$(INCLUDEDIR)
$(B)/accel.pc.dirs: FORCE
	@mkdir -p $(@D)
	@[ "$$(cat $@ 2>/dev/null)" = '$(PC_DIRS)' ] || printf '%s\n' '$(PC_DIRS)' > $@

$(B)/accel.pc: Makefile $(B)/accel.pc.dirs
	printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\nName: accel\nDescription: %s\nVersion: %s\nLibs: -L$${libdir} -laccel\nCflags: -I$${includedir}\n' \
		'$(PREFIX)' '$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))' '$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))' \
		'accelerator discovery, routing and stream engine' '$(VERSION)' > $@

# Test plugins take libaccel's functions from the process that loads them
# (a program, or a unit test that holds libcore itself): linked to
# libaccel.so, they would bring a unit test a second copy of it.
define test_plugin
	@mkdir -p $(@D)
	$(call hdeps,$(CPPFLAGS),$<)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -o $@ $< $(LDFLAGS)
endef
$(B)/tests/plugins/accel_%.so: tests/plugins/%.c | $(LIB)
	$(test_plugin)
# Plugins with malformed tables live apart, so other tests' routes stay as they are.
$(B)/tests/badplugins/accel_%.so: tests/plugins/%.c | $(LIB)
	$(test_plugin)

# Unit tests reach core_ internals, which libaccel does not export: they
# link libcore's objects themselves, and export them (-rdynamic) so that a
# test plugin they load binds to this copy, not to libaccel.so's.
# test_ids builds the pci backend's sources in.
$(B)/tests/test_ids: backends/pci/pci.c backends/pci/devnodes.c backends/pci/pci.h
$(B)/tests/test_%: tests/unit/test_%.c $(CORE_OBJ)
	@mkdir -p $(@D)
	$(call hdeps,$(CPPFLAGS) $(PKG_CFLAGS),$<)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) -rdynamic -o $@ $< $(CORE_OBJ) $(LDFLAGS) $(PKG_LIBS) $(CODEC_LIBS) -ldl \
		$$(pkg-config --libs cmocka)

$(B)/tests/fft-inprocess: tests/fft_inprocess.c | $(LIB)
	@mkdir -p $(@D)
	$(call hdeps,$(CPPFLAGS),$<)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS) -L$(B)/lib -laccel -Wl,-rpath,'$$ORIGIN/../lib'

$(B)/fuzz/replay-%: tests/fuzz/driver.c $$(FUZZ_SRC_$$*) | $(LIB)
	@mkdir -p $(@D)
	$(call hdeps,$(CPPFLAGS) $(FUZZ_DEF_$*),$(FUZZ_SRC_$*) tests/fuzz/driver.c)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(FUZZ_DEF_$*) -o $@ $(FUZZ_SRC_$*) tests/fuzz/driver.c \
		$(LDFLAGS) -L$(B)/lib -laccel -Wl,-rpath,'$$ORIGIN/../lib' $(FUZZ_LIBS_$*)

# libFuzzer builds compile libaccel's sources into each target, so the
# fuzzer sees their coverage; no plugin is loaded (only the cpu backend).
$(B)/fuzz/fuzz-%: tests/fuzz/fuzz.h $(CORE_SRC) $$(FUZZ_SRC_$$*)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CODEC_SONAMES) -O1 -g -std=gnu11 -pthread -D_GNU_SOURCE $(FUZZ_DEF_$*) \
		-DACCEL_PLUGIN_DIR='"/nonexistent"' -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ $(FUZZ_SRC_$*) $(CORE_SRC) $(PKG_LIBS) $(CODEC_LIBS) $(FUZZ_LIBS_$*) -ldl

# check, demo and bench build in a sub-make, so that `make deps check` on a
# fresh machine sees the packages deps has just installed.
tests: all $(TEST_PLUGINS) $(TEST_DRIVERS) $(TEST_BACKEND_SO) $(UNIT_BIN) $(FUZZ_REPLAY)

check:
	@$(MAKE) --no-print-directory tests
	@tests/run.sh

# The unit tests again under ASan and UBSan, in a build folder of their own
# (build/sanitize), so that the plain build stays as it is.
SAN_B := $(B)/sanitize
check-sanitize:
	@$(MAKE) --no-print-directory B=$(SAN_B) SANITIZE=address,undefined unit-tests fuzz-replay

unit-tests: $(UNIT_BIN)
	@for t in $(UNIT_BIN); do echo "# $$t"; CMOCKA_MESSAGE_OUTPUT=TAP $$t || exit 1; done

# The fuzz corpus through each target's plain driver (make check does it
# too; check-sanitize under ASan and UBSan).
fuzz-replay: $(FUZZ_REPLAY)
	@for t in $(FUZZ_TARGETS); do printf '# fuzz corpus %s: ' $$t; $(B)/fuzz/replay-$$t tests/fuzz/corpus/$$t 2>$(B)/fuzz/replay-$$t.log || { tail -3 $(B)/fuzz/replay-$$t.log; exit 1; }; done

deps:
	@sh tests/deps.sh

# Run every fuzz target for FUZZ_TIME seconds, starting from its seed
# corpus; new inputs go to $(B)/fuzz/corpus-TARGET, crashes to
# $(B)/fuzz/TARGET-crash-*. Needs clang, which it installs (tests/deps.sh).
fuzz:
	@sh tests/deps.sh clang libclang-rt-dev
	@$(MAKE) --no-print-directory $(FUZZ_TARGETS:%=$(B)/fuzz/fuzz-%)
	@sh tests/fuzz/run.sh $(B)/fuzz $(FUZZ_TIME) $(FUZZ_TARGETS)

demo:
	@$(MAKE) --no-print-directory all
	@ACCEL_BUILD=$(B) sh examples/tour.sh

# The whole table: every operation on every engine here beside its peer
# (accel-bench --vs, drawn into $(B)/bench.svg), then what accel-bench does
# not measure: accel-detect's inventory and the programs' start-up beside
# their peers. tests/bench/NAME.sh run one area's cases (thin calls of
# accel-bench).
bench:
	@$(MAKE) --no-print-directory all
	$(B)/accel-bench --vs -f --plot $(B)/bench.svg
	@sh tests/bench/detect.sh
	@sh tests/bench/startup.sh

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/accel/ops \
		$(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(DATADIR)/bash-completion/completions $(DESTDIR)$(DATADIR)/zsh/site-functions \
		$(DESTDIR)$(DATADIR)/fish/vendor_completions.d
	install -m 755 $(PROG_BIN) $(DESTDIR)$(BINDIR)/
	$(if $(BENCH_HELPERS),install -D -m 755 -t $(DESTDIR)$(LIBEXECDIR)/accel $(BENCH_HELPERS))
	install -m 755 $(LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libaccel.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libaccel.so.$(SOVERSION)
	ln -sf libaccel.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libaccel.so
	install -m 644 libcore/include/accel.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(wildcard libcore/include/accel/*.h) $(DESTDIR)$(INCLUDEDIR)/accel/
	install -m 644 $(wildcard libcore/include/accel/ops/*.h) $(DESTDIR)$(INCLUDEDIR)/accel/ops/
	install -m 644 $(B)/accel.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	$(if $(PLUGINS),install -m 755 $(PLUGINS) $(DESTDIR)$(PLUGINDIR)/)
	$(foreach f,$(PLUGIN_PARTS),install -D -m 755 $(f) $(DESTDIR)$(PLUGINDIR)/$(patsubst $(B)/plugins/%,%,$(f));)
	install -m 644 $(MANIFEST) $(DESTDIR)$(PLUGINDIR)/
	install -m 644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(B)/man/accel.7 $(DESTDIR)$(MANDIR)/man7/
	install -m 644 $(filter completions/bash/%,$(COMPLETIONS)) $(DESTDIR)$(DATADIR)/bash-completion/completions/
	install -m 644 $(filter completions/zsh/%,$(COMPLETIONS)) $(DESTDIR)$(DATADIR)/zsh/site-functions/
	install -m 644 $(filter completions/fish/%,$(COMPLETIONS)) $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/

uninstall:
	rm -f $(PROGS:%=$(DESTDIR)$(BINDIR)/%) $(DESTDIR)$(LIBDIR)/libaccel.so* \
		$(DESTDIR)$(INCLUDEDIR)/accel.h $(DESTDIR)$(LIBDIR)/pkgconfig/accel.pc \
		$(PROGS:%=$(DESTDIR)$(MANDIR)/man1/%.1) $(DESTDIR)$(MANDIR)/man7/accel.7 \
		$(PROGS:%=$(DESTDIR)$(DATADIR)/bash-completion/completions/%) \
		$(PROGS:%=$(DESTDIR)$(DATADIR)/zsh/site-functions/_%) \
		$(PROGS:%=$(DESTDIR)$(DATADIR)/fish/vendor_completions.d/%.fish)
	rm -rf $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(INCLUDEDIR)/accel $(DESTDIR)$(LIBEXECDIR)/accel

clean:
	rm -rf $(B)

help:
	@echo 'targets: all (default), deps, check, check-sanitize, unit-tests, fuzz, demo, bench, completions, install, uninstall, clean'
	@echo 'variables: PREFIX DESTDIR B=build SANITIZE=address,undefined WERROR=1 OPT=... FUZZ_TIME=60'

FORCE:

.PHONY: all tests check check-sanitize unit-tests fuzz-replay deps fuzz demo bench completions install uninstall clean help FORCE
.SECONDARY:
