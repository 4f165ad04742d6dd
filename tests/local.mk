# make check: GLib test programs and shell scripts, all speaking TAP.

TEST_EXTENSIONS = .sh .py
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
SH_LOG_DRIVER = $(LOG_DRIVER)
PY_LOG_DRIVER = $(LOG_DRIVER)
SH_LOG_COMPILER = $(SHELL)
PY_LOG_COMPILER = $(PYTHON_INTEROP)
AM_TESTS_ENVIRONMENT = \
	G_DEBUG=fatal-warnings; export G_DEBUG; \
	top_srcdir='$(top_srcdir)'; export top_srcdir; \
	top_builddir='$(top_builddir)'; export top_builddir; \
	KVEV_HAVE_ZMQ='$(HAVE_ZMQ_01)'; export KVEV_HAVE_ZMQ; \
	PYTHON_INTEROP='$(PYTHON_INTEROP)'; export PYTHON_INTEROP; \
	MSGFMT='$(MSGFMT_CHECK)'; export MSGFMT; \
	GETTEXT_PACKAGE='$(GETTEXT_PACKAGE)'; export GETTEXT_PACKAGE; \
	KVT_GETTEXT_PACKAGE='$(KVT_GETTEXT_PACKAGE)'; export KVT_GETTEXT_PACKAGE; \
	G_TEST_SRCDIR='$(abs_top_srcdir)/tests'; export G_TEST_SRCDIR; \
	G_TEST_BUILDDIR='$(abs_top_builddir)/tests'; export G_TEST_BUILDDIR;

# Test programs that need internals link the testing build of the
# library, which also has the seams (fault.h, the queue's hold).
TEST_INTERNAL_LIBS = libkvevents/libkvevents-testing.la
TEST_INTERNAL_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libkvevents -DKVEV_TESTING
TEST_PUBLIC_LIBS = libkvevents/libkvevents.la $(GLIB_LIBS)

# Unit tests of internals.  The queue's doorbell is seen through test
# seams, which the testing build of the library has.
check_PROGRAMS += tests/test-config tests/test-media tests/test-queue
TESTS += tests/test-config tests/test-media tests/test-queue
tests_test_config_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS)
tests_test_config_LDADD = $(TEST_INTERNAL_LIBS)
tests_test_media_LDADD = $(TEST_PUBLIC_LIBS)
tests_test_queue_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS)
tests_test_queue_LDADD = $(TEST_INTERNAL_LIBS)

# The flag table on its own: unique names, defaults, every row from a key
# file and from the command line, and the settings field each lands in.
check_PROGRAMS += tests/test-flags
TESTS += tests/test-flags
tests_test_flags_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS)
tests_test_flags_LDADD = $(TEST_INTERNAL_LIBS)

# Endpoints read into KvevEndpoint, and the syntax the tools share; nothing
# is bound, so in both builds.
check_PROGRAMS += tests/test-endpoint-parse
TESTS += tests/test-endpoint-parse
tests_test_endpoint_parse_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS)
tests_test_endpoint_parse_LDADD = $(TEST_INTERNAL_LIBS)

# The encoder, against the key-by-key reference (tests/reference-encode.c),
# and the wait budget for full pipes, which only the ZeroMQ build has.
# The reference is a library of its own because kvevents-bench-internal,
# built by make, links it too as its encoding baseline: one copy, the one
# this test proves byte for byte equal to the library's encoder.
if HAVE_ZMQ
noinst_LTLIBRARIES += tests/libreference.la
check_PROGRAMS += tests/test-encode tests/test-send-budget
TESTS += tests/test-encode tests/test-send-budget
tests_test_send_budget_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS)
tests_test_send_budget_LDADD = $(TEST_INTERNAL_LIBS)
tests_test_encode_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
tests_test_encode_LDADD = tests/libreference.la tests/libtestutil.la $(TEST_INTERNAL_LIBS) \
	$(ZMQ_LIBS) $(MSGPACK_LIBS)
endif
tests_libreference_la_SOURCES = tests/reference-encode.h tests/reference-encode.c
tests_libreference_la_CPPFLAGS = $(AM_CPPFLAGS) $(MSGPACK_CFLAGS)

# The replay buffer: heartbeat runs, gaps and its bounds.
if HAVE_ZMQ
check_PROGRAMS += tests/test-replay-buffer
TESTS += tests/test-replay-buffer
tests_test_replay_buffer_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS) $(ZMQ_CFLAGS)
tests_test_replay_buffer_LDADD = $(TEST_INTERNAL_LIBS) $(ZMQ_LIBS)
endif

# What the tests of a publisher on real sockets share: a subscriber that
# decodes with msgpack-c, temporary endpoints, a synchronised start.  It
# asks only the public API of the library each test links.
if HAVE_ZMQ
check_LTLIBRARIES += tests/libtestutil.la
endif
tests_libtestutil_la_SOURCES = tests/test-util.c tests/test-util.h
tests_libtestutil_la_CPPFLAGS = $(AM_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)

# The publisher on real sockets (ipc in a temporary directory, tcp on
# 127.0.0.1), decoded with msgpack-c.
if HAVE_ZMQ
check_PROGRAMS += tests/test-publisher
TESTS += tests/test-publisher
tests_test_publisher_SOURCES = tests/test-publisher.c
tests_test_publisher_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
tests_test_publisher_LDADD = tests/libtestutil.la $(TEST_INTERNAL_LIBS) $(ZMQ_LIBS) $(MSGPACK_LIBS)
endif

# The public API through the shared library, in both builds.
check_PROGRAMS += tests/test-api
TESTS += tests/test-api
tests_test_api_CPPFLAGS = $(AM_CPPFLAGS) -DKVEV_TEST_HAVE_ZMQ=$(HAVE_ZMQ_01)
tests_test_api_LDADD = $(TEST_PUBLIC_LIBS)

# A configuration read from a key file by its path, relative paths in it
# resolved beside it, and --kv-events-config-file under the command line.
check_PROGRAMS += tests/test-config-file
TESTS += tests/test-config-file
tests_test_config_file_LDADD = $(TEST_PUBLIC_LIBS)

# Packaging checks: symbols, headers, the two catalogues, and every
# manual page of the tree (doc/*.7 and the tools' pages) as lintian reads
# them.
TESTS += tests/test-symbols.sh tests/test-headers.sh tests/test-po.sh tests/test-man.sh
EXTRA_DIST += tests/test-symbols.sh tests/test-headers.sh tests/test-po.sh tests/test-man.sh

# The build tree's kvevents.pc: what a master's build sees of it.
TESTS += tests/test-pkgconfig.sh
EXTRA_DIST += tests/test-pkgconfig.sh
AM_TESTS_ENVIRONMENT += PKG_CONFIG='$(PKG_CONFIG)'; export PKG_CONFIG; \
	libdir='$(libdir)'; export libdir; includedir='$(includedir)'; export includedir;

# The C++ example master (examples/), run from the build tree.
TESTS += tests/test-master-cpp.sh
EXTRA_DIST += tests/test-master-cpp.sh
AM_TESTS_ENVIRONMENT += KVEV_HAVE_CXX17='$(HAVE_CXX17_01)'; export KVEV_HAVE_CXX17;

# The CMake package (cmake/) under a temporary prefix.
TESTS += tests/test-cmake.sh
EXTRA_DIST += tests/test-cmake.sh
AM_TESTS_ENVIRONMENT += CMAKE='$(CMAKE)'; export CMAKE; prefix='$(prefix)'; export prefix; \
	PACKAGE_VERSION='$(PACKAGE_VERSION)'; export PACKAGE_VERSION; CXX='$(CXX)'; export CXX; \
	KVEV_CFLAGS='$(CFLAGS)'; KVEV_CXXFLAGS='$(CXXFLAGS)'; KVEV_LDFLAGS='$(LDFLAGS)'; \
	export KVEV_CFLAGS KVEV_CXXFLAGS KVEV_LDFLAGS;

# A tool in zh_CN, each message from its own domain: the build tree's
# kvevents-pub with the catalogues just built (make check), then the
# installed one with the installed catalogues (make installcheck, so
# make distcheck; debian/tests/translations runs it on the packages).
TESTS += tests/test-translations.sh
EXTRA_DIST += tests/test-translations.sh
installcheck-local: installcheck-translations
installcheck-translations:
	KVEV_PUB='$(DESTDIR)$(bindir)/kvevents-pub' DESTDIR='$(DESTDIR)' \
	localedir='$(localedir)' libdir='$(libdir)' top_srcdir='$(top_srcdir)' \
	$(SHELL) $(srcdir)/tests/test-translations.sh
.PHONY: installcheck-translations
AM_TESTS_ENVIRONMENT += CC='$(CC)'; export CC; GLIB_CFLAGS='$(GLIB_CFLAGS)'; export GLIB_CFLAGS;

# A Python indexer (python3-zmq, python3-msgpack with raw=False) reads the
# stream of a publisher driven through every publication point.
if HAVE_ZMQ
check_PROGRAMS += tests/interop-publisher
tests_interop_publisher_LDADD = $(TEST_PUBLIC_LIBS)
TESTS += tests/test-interop.py tests/test-hostile.py tests/test-subscribers.py \
	tests/test-replay.py tests/test-snapshot.py tests/test-metrics.py \
	tests/test-slow-subscribers.py tests/test-snapshot-peers.py tests/test-replay-bounds.py
endif
EXTRA_DIST += tests/test-interop.py tests/test-hostile.py tests/test-subscribers.py \
	tests/test-replay.py tests/test-snapshot.py tests/test-metrics.py tests/tap.py \
	tests/test-slow-subscribers.py tests/test-snapshot-peers.py tests/test-replay-bounds.py \
	tests/interop_master.py

# What one peer may cost the master, each bound in a test of its own:
# the topic frame of a message refused for a subscriber left behind;
# refused addresses counted on every socket; heartbeats for subscriptions
# in a loop.
if HAVE_ZMQ
TESTS += tests/test-topic-refusals.py tests/test-refused-addresses.py \
	tests/test-heartbeat-rate.py
endif
EXTRA_DIST += tests/test-topic-refusals.py tests/test-refused-addresses.py \
	tests/test-heartbeat-rate.py

# kvevents-sub as a replay client: loss it makes on purpose filled through
# replay, under CURVE too, heartbeats and a new publisher_id.  The
# standard library only, with interop-publisher, sendframes and
# kvevents-keygen.
if HAVE_ZMQ
TESTS += tests/test-sub-replay.py
endif
EXTRA_DIST += tests/test-sub-replay.py

# Fault injection through the testing build of the library.
if HAVE_ZMQ
check_PROGRAMS += tests/test-faults
TESTS += tests/test-faults
tests_test_faults_SOURCES = tests/test-faults.c
tests_test_faults_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
tests_test_faults_LDADD = tests/libtestutil.la libkvevents/libkvevents-testing.la $(ZMQ_LIBS) $(MSGPACK_LIBS)
endif

# The stream byte for byte against tests/wire/, recorded from an earlier
# version, with the testing build's fixed clock.
if HAVE_ZMQ
check_PROGRAMS += tests/test-wire
TESTS += tests/test-wire
tests_test_wire_SOURCES = tests/test-wire.c
tests_test_wire_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
tests_test_wire_LDADD = tests/libtestutil.la libkvevents/libkvevents-testing.la $(ZMQ_LIBS) $(MSGPACK_LIBS)
endif
EXTRA_DIST += tests/wire/points-default.hex tests/wire/points-context.hex \
	tests/wire/points-plain.hex tests/wire/batches.hex tests/wire/batches-of-5.hex

# CURVE, allowed clients and addresses; their validation in both builds.
check_PROGRAMS += tests/test-security
TESTS += tests/test-security
if HAVE_ZMQ
tests_test_security_SOURCES = tests/test-security.c
else
tests_test_security_SOURCES = tests/test-security.c
endif
tests_test_security_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
tests_test_security_LDADD = tests/libtestutil.la $(TEST_INTERNAL_LIBS) $(ZMQ_LIBS) $(MSGPACK_LIBS)

# Binding ipc:// paths that are taken, are not sockets or were left
# behind, and loopback binds that must not warn.
if HAVE_ZMQ
check_PROGRAMS += tests/test-endpoint
TESTS += tests/test-endpoint
endif
tests_test_endpoint_SOURCES = tests/test-endpoint.c
tests_test_endpoint_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
tests_test_endpoint_LDADD = tests/libtestutil.la $(TEST_INTERNAL_LIBS) $(ZMQ_LIBS) $(MSGPACK_LIBS)

# Stress with a conservation law, and teardown under load.
if HAVE_ZMQ
check_PROGRAMS += tests/test-stress
TESTS += tests/test-stress
tests_test_stress_SOURCES = tests/test-stress.c
tests_test_stress_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
tests_test_stress_LDADD = tests/libtestutil.la $(TEST_INTERNAL_LIBS) $(ZMQ_LIBS) $(MSGPACK_LIBS)
endif

# The benchmark's summaries of its per-run figures, its raw baselines'
# payloads against the reference encoder, and the smoke run of both its
# programs; make installcheck (so make distcheck) runs the
# installed kvevents-bench, which must do without the build tree.
if HAVE_ZMQ
check_PROGRAMS += tests/test-bench-stats tests/test-bench-wire
TESTS += tests/test-bench-stats tests/test-bench-wire tests/test-bench.sh
tests_test_bench_stats_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/tools/bench $(ZMQ_CFLAGS) \
	$(MSGPACK_CFLAGS)
tests_test_bench_stats_LDADD = tools/bench/libbench.la $(ZMQ_LIBS) $(MSGPACK_LIBS) \
	$(GLIB_LIBS) $(LIBINTL) -lm
tests_test_bench_wire_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/tools/bench $(ZMQ_CFLAGS) \
	$(MSGPACK_CFLAGS)
tests_test_bench_wire_LDADD = tools/bench/libbench.la tests/libreference.la \
	libkvevents/libkvevents.la $(ZMQ_LIBS) $(MSGPACK_LIBS) $(GLIB_LIBS) $(LIBINTL) -lm
endif
EXTRA_DIST += tests/test-bench.sh
installcheck-local: installcheck-bench
installcheck-bench:
if HAVE_ZMQ
	KVEV_BENCH='$(DESTDIR)$(bindir)/kvevents-bench' DESTDIR='$(DESTDIR)' libdir='$(libdir)' \
	$(SHELL) $(srcdir)/tests/test-bench.sh
else
	@echo "installcheck: no kvevents-bench without the transport"
endif
.PHONY: installcheck-bench
EXTRA_DIST += tests/tap.sh

# ThreadSanitizer cannot see GLib's locks (futexes inside the
# uninstrumented libglib), so a --enable-tsan build preloads into every
# test a shim that annotates them, built without the sanitizer since it
# lands in shells and Python too, and reads tests/tsan.supp for libzmq's
# internals.  See both files for why.
EXTRA_DIST += tests/tsan-glib.c tests/tsan.supp
if KVEV_TSAN
check_DATA = tests/tsan-glib.so
CLEANFILES += tests/tsan-glib.so
tests/tsan-glib.so: tests/tsan-glib.c
	$(AM_V_CC)$(MKDIR_P) tests && \
	$(CC) -shared -fPIC -O1 $(GLIB_CFLAGS) -o $@ $(srcdir)/tests/tsan-glib.c -ldl
AM_TESTS_ENVIRONMENT += \
	G_SLICE=always-malloc; export G_SLICE; \
	LD_PRELOAD="$(abs_top_builddir)/tests/tsan-glib.so$${LD_PRELOAD:+:$$LD_PRELOAD}"; \
	export LD_PRELOAD; \
	TSAN_OPTIONS="$${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}:suppressions=$(abs_top_srcdir)/tests/tsan.supp"; \
	export TSAN_OPTIONS;
endif

# kvev_publisher_new () short of file descriptors or address space, in
# forked children: a GError, never libzmq's abort.
if HAVE_ZMQ
check_PROGRAMS += tests/test-limits
TESTS += tests/test-limits
tests_test_limits_SOURCES = tests/test-limits.c
tests_test_limits_CPPFLAGS = $(AM_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
tests_test_limits_LDADD = tests/libtestutil.la $(TEST_INTERNAL_LIBS) $(ZMQ_LIBS) $(MSGPACK_LIBS)
endif

# A master that forks while its publisher runs: the child's copy does
# nothing, the parent's goes on.
if HAVE_ZMQ
check_PROGRAMS += tests/test-fork
TESTS += tests/test-fork
tests_test_fork_SOURCES = tests/test-fork.c
tests_test_fork_CPPFLAGS = $(AM_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
tests_test_fork_LDADD = tests/libtestutil.la $(TEST_INTERNAL_LIBS) $(ZMQ_LIBS) $(MSGPACK_LIBS)

# The master's snapshot walk: what it may wait for, and what stops it.
check_PROGRAMS += tests/test-snapshot-walk
TESTS += tests/test-snapshot-walk
tests_test_snapshot_walk_SOURCES = tests/test-snapshot-walk.c
tests_test_snapshot_walk_CPPFLAGS = $(AM_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
tests_test_snapshot_walk_LDADD = tests/libtestutil.la $(TEST_INTERNAL_LIBS) $(ZMQ_LIBS) $(MSGPACK_LIBS)
endif

# The tools' shared helpers, in both builds.
check_PROGRAMS += tests/test-kvtool
TESTS += tests/test-kvtool
tests_test_kvtool_CPPFLAGS = $(KVTOOL_CPPFLAGS)
tests_test_kvtool_LDADD = $(KVTOOL_LIBS)

# The tools: kvevents-pub into kvevents-sub, and raw frames no
# well-behaved publisher sends, from tests/sendframes; kvevents-keygen's
# files, and a CURVE stream from kvevents-pub to kvevents-sub.
TESTS += tests/test-tools.sh tests/test-keygen.sh
EXTRA_DIST += tests/test-tools.sh tests/test-keygen.sh

# README's CURVE walk-through, its commands read out of README and run in
# a temporary directory in place of /etc/kvevents.
TESTS += tests/test-readme-curve.sh
EXTRA_DIST += tests/test-readme-curve.sh
if HAVE_ZMQ
check_PROGRAMS += tests/sendframes
tests_sendframes_CPPFLAGS = $(AM_CPPFLAGS) $(ZMQ_CFLAGS)
tests_sendframes_LDADD = $(GLIB_LIBS) $(ZMQ_LIBS)
endif

# The oracle: availability rebuilt from the events alone must equal the
# master's own.  tests/oracle-master is the example's store
# (examples/store.c) under a seeded workload; oracle-master-broken is the
# same with tests/oracle-broken.c wrapped around kvev_publish_delta, a
# master that leaves out a publication, which the oracle must notice.  It
# skips in a build without the transport.
check_PROGRAMS += tests/oracle-master tests/oracle-master-broken
tests_oracle_master_CPPFLAGS = $(KVTOOL_CPPFLAGS) -I$(top_srcdir)/examples
tests_oracle_master_LDADD = examples/libstore.la $(KVTOOL_LIBS) libkvevents/libkvevents.la
tests_oracle_master_broken_SOURCES = tests/oracle-master.c tests/oracle-broken.c
tests_oracle_master_broken_CPPFLAGS = $(tests_oracle_master_CPPFLAGS)
tests_oracle_master_broken_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=kvev_publish_delta
tests_oracle_master_broken_LDADD = $(tests_oracle_master_LDADD)
TESTS += tests/test-oracle.sh
EXTRA_DIST += tests/test-oracle.sh tests/oracle-rebuild.py tests/oracle-env.sh
# The same master and subscriber, converging through snapshots.
TESTS += tests/test-convergence.sh
EXTRA_DIST += tests/test-convergence.sh

# The fuzz targets' corpus and saved crash inputs, replayed through
# replay-TARGET in every build (tests/fuzz/local.mk builds them).
TESTS += tests/fuzz/replay-config tests/fuzz/replay-keyfile tests/fuzz/replay-decode \
	tests/fuzz/replay-sub-decode tests/fuzz/replay-sub-replies

# The public entry points' criticals: a few per call site and window,
# then a count of the rest, with the values GLib's checks return, and
# every refused event call in rejected_events.  The testing build's
# clock (precondition.h) ends a window at once.
check_PROGRAMS += tests/test-precondition
TESTS += tests/test-precondition
tests_test_precondition_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS)
tests_test_precondition_LDADD = $(TEST_INTERNAL_LIBS)

# A subscriber on the library's API that keeps the state its events
# describe (tests/sub-state.c), for the tests that compare it with a
# master's truth; it links the testing build for its --test-drop seam.
if HAVE_ZMQ
check_PROGRAMS += tests/sub-state
endif
tests_sub_state_CPPFLAGS = $(KVTOOL_CPPFLAGS) -DKVEV_TESTING
tests_sub_state_LDADD = tools/common/libkvtool.la $(TEST_INTERNAL_LIBS) $(GLIB_LIBS) $(ZMQ_LIBS) \
	$(LIBINTL)
# A failover seen by the library's subscriber: the old leader's replay
# and late snapshot, asked for before the new leader's snapshot replaced
# the backend, are dropped, and the state is the new leader's truth.
TESTS += tests/test-sub-failover.sh
EXTRA_DIST += tests/test-sub-failover.sh

# The subscriber's decoder and reply parsers on payloads msgpack-c makes.
if HAVE_ZMQ
check_PROGRAMS += tests/test-sub-decode
TESTS += tests/test-sub-decode
endif
tests_test_sub_decode_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS) $(MSGPACK_CFLAGS)
tests_test_sub_decode_LDADD = $(TEST_INTERNAL_LIBS) $(MSGPACK_LIBS)

# The library's subscriber against its publisher in one process (late
# joiner, gap and replay, gap beyond replay, restart, the GSource) and
# against a hostile peer on raw sockets.
if HAVE_ZMQ
check_PROGRAMS += tests/test-sub-e2e
TESTS += tests/test-sub-e2e
endif
tests_test_sub_e2e_CPPFLAGS = $(TEST_INTERNAL_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
tests_test_sub_e2e_LDADD = $(TEST_INTERNAL_LIBS) $(ZMQ_LIBS) $(MSGPACK_LIBS)
