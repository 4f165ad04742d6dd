#!/bin/sh
# The zh_CN catalogue is valid and complete: msgfmt -c accepts it, nothing
# is fuzzy or untranslated, and every message of the sources is in it.
# The compiled one is little-endian on every architecture.
set -u
echo "1..3"
if ! command -v msgfmt >/dev/null || ! command -v xgettext >/dev/null || ! command -v msgcmp >/dev/null; then
  echo "ok 1 # SKIP gettext tools not installed"; echo "ok 2 # SKIP gettext tools not installed"
  echo "ok 3 # SKIP gettext tools not installed"; exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
po="$top_srcdir/po/zh_CN.po"
if msgfmt -c --statistics -o "$tmp/zh_CN.mo" "$po" 2>"$tmp/stats" && ! grep -qE 'fuzzy|untranslated' "$tmp/stats"; then
  echo "ok 1 - zh_CN.po: $(cat "$tmp/stats")"
else
  echo "not ok 1 - zh_CN.po is not clean"; sed 's/^/# /' "$tmp/stats"
fi
files=$(sed -e '/^#/d' -e '/^$/d' "$top_srcdir/po/POTFILES.in")
# The keywords po/Makevars gives xgettext, so plural messages count too.
options=$(sed -n -e '/^XGETTEXT_OPTIONS *=/,/[^\\]$/p' "$top_srcdir/po/Makevars" |
  sed -e 's/^XGETTEXT_OPTIONS *= *//' -e 's/\\$//' | tr '\n\t' '  ')
# shellcheck disable=SC2086 # word lists
( cd "$top_srcdir" && xgettext $options -o "$tmp/sources.pot" $files ) 2>"$tmp/xerr"
if msgcmp "$po" "$tmp/sources.pot" 2>"$tmp/cmp"; then
  echo "ok 2 - every message of po/POTFILES.in is in zh_CN.po"
else
  echo "not ok 2 - zh_CN.po misses messages"; sed 's/^/# /' "$tmp/cmp" "$tmp/xerr"
fi
# libkvevents1 is Multi-Arch: same, so its .mo must be byte for byte the
# same on every architecture; gettext builds it into the source tree.
gmo="$top_srcdir/po/zh_CN.gmo"
if test ! -f "$gmo"; then
  echo "ok 3 # SKIP no po/zh_CN.gmo (configured without NLS)"
elif test "$(od -An -tx1 -N4 "$gmo" | tr -d ' \n')" = de120495; then
  echo "ok 3 - po/zh_CN.gmo is little-endian, whatever the build machine's order"
else
  echo "not ok 3 - po/zh_CN.gmo starts with $(od -An -tx1 -N4 "$gmo"), not the little-endian magic"
fi
