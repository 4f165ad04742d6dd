#!/bin/sh
# Every manual page of the tree formats without a single warning, the way
# lintian checks it (man --warnings, UTF-8, at 80 columns and as lintian
# runs it, at 120 in pages), and has a NAME
# line whatis can index.  A page that groff warns about renders wrong
# somewhere (a table wider than the terminal, a broken font escape, a
# macro misspelt), and lintian fails the package build on it.
#
# The section-3 pages, which the build makes from the public headers'
# comments into doc/man3/, cover the API: a page for every symbol of
# the version script, every one the built library exports, and every
# type the headers declare, each with the sections a reader looks for.
#
# Pages: doc/*.[1-8], tools/*.1, tools/bench/*.1 and the build's
# doc/man3/*.3.  TAP output; skips the formatting without groff.
set -u
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
man3=$builddir/doc/man3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvev-man.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# coverage NAME LIST: "ok" when every name of the file LIST has a page.
n=0
status=0
coverage () {
  n=$((n + 1))
  missing=
  while read -r sym; do
    if [ ! -f "$man3/$sym.3" ]; then missing="$missing $sym"; fi
  done <"$2"
  if [ ! -s "$2" ]; then
    echo "not ok $n - $1: none found"
    status=1
  elif [ -z "$missing" ]; then
    echo "ok $n - $1: $(wc -l <"$2" | tr -d ' ') pages"
  else
    echo "not ok $n - $1 without a page in doc/man3:$missing"
    status=1
  fi
}

grep -oE '^[[:space:]]*kvev_[a-z0-9_]+;' "$srcdir/libkvevents/libkvevents.sym" | tr -d ' \t;' |
  sort -u >"$tmp/script"
lib=$builddir/libkvevents/.libs/libkvevents.so
if [ -e "$lib" ] && command -v nm >/dev/null 2>&1; then
  nm -D --defined-only "$lib" | awk '$3 ~ /^kvev_/ {sub(/@.*/, "", $3); print $3}' | sort -u >"$tmp/exported"
else
  : >"$tmp/exported"
fi
# typedef struct _X X;  } X;  typedef R (*X) (...);
sed -n -e 's/^typedef struct _[A-Za-z0-9_]* \([A-Za-z0-9_]*\);$/\1/p' \
  -e 's/^} \([A-Za-z0-9_]*\);$/\1/p' \
  -e 's/^typedef [^(]*(\*\([A-Za-z0-9_]*\)).*/\1/p' \
  "$srcdir"/include/kvevents/*.h | sort -u >"$tmp/types"

set --
for p in "$srcdir"/doc/*.[1-8] "$srcdir"/tools/*.1 "$srcdir"/tools/bench/*.1 "$man3"/*.3; do
  if [ -f "$p" ]; then set -- "$@" "$p"; fi
done

echo "1..$(($# + 4 + $(ls "$man3"/*.3 2>/dev/null | wc -l)))"
coverage "the version script's symbols" "$tmp/script"
if [ -s "$tmp/exported" ]; then
  coverage "the symbols libkvevents.so exports" "$tmp/exported"
else
  n=$((n + 1))
  echo "ok $n # SKIP no shared library or nm"
fi
coverage "the types of include/kvevents/" "$tmp/types"

# The sections: NAME, SYNOPSIS with the one header, DESCRIPTION, a
# RETURN VALUE for a function, and SEE ALSO kvevents(7).
for page in "$man3"/*.3; do
  [ -f "$page" ] || continue
  n=$((n + 1))
  lacks=
  for section in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
    grep -q "^\.SH $section\$" "$page" || lacks="$lacks $section"
  done
  grep -q '^\.B #include <kvevents/kvevents.h>$' "$page" || lacks="$lacks #include"
  if grep -q '^\.BI ".*(' "$page" && ! grep -q '^#define' "$page" &&
     ! grep -q '^\.BI "#define' "$page"; then
    grep -q '^\.SH RETURN VALUE$' "$page" || lacks="$lacks RETURN_VALUE"
  fi
  grep -q '^\.BR kvevents (7)$' "$page" || lacks="$lacks kvevents(7)"
  if [ -z "$lacks" ]; then
    echo "ok $n - ${page##*/} has its sections"
  else
    echo "not ok $n - ${page##*/} lacks:$lacks"
    status=1
  fi
done
n=$((n + 1))
if [ "$(ls "$man3"/*.3 2>/dev/null | wc -l)" -gt 0 ]; then
  echo "ok $n - the build made doc/man3"
else
  echo "not ok $n - no page in $man3: the build makes them (doc/local.mk)"
  status=1
fi

if ! command -v groff >/dev/null 2>&1; then
  for page do
    n=$((n + 1))
    echo "ok $n # SKIP groff is not installed"
  done
  exit $status
fi

# man-db runs the preprocessors a page asks for ('\" t for tbl) and sets
# the line length from MANWIDTH; plain groff is the fallback.  -ww turns
# on every warning category.  man-db is told by its lexgrog: its man
# --version names no package.
render () {
  if command -v man >/dev/null 2>&1 && command -v lexgrog >/dev/null 2>&1; then
    LC_ALL=C.UTF-8 MANWIDTH=80 MAN_KEEP_FORMATTING=0 \
      man --warnings=w -E UTF-8 -l "$1" >"$tmp/out" 2>"$tmp/err" || return 1
  else
    groff -t -man -ww -z -Tutf8 "$1" >"$tmp/out" 2>"$tmp/err" || return 1
  fi
  # And exactly as lintian renders it: 120 columns, made into pages (-Z),
  # where tbl warns of a table that a page break cuts.
  if command -v man >/dev/null 2>&1; then
    env -i PATH="$PATH" LC_ALL=C.UTF-8 MANROFFSEQ= MANWIDTH=120 \
      man --warnings -E UTF-8 -l -Tutf8 -Z "$1" >/dev/null 2>>"$tmp/err"
  fi
}

for page do
  n=$((n + 1))
  name=${page#"$srcdir"/}
  name=${name#"$builddir"/}
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
