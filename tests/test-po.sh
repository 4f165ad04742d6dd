#!/bin/sh
# The two zh_CN catalogues: the library's (po/, text domain
# $GETTEXT_PACKAGE, shipped in libkvevents1) and the tools' (po-tools/,
# $KVT_GETTEXT_PACKAGE, shipped in kvevents-tools).  Each is valid and
# complete (msgfmt -c accepts it, nothing is fuzzy or untranslated), has
# every message of the sources its POTFILES.in lists and no other, is
# built for the domain the code asks for, and compiles little-endian
# whatever the build machine's order.  Every source with a message is in
# the catalogue of its package, and the tools' code asks for its own
# domain.
set -u
: "${top_srcdir:=.}"
: "${GETTEXT_PACKAGE:=kvevents1}" "${KVT_GETTEXT_PACKAGE:=kvevents-tools}"
TOTAL=13
echo "1..$TOTAL"
. "$top_srcdir/tests/tap.sh"
if ! command -v msgfmt >/dev/null || ! command -v xgettext >/dev/null || ! command -v msgcmp >/dev/null; then
  while test "$n" -lt $TOTAL; do skip "gettext tools not installed"; done
  exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The keywords po/Makevars.common gives xgettext, so plural messages count
# too.
options=$(sed -n -e '/^XGETTEXT_OPTIONS *=/,/[^\\]$/p' "$top_srcdir/po/Makevars.common" |
  sed -e 's/^XGETTEXT_OPTIONS *= *//' -e 's/\\$//' | tr '\n\t' '  ')
# sources PODIR: the files PODIR/POTFILES.in lists.
sources () { sed -e '/^#/d' -e '/^$/d' "$top_srcdir/$1/POTFILES.in"; }
# extract OUTPUT FILE...: the messages of the files (relative to
# top_srcdir), as xgettext makes the catalogue's template.
extract () {
  out=$1
  shift
  # shellcheck disable=SC2086 # word lists
  (cd "$top_srcdir" && xgettext $options -o "$out" "$@") 2>"$out.err"
}

# catalogue PODIR DOMAIN: the checks of one catalogue.
catalogue () {
  podir=$1 domain=$2
  po=$top_srcdir/$podir/zh_CN.po
  if msgfmt -c --statistics -o "$tmp/$podir.mo" "$po" 2>"$tmp/$podir.stats" &&
    ! grep -qE 'fuzzy|untranslated' "$tmp/$podir.stats"; then
    ok "$podir/zh_CN.po: $(cat "$tmp/$podir.stats")"
  else
    not_ok "$podir/zh_CN.po is not clean"
    comment "$tmp/$podir.stats"
  fi
  # shellcheck disable=SC2046 # a list of file names without spaces
  extract "$tmp/$podir.pot" $(sources "$podir")
  if msgcmp "$po" "$tmp/$podir.pot" 2>"$tmp/$podir.cmp"; then
    ok "every message of $podir/POTFILES.in is in $podir/zh_CN.po"
  else
    not_ok "$podir/zh_CN.po misses messages"
    comment "$tmp/$podir.cmp" "$tmp/$podir.pot.err"
  fi
  # The other way round: a message of another package's sources only
  # would ship in this package, and its own would not be found.
  if msgcmp --use-untranslated "$tmp/$podir.pot" "$po" 2>"$tmp/$podir.extra"; then
    ok "$podir/zh_CN.po has no message that $podir/POTFILES.in's sources do not have"
  else
    not_ok "$podir/zh_CN.po has messages of other sources"
    grep -v 'warning: this message is not used' "$tmp/$podir.extra" | head -n 20 | comment
  fi
  # make install names the catalogue after DOMAIN; the code looks it up
  # under configure.ac's name.
  makevars=$(sed -n 's/^DOMAIN *= *//p' "$top_srcdir/$podir/Makevars")
  check "$podir/Makevars' DOMAIN is $domain, the domain the code asks for" \
    test "$makevars" = "$domain"
  # gettext builds the .gmo into the source tree.  libkvevents1 is
  # Multi-Arch: same, so its .mo must be byte for byte the same on every
  # architecture, and the tools' is then the same from every build too.
  gmo=$top_srcdir/$podir/zh_CN.gmo
  if test ! -f "$gmo"; then
    skip "no $podir/zh_CN.gmo (configured without NLS)"
  elif test "$(od -An -tx1 -N4 "$gmo" | tr -d ' \n')" = de120495; then
    ok "$podir/zh_CN.gmo is little-endian, whatever the build machine's order"
  else
    not_ok "$podir/zh_CN.gmo starts with $(od -An -tx1 -N4 "$gmo"), not the little-endian magic"
  fi
}
catalogue po "$GETTEXT_PACKAGE"
catalogue po-tools "$KVT_GETTEXT_PACKAGE"

# The library's catalogue is the library's sources' (libkvevents/), the
# tools' every other program's.
misplaced=$( (sources po | grep -v '^libkvevents/'; sources po-tools | grep '^libkvevents/') | tr '\n' ' ')
check "po/POTFILES.in lists the library's sources, po-tools/POTFILES.in the others${misplaced:+ (misplaced: $misplaced)}" \
  test -z "$misplaced"

# Every source of the tree with a message is in one POTFILES.in.
(cd "$top_srcdir" && find libkvevents tools tests examples -name '*.c' | sort) \
  >"$tmp/all-sources"
# shellcheck disable=SC2046 # a list of file names without spaces
extract "$tmp/all.pot" $(cat "$tmp/all-sources")
sed -n 's/^#: //p' "$tmp/all.pot" | tr ' ' '\n' | sed 's/:[0-9]*$//' | sort -u >"$tmp/with-messages"
(sources po; sources po-tools) | sort -u >"$tmp/listed"
unlisted=$(comm -23 "$tmp/with-messages" "$tmp/listed" | tr '\n' ' ')
check "every source with a message is in po/POTFILES.in or po-tools/POTFILES.in${unlisted:+ (not: $unlisted)}" \
  test -z "$unlisted"

# GETTEXT_PACKAGE is the library's domain.  A tool that passed it to
# g_dngettext or to its GOptionContext would look its own messages up in
# the library's catalogue, which does not have them; the tools bind it
# only to move the library's catalogue with theirs (kvt_init_i18n).
# shellcheck disable=SC2046 # a list of file names without spaces
(cd "$top_srcdir" && grep -H -n -w GETTEXT_PACKAGE $( (sources po-tools; echo tools/common/kvtool.c) | sort -u)) |
  grep -v 'bindtextdomain (GETTEXT_PACKAGE, ' >"$tmp/domain-uses"
check "the tools' sources ask for their own domain, $KVT_GETTEXT_PACKAGE, not the library's" \
  test ! -s "$tmp/domain-uses"
test -s "$tmp/domain-uses" && comment "$tmp/domain-uses"

test "$n" = "$TOTAL" || echo "# planned $TOTAL tests, ran $n"
