#!/bin/sh
# Every manual page of the tree formats without a single warning, the way
# lintian checks it (man --warnings, 80 columns, UTF-8), and has a NAME
# line whatis can index.  A page that groff warns about renders wrong
# somewhere (a table wider than the terminal, a broken font escape, a
# macro misspelt), and lintian fails the package build on it.
#
# Pages: doc/*.[1-8], tools/*.1 and tools/bench/*.1.  TAP output; skips without groff.
set -u
srcdir=${top_srcdir:-.}

set --
for p in "$srcdir"/doc/*.[1-8] "$srcdir"/tools/*.1 "$srcdir"/tools/bench/*.1; do
  if [ -f "$p" ]; then set -- "$@" "$p"; fi
done

if ! command -v groff >/dev/null 2>&1; then
  echo "1..0 # SKIP groff is not installed"
  exit 0
fi
if [ $# -eq 0 ]; then
  echo "1..0 # SKIP no manual pages found under $srcdir"
  exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvev-man.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# man-db runs the preprocessors a page asks for ('\" t for tbl) and sets
# the line length from MANWIDTH; plain groff is the fallback.  -ww turns
# on every warning category.
render () {
  if command -v man >/dev/null 2>&1 && man --version 2>/dev/null | grep -q man-db; then
    LC_ALL=C.UTF-8 MANWIDTH=80 MAN_KEEP_FORMATTING=0 \
      man --warnings=w -E UTF-8 -l "$1" >"$tmp/out" 2>"$tmp/err"
  else
    groff -t -man -ww -z -Tutf8 "$1" >"$tmp/out" 2>"$tmp/err"
  fi
}

echo "1..$#"
n=0
status=0
for page do
  n=$((n + 1))
  name=${page#"$srcdir"/}
  problems=
  if ! render "$page"; then
    problems="formatting failed"
  elif [ -s "$tmp/err" ]; then
    problems="formatter warnings"
  fi
  # lexgrog (man-db) parses the NAME section as whatis/apropos will.
  if [ -z "$problems" ] && command -v lexgrog >/dev/null 2>&1 &&
     ! lexgrog "$page" >"$tmp/err" 2>&1; then
    problems="bad NAME section (lexgrog)"
  fi
  if [ -z "$problems" ]; then
    echo "ok $n - $name formats cleanly"
  else
    echo "not ok $n - $name: $problems"
    sed 's/^/# /' "$tmp/err"
    status=1
  fi
done
exit $status
