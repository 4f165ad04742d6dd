# The library.  Every source is built once into a convenience library, which
# the unit tests link to reach internals; the shared library is that same
# code with everything but the version script's symbols hidden.

kvevents_includedir = $(includedir)/kvevents
kvevents_include_HEADERS = \
	include/kvevents/kvevents.h \
	include/kvevents/kvevents-common.h \
	include/kvevents/kvevents-config.h \
	include/kvevents/kvevents-media.h \
	include/kvevents/kvevents-publisher.h \
	include/kvevents/kvevents-subscriber.h
nodist_kvevents_include_HEADERS = include/kvevents/kvevents-version.h

# The front door: the public API, the publisher and its worker thread,
# and what every room shares (internal.h, counter.h, fault.h).
kvev_library_sources = \
	%reldir%/internal.h \
	%reldir%/counter.h \
	%reldir%/fault.h \
	%reldir%/version.c \
	%reldir%/escape.c \
	%reldir%/precondition.h \
	%reldir%/precondition.c \
	%reldir%/publisher.h \
	%reldir%/publisher.c \
	%reldir%/event-calls.c \
	%reldir%/stats.h \
	%reldir%/stats.c \
	%reldir%/fork.h \
	%reldir%/fork.c \
	%reldir%/thread.c \
	%reldir%/worker.h

# config/: flags, key files and command lines become checked settings.
# The flag table (flags.c) describes every flag; config-private.h, what a
# KvevConfig holds and the defaults, is for config/ alone.
kvev_library_sources += \
	%reldir%/config/config-private.h \
	%reldir%/config/flags.h \
	%reldir%/config/flags.c \
	%reldir%/config/value.c \
	%reldir%/config/config.c \
	%reldir%/config/keyfile.c \
	%reldir%/config/options.c \
	%reldir%/config/settings.h \
	%reldir%/config/settings.c \
	%reldir%/config/endpoint.h \
	%reldir%/config/endpoint.c \
	%reldir%/config/security.h \
	%reldir%/config/security.c

# events/: what an event is, where events come from (the queue the event
# calls fill, the master's walk a snapshot runs), how they become bytes.
kvev_library_sources += \
	%reldir%/events/media.h \
	%reldir%/events/media.c \
	%reldir%/events/call.h \
	%reldir%/events/call.c \
	%reldir%/events/queue.h \
	%reldir%/events/queue.c \
	%reldir%/events/snapshot-source.h \
	%reldir%/events/snapshot-source.c

# sub/: the subscriber side of the protocol.  The decoder and the reply
# parsers are bytes alone, in every build (the fuzz targets link them);
# the sockets and the bootstrap need the transport, and without it the
# public calls fail with a GError.
kvev_library_sources += \
	%reldir%/sub/subscriber.h \
	%reldir%/sub/subscriber.c \
	%reldir%/sub/stats.c \
	%reldir%/sub/decode.h \
	%reldir%/sub/decode.c \
	%reldir%/sub/replay-client.h \
	%reldir%/sub/replay-client.c \
	%reldir%/sub/snapshot-client.h \
	%reldir%/sub/snapshot-client.c
if HAVE_ZMQ
kvev_library_sources += \
	%reldir%/sub/source.c \
	%reldir%/sub/bootstrap.c
endif

# zmq/: every socket the library opens.  The front door includes the
# headers of what it owns in both builds; without ZeroMQ, zmq/none.c
# stands in for what it asks of them, and worker-none.c for the worker
# (it is what sends).
kvev_library_sources += \
	%reldir%/zmq/resources.h \
	%reldir%/zmq/resources.c \
	%reldir%/zmq/net.h \
	%reldir%/zmq/xpub.h \
	%reldir%/zmq/replay.h \
	%reldir%/zmq/snapshot-server.h
if HAVE_ZMQ
kvev_library_sources += \
	%reldir%/events/encode.h \
	%reldir%/events/encode.c \
	%reldir%/worker.c \
	%reldir%/zmq/net.c \
	%reldir%/zmq/zap.h \
	%reldir%/zmq/zap.c \
	%reldir%/zmq/send-budget.h \
	%reldir%/zmq/send-budget.c \
	%reldir%/zmq/xpub.c \
	%reldir%/zmq/ledger.h \
	%reldir%/zmq/ledger.c \
	%reldir%/zmq/service.h \
	%reldir%/zmq/service.c \
	%reldir%/zmq/replay-buffer.h \
	%reldir%/zmq/replay-buffer.c \
	%reldir%/zmq/replay.c \
	%reldir%/zmq/snapshot-server.c
else
kvev_library_sources += \
	%reldir%/worker-none.c \
	%reldir%/zmq/none.c
endif
kvev_library_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/%reldir% $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
kvev_library_libs = $(GLIB_LIBS) $(ZMQ_LIBS) $(MSGPACK_LIBS) $(LIBINTL)

noinst_LTLIBRARIES += libkvevents/libkvevents-internal.la
libkvevents_libkvevents_internal_la_SOURCES = $(kvev_library_sources)
libkvevents_libkvevents_internal_la_CPPFLAGS = $(kvev_library_cppflags)
libkvevents_libkvevents_internal_la_LIBADD = base/libkvbase.la $(kvev_library_libs)

# The same sources again with the fault injection seam (fault.h), for the
# tests that make sends, sockets and threads fail, the queue's hold and
# the other seams of the tests and the benchmark.  Never installed.
noinst_LTLIBRARIES += libkvevents/libkvevents-testing.la
libkvevents_libkvevents_testing_la_SOURCES = $(kvev_library_sources) %reldir%/fault.c
libkvevents_libkvevents_testing_la_CPPFLAGS = $(kvev_library_cppflags) -DKVEV_TESTING
libkvevents_libkvevents_testing_la_LIBADD = base/libkvbase.la $(kvev_library_libs)

lib_LTLIBRARIES = libkvevents/libkvevents.la
libkvevents_libkvevents_la_SOURCES =
libkvevents_libkvevents_la_LIBADD = libkvevents/libkvevents-internal.la
libkvevents_libkvevents_la_LDFLAGS = $(AM_LDFLAGS) \
	-version-info $(KVEV_LT_VERSION_INFO) -no-undefined \
	-Wl,--version-script=$(srcdir)/%reldir%/libkvevents.sym
EXTRA_libkvevents_libkvevents_la_DEPENDENCIES = %reldir%/libkvevents.sym
EXTRA_DIST += %reldir%/libkvevents.sym

pkgconfig_DATA = kvevents.pc
