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

noinst_LTLIBRARIES += libkvevents/libkvevents-internal.la
libkvevents_libkvevents_internal_la_SOURCES = \
	%reldir%/kvevents-private.h \
	%reldir%/event.h \
	%reldir%/version.c \
	%reldir%/config.c \
	%reldir%/media.c \
	%reldir%/queue.h \
	%reldir%/queue.c \
	%reldir%/publisher-private.h \
	%reldir%/publisher.c \
	%reldir%/events.c \
	%reldir%/transport.h
if HAVE_ZMQ
libkvevents_libkvevents_internal_la_SOURCES += \
	%reldir%/encode.h \
	%reldir%/encode.c \
	%reldir%/transport-zmq.c
else
libkvevents_libkvevents_internal_la_SOURCES += \
	%reldir%/transport-none.c
endif
libkvevents_libkvevents_internal_la_CPPFLAGS = $(AM_CPPFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)
libkvevents_libkvevents_internal_la_LIBADD = $(GLIB_LIBS) $(ZMQ_LIBS) $(MSGPACK_LIBS) $(LIBINTL)

lib_LTLIBRARIES = libkvevents/libkvevents.la
libkvevents_libkvevents_la_SOURCES =
libkvevents_libkvevents_la_LIBADD = libkvevents/libkvevents-internal.la
libkvevents_libkvevents_la_LDFLAGS = $(AM_LDFLAGS) \
	-version-info $(KVEV_LT_VERSION_INFO) -no-undefined \
	-Wl,--version-script=$(srcdir)/%reldir%/libkvevents.sym
EXTRA_libkvevents_libkvevents_la_DEPENDENCIES = %reldir%/libkvevents.sym
EXTRA_DIST += %reldir%/libkvevents.sym

pkgconfig_DATA = kvevents.pc
