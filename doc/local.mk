# Manual pages of the library.  kvevents(7) is the overview: the flags,
# the publication points and the wire format a subscriber reads.  The
# tools install their own pages (tools/local.mk); tests/test-man.sh checks
# every page of the tree, theirs included, as lintian will.

dist_man_MANS += %reldir%/kvevents.7
