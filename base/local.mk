# base/: pure helpers with no state and no translated messages, which the
# library, the tools and the tests all include as <base/name.h>.  The
# shared library hides them (its version script exports none), so they are
# a convenience library of their own, linked into every build of the
# library and into tools/common.

kvev_base_sources = \
	%reldir%/endpoint-syntax.h \
	%reldir%/endpoint-syntax.c \
	%reldir%/mpread.h \
	%reldir%/mpread.c \
	%reldir%/quote.h \
	%reldir%/quote.c \
	%reldir%/secret.h \
	%reldir%/secret.c \
	%reldir%/utf8.h \
	%reldir%/z85.h \
	%reldir%/z85.c
noinst_LTLIBRARIES += %reldir%/libkvbase.la
%canon_reldir%_libkvbase_la_SOURCES = $(kvev_base_sources)
%canon_reldir%_libkvbase_la_LIBADD = $(GLIB_LIBS)
