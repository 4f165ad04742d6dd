# The library.  Every source is built once into a convenience library, which
# the unit tests link to reach internals; the shared library is that same
# code with everything but the version script's symbols hidden.

kvevents_includedir = $(includedir)/kvevents
kvevents_include_HEADERS = \
	include/kvevents/kvevents.h \
	include/kvevents/kvevents-common.h \
	include/kvevents/kvevents-config.h \
	include/kvevents/kvevents-media.h \
	include/kvevents/kvevents-publisher.h
nodist_kvevents_include_HEADERS = include/kvevents/kvevents-version.h

# Pure helpers, with no state and no translated messages, that the tools
# and tests need too: the shared library hides them (its version script
# exports none), so they are a convenience library of their own, linked
# into every build of the library and into tools/common.
kvev_shared_sources = \
	%reldir%/endpoint-ipv6.h \
	%reldir%/secret.h \
	%reldir%/secret.c \
	%reldir%/utf8.h \
	%reldir%/z85.h \
	%reldir%/z85.c
noinst_LTLIBRARIES += libkvevents/libkvevents-shared.la
libkvevents_libkvevents_shared_la_SOURCES = $(kvev_shared_sources)
libkvevents_libkvevents_shared_la_LIBADD = $(GLIB_LIBS)

kvev_library_sources = \
	%reldir%/kvevents-private.h \
	%reldir%/counter.h \
	%reldir%/fault.h \
	%reldir%/version.c \
	%reldir%/escape.c \
	%reldir%/config.c \
	%reldir%/settings.h \
	%reldir%/settings.c \
	%reldir%/endpoint.h \
	%reldir%/endpoint.c \
	%reldir%/security.h \
	%reldir%/security.c \
	%reldir%/media.c \
	%reldir%/precondition.h \
	%reldir%/precondition.c \
	%reldir%/call.h \
	%reldir%/call.c \
	%reldir%/queue.h \
	%reldir%/queue.c \
	%reldir%/publisher-private.h \
	%reldir%/publisher.c \
	%reldir%/stats.h \
	%reldir%/stats.c \
	%reldir%/publish.c \
	%reldir%/resources.h \
	%reldir%/resources.c \
	%reldir%/fork.h \
	%reldir%/fork.c \
	%reldir%/thread.c \
	%reldir%/snapshot.h \
	%reldir%/snapshot.c \
	%reldir%/worker.h \
	%reldir%/transport.h
if HAVE_ZMQ
kvev_library_sources += \
	%reldir%/encode.h \
	%reldir%/encode.c \
	%reldir%/zap.h \
	%reldir%/zap.c \
	%reldir%/worker.c \
	%reldir%/hold.h \
	%reldir%/hold.c \
	%reldir%/ledger.h \
	%reldir%/ledger.c \
	%reldir%/service.h \
	%reldir%/service.c \
	%reldir%/replay-buffer.h \
	%reldir%/replay-buffer.c \
	%reldir%/replay.h \
	%reldir%/replay.c \
	%reldir%/snapshot-server.h \
	%reldir%/snapshot-server.c \
	%reldir%/transport-zmq.c
else
kvev_library_sources += \
	%reldir%/no-transport.c
endif
kvev_library_cppflags = $(AM_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
kvev_library_libs = $(GLIB_LIBS) $(ZMQ_LIBS) $(MSGPACK_LIBS) $(LIBINTL)

noinst_LTLIBRARIES += libkvevents/libkvevents-internal.la
libkvevents_libkvevents_internal_la_SOURCES = $(kvev_library_sources)
libkvevents_libkvevents_internal_la_CPPFLAGS = $(kvev_library_cppflags)
libkvevents_libkvevents_internal_la_LIBADD = libkvevents/libkvevents-shared.la $(kvev_library_libs)

# The same sources again with the fault injection seam (fault.h), for the
# tests that make sends, sockets and threads fail, the queue's hold and
# the other seams of the tests and the benchmark.  Never installed.
noinst_LTLIBRARIES += libkvevents/libkvevents-testing.la
libkvevents_libkvevents_testing_la_SOURCES = $(kvev_library_sources) %reldir%/fault.c
libkvevents_libkvevents_testing_la_CPPFLAGS = $(kvev_library_cppflags) -DKVEV_TESTING
libkvevents_libkvevents_testing_la_LIBADD = libkvevents/libkvevents-shared.la $(kvev_library_libs)

lib_LTLIBRARIES = libkvevents/libkvevents.la
libkvevents_libkvevents_la_SOURCES =
libkvevents_libkvevents_la_LIBADD = libkvevents/libkvevents-internal.la
libkvevents_libkvevents_la_LDFLAGS = $(AM_LDFLAGS) \
	-version-info $(KVEV_LT_VERSION_INFO) -no-undefined \
	-Wl,--version-script=$(srcdir)/%reldir%/libkvevents.sym
EXTRA_libkvevents_libkvevents_la_DEPENDENCIES = %reldir%/libkvevents.sym
EXTRA_DIST += %reldir%/libkvevents.sym

pkgconfig_DATA = kvevents.pc
