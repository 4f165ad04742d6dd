# Examples: a small store master that calls the library at every
# publication point of the seed design.  Built by `make`, never installed.
#
# mini-master-broken is the same master with one publication compiled out
# (KVEV_MINI_MASTER_SKIP): the oracle test runs it to show that it fails.

noinst_PROGRAMS += %reldir%/mini-master %reldir%/mini-master-broken

%canon_reldir%_mini_master_SOURCES = %reldir%/mini-master.c
%canon_reldir%_mini_master_CPPFLAGS = $(KVTOOL_CPPFLAGS)
%canon_reldir%_mini_master_LDADD = $(KVTOOL_LIBS) libkvevents/libkvevents.la

%canon_reldir%_mini_master_broken_SOURCES = $(%canon_reldir%_mini_master_SOURCES)
%canon_reldir%_mini_master_broken_CPPFLAGS = $(KVTOOL_CPPFLAGS) -DKVEV_MINI_MASTER_SKIP=eviction
%canon_reldir%_mini_master_broken_LDADD = $(KVTOOL_LIBS) libkvevents/libkvevents.la

# The oracle: availability rebuilt from the events alone must equal the
# master's own.  It skips in a build without the transport.
TESTS += tests/test-oracle.sh
EXTRA_DIST += tests/test-oracle.sh tests/oracle-rebuild.py

# `make demo`: the master runs a short workload while kvevents-sub prints
# the stream; both end with their summaries.  Everything lives in a
# temporary directory: the endpoint is an ipc:// socket there.
DEMO_OPS = 40
demo: %reldir%/mini-master$(EXEEXT) tools/kvevents-sub$(EXEEXT)
	@if test '$(HAVE_ZMQ_01)' != 1; then \
	  echo 'make demo: this build has no transport (configured --without-zmq)' >&2; \
	  exit 1; \
	fi; \
	dir=`mktemp -d "$${TMPDIR:-/tmp}/kvevents-demo.XXXXXX"` || exit 1; \
	trap 'rm -rf "$$dir"' EXIT; \
	TMPDIR=$$dir; export TMPDIR; \
	echo "== kvevents-sub prints what mini-master publishes on ipc://$$dir/kv-events"; \
	./tools/kvevents-sub$(EXEEXT) --endpoint="ipc://$$dir/kv-events" --format=text \
	  --until-disconnect --timeout-ms=60000 & sub=$$!; \
	./%reldir%/mini-master$(EXEEXT) --ops=$(DEMO_OPS) --seed=7 --tenants=2 \
	  --enable-kv-events --kv-events-bind-endpoint="ipc://$$dir/kv-events" \
	  --kv-events-backend-id=demo-backend --kv-events-model-name=demo-model \
	  --wait-subscribers=1 --wait-timeout-ms=30000 2>"$$dir/master.log" \
	  || { kill $$sub; cat "$$dir/master.log" >&2; exit 1; }; \
	wait $$sub; \
	echo "== mini-master's side"; \
	cat "$$dir/master.log"
.PHONY: demo
