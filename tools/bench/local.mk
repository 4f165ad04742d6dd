# kvevents-bench: figures with in-run baselines.  It holds the worker
# through the queue's test seam (kvev_queue_hold) and times the encoder,
# which only the library's own code reaches, so it links the testing build
# of the library (libkvevents-testing.la, compiled with KVEV_TESTING) and
# measures that copy, not an installed library: it is built by `make`,
# run by `make bench` (and its smoke run by make check, tests/local.mk),
# and never installed.  It exists only with the transport.
#
# libbench.la holds the parts other programs link too: the settings and
# helpers every section uses, the statistics and the report.  The
# encoding baseline, msgpack-c key by key, is tests/libreference.la, the
# reference tests/test-encode.c holds the library's encoder to.

bench_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/libkvevents -I$(top_srcdir)/tools/common \
	-I$(top_srcdir)/tests $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS) \
	-DG_LOG_DOMAIN=\"kvevents-bench\"

if HAVE_ZMQ
noinst_LTLIBRARIES += %reldir%/libbench.la
noinst_PROGRAMS += %reldir%/kvevents-bench
endif
%canon_reldir%_libbench_la_SOURCES = \
	%reldir%/bench-util.h \
	%reldir%/bench-util.c \
	%reldir%/bench-stats.h \
	%reldir%/bench-stats.c \
	%reldir%/bench-report.h \
	%reldir%/bench-report.c
%canon_reldir%_libbench_la_CPPFLAGS = $(bench_cppflags)

%canon_reldir%_kvevents_bench_SOURCES = \
	%reldir%/kvevents-bench.c \
	%reldir%/bench-targets.h \
	%reldir%/bench-targets.c \
	%reldir%/bench-sections.h \
	%reldir%/bench-hot.c \
	%reldir%/bench-encode.c \
	%reldir%/bench-memory.c \
	%reldir%/bench-memory-child.h \
	%reldir%/bench-memory-child.c \
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
	%reldir%/bench-snapshot.c \
	%reldir%/bench-internal.h \
	%reldir%/bench-internal.c
%canon_reldir%_kvevents_bench_CPPFLAGS = $(bench_cppflags) -DKVEV_TESTING
%canon_reldir%_kvevents_bench_LDADD = %reldir%/libbench.la tests/libreference.la tools/common/libkvtool.la \
	libkvevents/libkvevents-testing.la $(ZMQ_LIBS) $(MSGPACK_LIBS) $(GLIB_LIBS) $(LIBINTL) -lm

# The manual page stays in the tree, and doc/test-man.sh checks it, but
# like the program it is not installed.
EXTRA_DIST += %reldir%/kvevents-bench.1

# make bench: the short default run, a table on standard output.
# BENCH_FLAGS passes options, e.g. make bench BENCH_FLAGS=--json.
BENCH_FLAGS =
if HAVE_ZMQ
bench: %reldir%/kvevents-bench$(EXEEXT)
	$(AM_V_at)$(builddir)/%reldir%/kvevents-bench $(BENCH_FLAGS)
else
bench:
	@echo "kvevents-bench needs the ZeroMQ transport (configure --with-zmq)" >&2; exit 1
endif
.PHONY: bench
