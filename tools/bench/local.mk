# kvevents-bench: figures with in-run baselines.  It links the internal
# convenience library to hold the worker (kvev_queue_hold, a test seam
# that is not in the ABI), so it exists only with the transport.

if HAVE_ZMQ
bin_PROGRAMS += %reldir%/kvevents-bench
dist_man_MANS += %reldir%/kvevents-bench.1
TESTS += tests/test-bench.sh
endif

%canon_reldir%_kvevents_bench_SOURCES = \
	%reldir%/bench.h \
	%reldir%/kvevents-bench.c \
	%reldir%/bench-report.c \
	%reldir%/bench-internal.c \
	%reldir%/bench-hot.c \
	%reldir%/bench-encode.c \
	%reldir%/bench-net.c \
	%reldir%/bench-memory.c
%canon_reldir%_kvevents_bench_CPPFLAGS = $(AM_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS) \
	-DG_LOG_DOMAIN=\"kvevents-bench\"
%canon_reldir%_kvevents_bench_LDADD = libkvevents/libkvevents-internal.la \
	$(ZMQ_LIBS) $(MSGPACK_LIBS) $(GLIB_LIBS) $(LIBINTL) -lm

EXTRA_DIST += %reldir%/kvevents-bench.1 tests/test-bench.sh

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
