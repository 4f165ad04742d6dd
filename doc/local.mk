# Manual pages of the library.  kvevents(7) is the overview: the flags,
# the publication points and the wire format a subscriber reads.  The
# tools install their own pages (tools/local.mk); tests/test-man.sh checks
# every page of the tree, theirs included, as lintian will.

dist_man_MANS += %reldir%/kvevents.7

# Section-3 pages: one for each function, type and macro the public
# headers document, made from the headers' comments when the library is
# built, so that no page says what its header does not.  The generator
# is awk, which every build has; the pages are not distributed, the
# headers and the generator are.  Their names come from the headers, so
# they install through a hook rather than a list to keep in step.
man3dir = $(mandir)/man3
kvev_man3_headers = $(kvevents_include_HEADERS) $(nodist_kvevents_include_HEADERS)
EXTRA_DIST += %reldir%/man3.awk
all-local: %reldir%/man3.stamp
%reldir%/man3.stamp: $(srcdir)/%reldir%/man3.awk $(kvev_man3_headers)
	$(AM_V_GEN)rm -rf %reldir%/man3 && $(MKDIR_P) %reldir%/man3 && \
	headers=; for h in $(kvev_man3_headers); do \
	  if test -f "$$h"; then headers="$$headers $$h"; else headers="$$headers $(srcdir)/$$h"; fi; \
	done; \
	$(AWK) -v outdir=%reldir%/man3 -v version='$(PACKAGE_VERSION)' \
	  -f $(srcdir)/%reldir%/man3.awk $$headers && touch $@
install-data-local: install-man3
install-man3: %reldir%/man3.stamp
	$(MKDIR_P) '$(DESTDIR)$(man3dir)'
	$(INSTALL_DATA) %reldir%/man3/*.3 '$(DESTDIR)$(man3dir)'
uninstall-local: uninstall-man3
uninstall-man3: %reldir%/man3.stamp
	for p in %reldir%/man3/*.3; do rm -f "$(DESTDIR)$(man3dir)/$${p##*/}"; done
clean-local: clean-man3
clean-man3:
	rm -rf %reldir%/man3 %reldir%/man3.stamp
.PHONY: install-man3 uninstall-man3 clean-man3
