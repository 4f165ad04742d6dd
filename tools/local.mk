# Command-line tools built on the library: kvevents-sub prints any
# engine's KV event stream, kvevents-pub publishes through libkvevents from
# a script of commands.  Both build without a transport too: kvevents-pub
# then checks its input and publishes nothing, kvevents-sub says it cannot
# subscribe.  kvevents-keygen makes CURVE key pairs with ZeroMQ's own
# generator, so it exists only with the transport.  What they share is in
# tools/common; the benchmark, kvevents-bench, installed too, and its
# companion of the build tree, in tools/bench (tools/bench/local.mk).

bin_PROGRAMS += %reldir%/kvevents-sub %reldir%/kvevents-pub
dist_man_MANS += %reldir%/kvevents-sub.1 %reldir%/kvevents-pub.1

%canon_reldir%_kvevents_sub_CPPFLAGS = $(KVTOOL_CPPFLAGS)
%canon_reldir%_kvevents_sub_LDADD = $(KVTOOL_LIBS) libkvevents/libkvevents.la

%canon_reldir%_kvevents_pub_CPPFLAGS = $(KVTOOL_CPPFLAGS)
%canon_reldir%_kvevents_pub_LDADD = $(KVTOOL_LIBS) libkvevents/libkvevents.la

if HAVE_ZMQ
bin_PROGRAMS += %reldir%/kvevents-keygen
dist_man_MANS += %reldir%/kvevents-keygen.1
endif
EXTRA_DIST += %reldir%/kvevents-keygen.1
%canon_reldir%_kvevents_keygen_CPPFLAGS = $(KVTOOL_CPPFLAGS)
%canon_reldir%_kvevents_keygen_LDADD = $(KVTOOL_LIBS) libkvevents/libkvevents.la
