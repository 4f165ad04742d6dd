# Command-line tools built on the library: kvevents-sub prints any
# engine's KV event stream, kvevents-pub publishes through libkvevents from
# a script of commands.  Both build without a transport too: kvevents-pub
# then checks its input and publishes nothing, kvevents-sub says it cannot
# subscribe.  kvevents-keygen makes CURVE key pairs with ZeroMQ's own
# generator, so it exists only with the transport.

bin_PROGRAMS += %reldir%/kvevents-sub %reldir%/kvevents-pub
dist_man_MANS += %reldir%/kvevents-sub.1 %reldir%/kvevents-pub.1

# Shared by both tools and by examples/mini-master (which compiles the
# same files: there is no convenience library to put them in).
KVTOOL_SOURCES = \
	%reldir%/kvtool.h \
	%reldir%/kvtool.c
KVTOOL_RELAY_SOURCES = \
	%reldir%/relay.h \
	%reldir%/relay.c
KVTOOL_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/%reldir% $(ZMQ_CFLAGS)
KVTOOL_LIBS = libkvevents/libkvevents.la $(GLIB_LIBS) $(ZMQ_LIBS) $(LIBINTL)

# decode.c is kept apart from the command line so that a fuzz target can
# link it alone.
%canon_reldir%_kvevents_sub_SOURCES = \
	%reldir%/kvevents-sub.c \
	%reldir%/decode.h \
	%reldir%/decode.c \
	$(KVTOOL_SOURCES)
%canon_reldir%_kvevents_sub_CPPFLAGS = $(KVTOOL_CPPFLAGS)
%canon_reldir%_kvevents_sub_LDADD = $(KVTOOL_LIBS)

%canon_reldir%_kvevents_pub_SOURCES = \
	%reldir%/kvevents-pub.c \
	$(KVTOOL_RELAY_SOURCES) \
	$(KVTOOL_SOURCES)
%canon_reldir%_kvevents_pub_CPPFLAGS = $(KVTOOL_CPPFLAGS)
%canon_reldir%_kvevents_pub_LDADD = $(KVTOOL_LIBS)

if HAVE_ZMQ
bin_PROGRAMS += %reldir%/kvevents-keygen
dist_man_MANS += %reldir%/kvevents-keygen.1
endif
EXTRA_DIST += %reldir%/kvevents-keygen.1
%canon_reldir%_kvevents_keygen_SOURCES = \
	%reldir%/kvevents-keygen.c \
	$(KVTOOL_SOURCES)
%canon_reldir%_kvevents_keygen_CPPFLAGS = $(KVTOOL_CPPFLAGS)
%canon_reldir%_kvevents_keygen_LDADD = $(KVTOOL_LIBS)

# The tool tests: kvevents-pub into kvevents-sub, and raw frames no
# well-behaved publisher sends, from a helper that is never installed.
TESTS += tests/test-tools.sh
EXTRA_DIST += tests/test-tools.sh
if HAVE_ZMQ
check_PROGRAMS += %reldir%/sendframes
%canon_reldir%_sendframes_CPPFLAGS = $(AM_CPPFLAGS) $(ZMQ_CFLAGS)
%canon_reldir%_sendframes_LDADD = $(GLIB_LIBS) $(ZMQ_LIBS)
endif

# kvevents-keygen's files, and a CURVE stream from kvevents-pub to
# kvevents-sub; it skips in a build without ZeroMQ.
TESTS += tests/test-keygen.sh
EXTRA_DIST += tests/test-keygen.sh
