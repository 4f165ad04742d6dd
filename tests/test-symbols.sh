#!/bin/sh
# The shared library exports exactly the version script's symbols, every
# one kvev_* under a KVEVENTS_ node, with soname libkvevents.so.1.  Each
# build (with and without the transport) runs this against the same
# script, so both export the same list.
set -u
lib="$top_builddir/libkvevents/.libs/libkvevents.so"
script="$top_srcdir/libkvevents/libkvevents.sym"
echo "1..4"
if [ ! -e "$lib" ] || ! command -v nm >/dev/null || ! command -v readelf >/dev/null; then
  echo "ok 1 # SKIP no shared library or binutils"; echo "ok 2 # SKIP"; echo "ok 3 # SKIP"; echo "ok 4 # SKIP"
  exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

nm -D --defined-only --with-symbol-versions "$lib" | awk '{print $3}' | grep -v -E '^KVEVENTS_[0-9.]+(@|$)' | sort >"$tmp/exported"
grep -oE '^[[:space:]]*kvev_[a-z0-9_]+;' "$script" | tr -d ' \t;' | sort >"$tmp/script"

if sed 's/@.*//' "$tmp/exported" | diff -u "$tmp/script" - >"$tmp/diff"; then
  echo "ok 1 - exported symbols are exactly the version script's"
else
  echo "not ok 1 - exported symbols differ from the version script"; sed 's/^/# /' "$tmp/diff"
fi
bad=$(grep -v -E '^kvev_[a-z0-9_]+@@?KVEVENTS_[0-9]+\.[0-9]+$' "$tmp/exported")
if [ -z "$bad" ]; then
  echo "ok 2 - every symbol is kvev_* with a KVEVENTS_ version"
else
  echo "not ok 2 - symbols without prefix or version:"; echo "$bad" | sed 's/^/# /'
fi
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
if [ "$soname" = libkvevents.so.1 ]; then
  echo "ok 3 - soname is libkvevents.so.1"
else
  echo "not ok 3 - soname is '$soname'"
fi
# Nothing undefined but what the libraries it links provide.
if readelf -d "$lib" | grep -q 'NEEDED.*libglib-2.0'; then
  echo "ok 4 - links GLib directly"
else
  echo "not ok 4 - does not link GLib"
fi
