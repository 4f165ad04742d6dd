# The ABI baseline and its check.
#
# abi/libkvevents.so.1.abi is libabigail's description (abidw) of the
# interface libkvevents.so.1 was released with: every exported function
# and the public types it reaches, private types dropped.  It changes only
# in a release commit, with make update-abi.
#
#   make check-abi    compare the library just built with the baseline
#                     (fails when an existing interface changed or went
#                     away; additions pass), then prove with
#                     abi/test-abi-break.sh that the comparison fails on
#                     deliberately broken copies.  Skips without
#                     abigail-tools, or on another architecture than the
#                     baseline's (x86_64).
#   make update-abi   rewrite the baseline from the library just built
#                     (build it with -g, the default CFLAGS have it).
#                     Release commits only, after check-abi passed: a
#                     baseline regenerated to silence check-abi hides the
#                     break it reported.
#
# Neither runs in make check: the baseline describes one architecture and
# needs abigail-tools, which a package build on another one does not have.
# The distro-side guard is debian/libkvevents1.symbols (dpkg-gensymbols
# -c4), which every architecture's package build enforces.

KVEV_ABI_BASELINE = $(srcdir)/%reldir%/libkvevents.so.$(KVEV_SONAME_MAJOR).abi
KVEV_ABI_LIB = libkvevents/.libs/libkvevents.so
ABIDW = abidw
ABIDIFF = abidiff

EXTRA_DIST += \
	%reldir%/libkvevents.so.1.abi \
	%reldir%/abi-check.sh \
	%reldir%/test-abi-break.sh \
	tests/installcheck-consumer.c \
	%reldir%/installcheck.sh

# How the break test compiles its changed copies: the sources and flags of
# libkvevents.la in this configuration (with or without the transport).
KVEV_ABI_BREAK_ENV = \
	top_srcdir='$(top_srcdir)' top_builddir='$(top_builddir)' \
	CC='$(CC)' ABIDW='$(ABIDW)' ABIDIFF='$(ABIDIFF)' \
	KVEV_ABI_SOURCES='$(filter %.c,$(kvev_base_sources) $(libkvevents_libkvevents_internal_la_SOURCES))' \
	KVEV_ABI_CFLAGS='$(GLIB_CFLAGS) $(ZMQ_CFLAGS) $(MSGPACK_CFLAGS)' \
	KVEV_ABI_LIBS='$(GLIB_LIBS) $(ZMQ_LIBS) $(MSGPACK_LIBS) $(LIBINTL) $(LIBS)'

check-abi: $(lib_LTLIBRARIES)
	@rc=0; ABIDW='$(ABIDW)' ABIDIFF='$(ABIDIFF)' $(SHELL) $(srcdir)/%reldir%/abi-check.sh \
	  '$(KVEV_ABI_BASELINE)' '$(KVEV_ABI_LIB)' '$(top_srcdir)/include/kvevents' || rc=$$?; \
	case $$rc in \
	  0) ;; \
	  77) echo "check-abi: SKIPPED"; exit 0 ;; \
	  *) echo "check-abi: FAILED: see above; README, 'ABI', says what may change"; exit 1 ;; \
	esac; \
	echo "check-abi: the check must be able to fail: abi/test-abi-break.sh"; \
	$(KVEV_ABI_BREAK_ENV) $(SHELL) $(srcdir)/%reldir%/test-abi-break.sh

update-abi: $(lib_LTLIBRARIES)
	ABIDW='$(ABIDW)' ABIDIFF='$(ABIDIFF)' $(SHELL) $(srcdir)/%reldir%/abi-check.sh --update \
	  '$(KVEV_ABI_BASELINE)' '$(KVEV_ABI_LIB)' '$(top_srcdir)/include/kvevents'

.PHONY: check-abi update-abi

# make installcheck (and so make distcheck): programs that know the
# library only through the installed kvevents.pc, a check of the API and
# the example masters (the C++ one when there is a C++17 compiler), are
# compiled, linked and run against the installed files.  See
# abi/installcheck.sh.
if KVEV_HAVE_CXX17
KVEV_MASTER_CPP = $(srcdir)/examples/master.cpp
endif
installcheck-local:
	CC='$(CC)' PKG_CONFIG='$(PKG_CONFIG)' DESTDIR='$(DESTDIR)' \
	CXX='$(CXX)' KVEV_MASTER_CPP='$(KVEV_MASTER_CPP)' \
	prefix='$(prefix)' exec_prefix='$(exec_prefix)' \
	libdir='$(libdir)' includedir='$(includedir)' \
	$(SHELL) $(srcdir)/%reldir%/installcheck.sh \
	  '$(srcdir)/tests/installcheck-consumer.c' \
	  '$(srcdir)/examples/mini-master.c' '$(srcdir)/examples/store.c'
