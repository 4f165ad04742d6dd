# Fuzz targets.  Each tests/fuzz/fuzz-TARGET.c is a LLVMFuzzerTestOneInput ():
#
#   config   kvev_config_set/get/copy/validate and the option group
#   keyfile  GKeyFile bytes through kvev_config_load_key_file and validate
#   decode   kvevents-sub's decoder (tools/common/decode.c) on any frames
#   sub-decode   the library subscriber's decoder on any payload
#   sub-replies  its replay and snapshot reply parsers on any frames
#
# In every build, `make check` links each target with standalone.c as
# tests/fuzz/replay-TARGET and replays tests/fuzz/corpus/TARGET/ and
# tests/fuzz/regressions/TARGET/ through it (TAP, one test per input).
#
# Configured CC=clang --enable-fuzzing, `make fuzz` also builds
# tests/fuzz/fuzz-TARGET with libFuzzer, AddressSanitizer and UBSan, over
# a copy of the library's sources instrumented for coverage (the
# installed library and the other programs are not).  .ci/fuzz runs them.

kvev_fuzz_common_sources = \
	%reldir%/fuzz.h \
	%reldir%/fuzz-util.c
kvev_fuzz_config_sources = \
	%reldir%/fuzz-config.c \
	%reldir%/fuzz-flags.c \
	$(kvev_fuzz_common_sources)
kvev_fuzz_keyfile_sources = \
	%reldir%/fuzz-keyfile.c \
	%reldir%/fuzz-flags.c \
	$(kvev_fuzz_common_sources)
# The decoder needs GLib only, so its target builds without the transport.
kvev_fuzz_decode_sources = \
	%reldir%/fuzz-decode.c \
	$(kvev_fuzz_common_sources)
kvev_fuzz_decode_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/common

# The library's subscriber: its bytes need no transport, so these build
# in every configuration too.
kvev_fuzz_sub_decode_sources = \
	%reldir%/fuzz-sub-decode.c \
	$(kvev_fuzz_common_sources)
kvev_fuzz_sub_replies_sources = \
	%reldir%/fuzz-sub-replies.c \
	$(kvev_fuzz_common_sources)
kvev_fuzz_sub_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/libkvevents

# The replay programs (tests/local.mk runs them).  KVEV_FUZZ_SRCDIR is
# where they look for the corpus when run by hand; make check passes
# top_srcdir in the environment.
kvev_fuzz_replay_cppflags = $(AM_CPPFLAGS) -DKVEV_FUZZ_SRCDIR=\"$(abs_top_srcdir)\"
check_PROGRAMS += %reldir%/replay-config %reldir%/replay-keyfile %reldir%/replay-decode \
	%reldir%/replay-sub-decode %reldir%/replay-sub-replies

%canon_reldir%_replay_config_SOURCES = %reldir%/standalone.c $(kvev_fuzz_config_sources)
%canon_reldir%_replay_config_CPPFLAGS = $(kvev_fuzz_replay_cppflags) -DKVEV_FUZZ_TARGET=\"config\"
%canon_reldir%_replay_config_LDADD = $(TEST_INTERNAL_LIBS)

%canon_reldir%_replay_keyfile_SOURCES = %reldir%/standalone.c $(kvev_fuzz_keyfile_sources)
%canon_reldir%_replay_keyfile_CPPFLAGS = $(kvev_fuzz_replay_cppflags) -DKVEV_FUZZ_TARGET=\"keyfile\"
%canon_reldir%_replay_keyfile_LDADD = $(TEST_INTERNAL_LIBS)

%canon_reldir%_replay_decode_SOURCES = %reldir%/standalone.c $(kvev_fuzz_decode_sources)
%canon_reldir%_replay_decode_CPPFLAGS = \
	$(kvev_fuzz_decode_cppflags) $(kvev_fuzz_replay_cppflags) -DKVEV_FUZZ_TARGET=\"decode\"
%canon_reldir%_replay_decode_LDADD = tools/common/libkvtool.la base/libkvbase.la $(GLIB_LIBS) \
	$(LIBINTL)

%canon_reldir%_replay_sub_decode_SOURCES = %reldir%/standalone.c $(kvev_fuzz_sub_decode_sources)
%canon_reldir%_replay_sub_decode_CPPFLAGS = \
	$(kvev_fuzz_sub_cppflags) $(kvev_fuzz_replay_cppflags) -DKVEV_FUZZ_TARGET=\"sub-decode\"
%canon_reldir%_replay_sub_decode_LDADD = $(TEST_INTERNAL_LIBS)

%canon_reldir%_replay_sub_replies_SOURCES = %reldir%/standalone.c $(kvev_fuzz_sub_replies_sources)
%canon_reldir%_replay_sub_replies_CPPFLAGS = \
	$(kvev_fuzz_sub_cppflags) $(kvev_fuzz_replay_cppflags) -DKVEV_FUZZ_TARGET=\"sub-replies\"
%canon_reldir%_replay_sub_replies_LDADD = $(TEST_INTERNAL_LIBS)

# The seed corpus (one directory per target: automake copies directories
# in EXTRA_DIST whole), the saved crash inputs, libFuzzer dictionaries, and
# the script that regenerates the decoder's seeds from the library.
EXTRA_DIST += \
	%reldir%/corpus \
	%reldir%/regressions \
	%reldir%/config.dict \
	%reldir%/keyfile.dict \
	%reldir%/decode.dict \
	%reldir%/make-corpus.py \
	%reldir%/README

if KVEV_FUZZING
# Sanitizers the fuzzers run with; e.g. `make fuzz KVEV_FUZZ_SANITIZE=undefined`
# for UBSan alone.  The corpus is replayed under the configured ones by
# make check.
KVEV_FUZZ_SANITIZE = address,undefined
kvev_fuzz_cflags = $(AM_CFLAGS) -fsanitize=fuzzer-no-link,$(KVEV_FUZZ_SANITIZE) \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer -g
kvev_fuzz_ldflags = $(AM_LDFLAGS) -fsanitize=fuzzer,$(KVEV_FUZZ_SANITIZE)

# The library again, instrumented so that libFuzzer sees its branches, and
# the decoder of tools/common likewise.
noinst_LTLIBRARIES += %reldir%/libkvevents-fuzz.la %reldir%/libkvtool-fuzz.la
%canon_reldir%_libkvevents_fuzz_la_SOURCES = $(kvev_library_sources) $(kvev_base_sources)
%canon_reldir%_libkvevents_fuzz_la_CPPFLAGS = $(kvev_library_cppflags)
%canon_reldir%_libkvevents_fuzz_la_CFLAGS = $(kvev_fuzz_cflags)
%canon_reldir%_libkvevents_fuzz_la_LIBADD = $(kvev_library_libs)
%canon_reldir%_libkvtool_fuzz_la_SOURCES = \
	tools/common/kvtool.h \
	tools/common/kvtool.c \
	tools/common/decode.h \
	tools/common/decode.c \
	base/mpread.h \
	base/mpread.c
%canon_reldir%_libkvtool_fuzz_la_CPPFLAGS = $(AM_CPPFLAGS)
%canon_reldir%_libkvtool_fuzz_la_CFLAGS = $(kvev_fuzz_cflags)

KVEV_FUZZERS = %reldir%/fuzz-config %reldir%/fuzz-keyfile %reldir%/fuzz-decode \
	%reldir%/fuzz-sub-decode %reldir%/fuzz-sub-replies
noinst_PROGRAMS += $(KVEV_FUZZERS)

%canon_reldir%_fuzz_config_SOURCES = $(kvev_fuzz_config_sources)
%canon_reldir%_fuzz_config_CFLAGS = $(kvev_fuzz_cflags)
%canon_reldir%_fuzz_config_LDFLAGS = $(kvev_fuzz_ldflags)
%canon_reldir%_fuzz_config_LDADD = %reldir%/libkvevents-fuzz.la

%canon_reldir%_fuzz_keyfile_SOURCES = $(kvev_fuzz_keyfile_sources)
%canon_reldir%_fuzz_keyfile_CFLAGS = $(kvev_fuzz_cflags)
%canon_reldir%_fuzz_keyfile_LDFLAGS = $(kvev_fuzz_ldflags)
%canon_reldir%_fuzz_keyfile_LDADD = %reldir%/libkvevents-fuzz.la

%canon_reldir%_fuzz_decode_SOURCES = $(kvev_fuzz_decode_sources)
%canon_reldir%_fuzz_decode_CPPFLAGS = $(kvev_fuzz_decode_cppflags)
%canon_reldir%_fuzz_decode_CFLAGS = $(kvev_fuzz_cflags)
%canon_reldir%_fuzz_decode_LDFLAGS = $(kvev_fuzz_ldflags)
%canon_reldir%_fuzz_decode_LDADD = %reldir%/libkvtool-fuzz.la base/libkvbase.la $(GLIB_LIBS) \
	$(LIBINTL)

%canon_reldir%_fuzz_sub_decode_SOURCES = $(kvev_fuzz_sub_decode_sources)
%canon_reldir%_fuzz_sub_decode_CPPFLAGS = $(kvev_fuzz_sub_cppflags)
%canon_reldir%_fuzz_sub_decode_CFLAGS = $(kvev_fuzz_cflags)
%canon_reldir%_fuzz_sub_decode_LDFLAGS = $(kvev_fuzz_ldflags)
%canon_reldir%_fuzz_sub_decode_LDADD = %reldir%/libkvevents-fuzz.la

%canon_reldir%_fuzz_sub_replies_SOURCES = $(kvev_fuzz_sub_replies_sources)
%canon_reldir%_fuzz_sub_replies_CPPFLAGS = $(kvev_fuzz_sub_cppflags)
%canon_reldir%_fuzz_sub_replies_CFLAGS = $(kvev_fuzz_cflags)
%canon_reldir%_fuzz_sub_replies_LDFLAGS = $(kvev_fuzz_ldflags)
%canon_reldir%_fuzz_sub_replies_LDADD = %reldir%/libkvevents-fuzz.la

fuzz: $(KVEV_FUZZERS)
else
fuzz:
	@echo "make fuzz: configure with CC=clang --enable-fuzzing first" >&2; exit 1
endif
.PHONY: fuzz
