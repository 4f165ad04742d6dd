# Examples: a store master to read and to copy.  store.c is the store and
# its publication points, mini-master.c the start-up, a scripted run of
# client requests and the shutdown around it.  They need nothing but
# <kvevents/kvevents.h> and GLib: make builds them against the build tree,
# make installcheck against the installed files alone
# (abi/installcheck.sh).  Never installed.  tests/oracle-master runs the
# same store under a seeded random workload.

noinst_LTLIBRARIES += %reldir%/libstore.la
%canon_reldir%_libstore_la_SOURCES = %reldir%/store.h %reldir%/store.c
%canon_reldir%_libstore_la_CPPFLAGS = $(KVEV_EXAMPLE_CPPFLAGS)

noinst_PROGRAMS += %reldir%/mini-master
%canon_reldir%_mini_master_CPPFLAGS = $(KVEV_EXAMPLE_CPPFLAGS)
%canon_reldir%_mini_master_LDADD = %reldir%/libstore.la libkvevents/libkvevents.la $(GLIB_LIBS)

# master.cpp: the README's tour as a C++17 master, built by make check
# (and run by tests/test-master-cpp.sh) as strictly as a C++ master's
# build would; make installcheck builds it against the installed files
# with pkg-config and with CMake.  Without a C++17 compiler it is left out.
if KVEV_HAVE_CXX17
check_PROGRAMS += %reldir%/master
%canon_reldir%_master_SOURCES = %reldir%/master.cpp
%canon_reldir%_master_CPPFLAGS = $(KVEV_EXAMPLE_CPPFLAGS)
%canon_reldir%_master_CXXFLAGS = -std=c++17 $(WARN_CXXFLAGS)
%canon_reldir%_master_LDADD = libkvevents/libkvevents.la $(GLIB_LIBS)
endif
EXTRA_DIST += %reldir%/master.cpp

# The public headers and GLib, nothing of the library's own.
KVEV_EXAMPLE_CPPFLAGS = -I$(top_srcdir)/include -I$(top_builddir)/include $(GLIB_CFLAGS)

# `make demo`: a master runs a short workload while kvevents-sub prints
# the stream; both end with their summaries.  The master is the store of
# store.c under tests/oracle-master's workload, which waits for the
# subscriber's subscription before its first operation
# (--wait-subscribers, kvev_publisher_wait_subscribers ()), so that the
# subscriber prints every event the master's summary counts.  The
# endpoint is an ipc:// socket in a temporary directory.
DEMO_OPS = 40
demo: tests/oracle-master$(EXEEXT) tools/kvevents-sub$(EXEEXT)
	@if test '$(HAVE_ZMQ_01)' != 1; then \
	  echo 'make demo: this build has no transport (configured --without-zmq)' >&2; \
	  exit 1; \
	fi; \
	dir=`mktemp -d "$${TMPDIR:-/tmp}/kvevents-demo.XXXXXX"` || exit 1; \
	trap 'rm -rf "$$dir"' EXIT; \
	echo "== kvevents-sub prints what the store of examples/store.c publishes on ipc://$$dir/kv-events"; \
	./tools/kvevents-sub$(EXEEXT) --endpoint="ipc://$$dir/kv-events" --format=text \
	  --until-disconnect --timeout-ms=60000 & sub=$$!; \
	./tests/oracle-master$(EXEEXT) --ops=$(DEMO_OPS) --seed=7 --tenants=2 \
	  --enable-kv-events --kv-events-bind-endpoint="ipc://$$dir/kv-events" \
	  --kv-events-backend-id=demo-backend --kv-events-model-name=demo-model \
	  --wait-subscribers=1 --wait-timeout-ms=30000 2>"$$dir/master.log" \
	  || { kill $$sub; cat "$$dir/master.log" >&2; exit 1; }; \
	wait $$sub; \
	echo "== the master's side: $(DEMO_OPS) operations of a seeded workload (tests/oracle-master)"; \
	cat "$$dir/master.log"
.PHONY: demo
