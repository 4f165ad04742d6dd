# What the tools, and the programs the tests run, share: a convenience
# library, never installed.  kvtool.c holds the small helpers, decode.c
# kvevents-sub's decoder (apart from its command line, so that a fuzz
# target links it alone: it needs GLib only), state.c the availability a
# subscriber rebuilds from them, socket.c what the tools do alike on
# ZeroMQ sockets, and replay-client.c and snapshot-client.c the
# subscriber's side of the replay and snapshot protocols.  A program
# links it with base/libkvbase.la, the helpers the library shares, and
# with the library it publishes through.

noinst_LTLIBRARIES += %reldir%/libkvtool.la
%canon_reldir%_libkvtool_la_SOURCES = \
	%reldir%/kvtool.h \
	%reldir%/kvtool.c \
	%reldir%/decode.h \
	%reldir%/decode.c \
	%reldir%/state.h \
	%reldir%/state.c \
	%reldir%/socket.h \
	%reldir%/replay-client.h \
	%reldir%/snapshot-client.h
if HAVE_ZMQ
%canon_reldir%_libkvtool_la_SOURCES += %reldir%/socket.c %reldir%/replay-client.c \
	%reldir%/snapshot-client.c
endif
%canon_reldir%_libkvtool_la_CPPFLAGS = $(AM_CPPFLAGS) $(ZMQ_CFLAGS)

# How a program builds on it.
KVTOOL_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/%reldir% $(ZMQ_CFLAGS)
KVTOOL_LIBS = %reldir%/libkvtool.la base/libkvbase.la \
	$(GLIB_LIBS) $(ZMQ_LIBS) $(LIBINTL)
