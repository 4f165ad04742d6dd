# The benchmark, two programs with in-run baselines that share every
# section's code (libbench.la) and differ in the library they link.
#
# kvevents-bench is installed: an operator runs it to size a master on
# their own hardware.  It links the shipped libkvevents.la and reaches it
# through the public API alone (no -I libkvevents here), libzmq and
# msgpack-c directly for its baselines and subscriber processes, which
# are the program itself started again: it needs no build tree, test
# file or interpreter at run time.  Its raw ZeroMQ baselines send the
# bytes the library sends, taken from the library it runs with
# (bench-wire.h), so it has no encoder of its own.
#
# kvevents-bench-internal is built by make and never installed: what
# needs the testing build of the library (libkvevents-testing.la,
# compiled with KVEV_TESTING) is measured there: the publish call with
# the worker held and with the queue full (the queue's hold seam), the
# encoder alone against msgpack-c key by key (the encoder's internal
# header, and tests/libreference.la, the key-by-key reference that
# tests/test-encode.c proves equal to the library's bytes), and the bytes
# per queued event (the worker held while the queue fills).  It measures
# that copy of the sources, not an installed library.
#
# make bench runs both; make check runs both in a smoke mode
# (tests/test-bench.sh).  They exist only with the transport.

bench_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/common $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS) \
	-DG_LOG_DOMAIN=\"kvevents-bench\"

if HAVE_ZMQ
noinst_LTLIBRARIES += %reldir%/libbench.la
bin_PROGRAMS += %reldir%/kvevents-bench
dist_man_MANS += %reldir%/kvevents-bench.1
noinst_PROGRAMS += %reldir%/kvevents-bench-internal
endif
EXTRA_DIST += %reldir%/kvevents-bench.1

%canon_reldir%_libbench_la_SOURCES = \
	%reldir%/bench-util.h \
	%reldir%/bench-util.c \
	%reldir%/bench-stats.h \
	%reldir%/bench-stats.c \
	%reldir%/bench-report.h \
	%reldir%/bench-report.c \
	%reldir%/bench-targets.h \
	%reldir%/bench-targets.c \
	%reldir%/bench-main.h \
	%reldir%/bench-main.c \
	%reldir%/bench-sections.h \
	%reldir%/bench-hot.c \
	%reldir%/bench-memory.c \
	%reldir%/bench-memory-child.h \
	%reldir%/bench-memory-child.c \
	%reldir%/bench-wire.h \
	%reldir%/bench-wire.c \
	%reldir%/bench-phase.h \
	%reldir%/bench-phase.c \
	%reldir%/bench-paced.h \
	%reldir%/bench-paced.c \
	%reldir%/bench-net.c \
	%reldir%/bench-loss.c \
	%reldir%/bench-fanout.c \
	%reldir%/bench-scaling.c \
	%reldir%/bench-subscriber.h \
	%reldir%/bench-subscriber.c \
	%reldir%/bench-replay.h \
	%reldir%/bench-replay.c \
	%reldir%/bench-replay-client.h \
	%reldir%/bench-replay-client.c \
	%reldir%/bench-snapshot.c
%canon_reldir%_libbench_la_CPPFLAGS = $(bench_cppflags)

bench_libs = %reldir%/libbench.la $(KVTOOL_LIBS) $(MSGPACK_LIBS) -lm

%canon_reldir%_kvevents_bench_SOURCES = %reldir%/kvevents-bench.c
%canon_reldir%_kvevents_bench_CPPFLAGS = $(bench_cppflags)
%canon_reldir%_kvevents_bench_LDADD = $(bench_libs) libkvevents/libkvevents.la

%canon_reldir%_kvevents_bench_internal_SOURCES = \
	%reldir%/kvevents-bench-internal.c \
	%reldir%/bench-internal.h \
	%reldir%/bench-internal.c \
	%reldir%/bench-encode.c
%canon_reldir%_kvevents_bench_internal_CPPFLAGS = $(bench_cppflags) -I$(top_srcdir)/libkvevents \
	-I$(top_srcdir)/tests -DKVEV_TESTING
%canon_reldir%_kvevents_bench_internal_LDADD = $(bench_libs) tests/libreference.la \
	libkvevents/libkvevents-testing.la

# make bench: the short default run of both programs, a table each on
# standard output.  BENCH_FLAGS passes options to both, e.g. make bench
# BENCH_FLAGS=--json; BENCH_INTERNAL_FLAGS, when set, to the internal one
# instead, for an --only that names the sections of each:
#   make bench BENCH_FLAGS=--only=e2e BENCH_INTERNAL_FLAGS=--only=encode
BENCH_FLAGS =
BENCH_INTERNAL_FLAGS = $(BENCH_FLAGS)
if HAVE_ZMQ
bench: %reldir%/kvevents-bench$(EXEEXT) %reldir%/kvevents-bench-internal$(EXEEXT)
	$(AM_V_at)$(builddir)/%reldir%/kvevents-bench $(BENCH_FLAGS)
	$(AM_V_at)$(builddir)/%reldir%/kvevents-bench-internal $(BENCH_INTERNAL_FLAGS)
else
bench:
	@echo "kvevents-bench needs the ZeroMQ transport (configure --with-zmq)" >&2; exit 1
endif
.PHONY: bench
