#!/bin/sh
# Prove that the ABI check can fail.  Copies of the library sources are
# deliberately changed, each copy is compiled into a shared library the
# way libkvevents.so is linked (version script, hidden visibility, -g), and
# abi/abi-check.sh (the script behind make check-abi) compares it with the
# committed baseline:
#
#   1 unchanged copy                    must pass (the harness is sound)
#   2 compatible evolution              must pass: an enumerator appended
#     to KvevStat, a new function in a KVEVENTS_1.1 node, a field added
#     to the private struct _KvevPublisher
#   3 kvev_publisher_flush's timeout    must fail
#     gint64 -> gint in header and source
#   4 KVEV_STAT_INSERTED inserted in    must fail
#     the middle of KvevStat, later values shifted
#   5 kvev_publisher_stats_json dropped must fail
#     from the version script
#
# Run by make check-abi, which passes the configured compiler and flags:
#   top_srcdir top_builddir CC KVEV_ABI_CFLAGS KVEV_ABI_LIBS KVEV_ABI_SOURCES
# TAP output; "1..0 # SKIP" without libabigail.
set -eu

: "${top_srcdir:?}" "${top_builddir:?}" "${KVEV_ABI_SOURCES:?}"
CC=${CC:-cc}
KVEV_ABI_CFLAGS=${KVEV_ABI_CFLAGS:-}
KVEV_ABI_LIBS=${KVEV_ABI_LIBS:-}
ABIDIFF=${ABIDIFF:-abidiff}
ABIDW=${ABIDW:-abidw}
check="$top_srcdir/abi/abi-check.sh"
baseline="$top_srcdir/abi/libkvevents.so.1.abi"

if ! command -v "$ABIDIFF" >/dev/null 2>&1 || ! command -v "$ABIDW" >/dev/null 2>&1; then
  echo "1..0 # SKIP libabigail (abidw, abidiff) not installed"
  exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvev-abi-break.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
n=0

# A fresh copy of the public headers and the library sources.  The
# generated kvevents-version.h comes from the build tree.
copy () {
  rm -rf "${tmp:?}/$1"
  mkdir -p "$tmp/$1/include"
  cp -R "$top_srcdir/include/kvevents" "$tmp/$1/include/"
  cp -R "$top_srcdir/libkvevents" "$top_srcdir/base" "$tmp/$1/"
  cp "$top_builddir/include/kvevents/kvevents-version.h" "$tmp/$1/include/kvevents/"
  chmod -R u+w "$tmp/$1"  # distcheck's source tree is read-only
}

# Compile copy $1 (plus extra sources) into $1/libkvevents.so.1.  -w: the
# changes are deliberate, and what matters is the DWARF, not warnings.
build () {
  dir=$tmp/$1
  shift
  srcs=
  for s in $KVEV_ABI_SOURCES; do srcs="$srcs $dir/$s"; done
  # shellcheck disable=SC2086 # flag lists are word lists
  $CC -w -g -O0 -fPIC -shared -fvisibility=hidden \
    -DHAVE_CONFIG_H -I"$top_builddir" -I"$dir/include" -I"$dir" -I"$dir/libkvevents" \
    "-DLOCALEDIR=\"$tmp/locale\"" $KVEV_ABI_CFLAGS \
    -Wl,--version-script="$dir/libkvevents/libkvevents.sym" \
    -Wl,-soname,libkvevents.so.1 \
    -o "$dir/libkvevents.so.1" $srcs "$@" $KVEV_ABI_LIBS >"$dir/build.log" 2>&1
}

# expect NAME pass|fail DESCRIPTION: build copy NAME, run the check, and
# compare its verdict with the expectation.
expect () {
  name=$1 want=$2 what=$3
  shift 3
  n=$((n + 1))
  if ! build "$name" "$@"; then
    echo "not ok $n - $what: the changed copy does not compile"
    sed 's/^/# /' "$tmp/$name/build.log"
    failures=$((failures + 1))
    return
  fi
  rc=0
  sh "$check" "$baseline" "$tmp/$name/libkvevents.so.1" "$tmp/$name/include/kvevents" \
    >"$tmp/$name/check.log" 2>&1 || rc=$?
  case $want.$rc in
    pass.0 | fail.1)
      echo "ok $n - $what: check-abi says $([ "$rc" = 0 ] && echo compatible || echo incompatible)" ;;
    *.77)
      echo "ok $n # SKIP $what: $(tail -n 1 "$tmp/$name/check.log")" ;;
    *)
      echo "not ok $n - $what: expected the check to $want, it exited $rc"
      failures=$((failures + 1)) ;;
  esac
  sed 's/^/# /' "$tmp/$name/check.log"
}

# applied FILE PATTERN: the sed above changed FILE, or the test would
# silently compare an unchanged copy.
applied () {
  if ! grep -q -e "$2" "$1"; then
    echo "Bail out! the deliberate change to $(basename "$1") did not apply: update abi/test-abi-break.sh"
    exit 1
  fi
}

echo "1..5"

copy same
expect same pass "unchanged copy of the sources"

# 2. What a 1.1 release may do.
copy compat
h=$tmp/compat/include/kvevents
sed -i 's/^\(  KVEV_STAT_HWM_DROPPED_EVENTS = 34,\)$/\1\n  KVEV_STAT_APPENDED_FOR_TEST = 35,/' "$h/kvevents-publisher.h"
applied "$h/kvevents-publisher.h" KVEV_STAT_APPENDED_FOR_TEST
# The declaration goes before the last G_END_DECLS of kvevents-common.h.
awk '{ line[NR] = $0 } /^G_END_DECLS/ { last = NR }
     END { for (i = 1; i <= NR; i++) {
             if (i == last) print "KVEV_API int kvev_abi_test_added (void);\n";
             print line[i] } }' "$h/kvevents-common.h" >"$tmp/hdr" &&
  mv "$tmp/hdr" "$h/kvevents-common.h"
applied "$h/kvevents-common.h" kvev_abi_test_added
printf '#include "internal.h"\nint kvev_abi_test_added (void) { return 1; }\n' \
  >"$tmp/compat/added.c"
printf 'KVEVENTS_1.2 {\nglobal:\n\tkvev_abi_test_added;\n} KVEVENTS_1.1;\n' \
  >>"$tmp/compat/libkvevents/libkvevents.sym"
awk '{ print } /^struct _KvevPublisher$/ { s = 1; next }
     s && /^\{$/ { print "  guint64 abi_test_private_field[4];"; s = 0 }' \
  "$tmp/compat/libkvevents/publisher.c" >"$tmp/priv" &&
  mv "$tmp/priv" "$tmp/compat/libkvevents/publisher.c"
applied "$tmp/compat/libkvevents/publisher.c" abi_test_private_field
expect compat pass "appended enumerator, KVEVENTS_1.1 function, private struct field" \
  "$tmp/compat/added.c"

# 3. A parameter's type changes.  Both are GLib typedefs, the case a
# header-based private-type filter misses.
copy signature
sed -i 's/gint64 timeout_ms)/gint timeout_ms)/' \
  "$tmp/signature/include/kvevents/kvevents-publisher.h" "$tmp/signature/libkvevents/publisher.c"
applied "$tmp/signature/include/kvevents/kvevents-publisher.h" 'gint timeout_ms)'
applied "$tmp/signature/libkvevents/publisher.c" 'gint timeout_ms)'
expect signature fail "kvev_publisher_flush (KvevPublisher *, gint64) becomes (KvevPublisher *, gint)"

# 4. An enumerator inserted in the middle: every later value moves, so a
# master built against 1.0 would read the wrong counters.
copy enum
awk '/^  KVEV_STAT_SEND_FAILURES = 5,$/ { print "  KVEV_STAT_INSERTED = 5,"; shift = 1 }
     shift && /^  KVEV_STAT_[A-Z0-9_]+ = [0-9]+,$/ { v = $3 + 1; sub(/= [0-9]+,/, "= " v ",") }
     { print }' "$tmp/enum/include/kvevents/kvevents-publisher.h" >"$tmp/hdr" &&
  mv "$tmp/hdr" "$tmp/enum/include/kvevents/kvevents-publisher.h"
applied "$tmp/enum/include/kvevents/kvevents-publisher.h" 'KVEV_STAT_SEND_FAILURES = 6,'
# The sources' compile-time checks (stat name table size) would, rightly,
# reject this copy; they are not what is under test here.
sed -i '/G_STATIC_ASSERT/d' "$tmp"/enum/libkvevents/*.c
expect enum fail "KVEV_STAT_INSERTED inserted before KVEV_STAT_SEND_FAILURES"

# 5. A symbol disappears from the version script.
copy removed
sed -i '/^[[:space:]]*kvev_publisher_stats_json;/d' "$tmp/removed/libkvevents/libkvevents.sym"
if grep -q kvev_publisher_stats_json "$tmp/removed/libkvevents/libkvevents.sym"; then
  echo "Bail out! could not remove kvev_publisher_stats_json from the version script copy"
  exit 1
fi
expect removed fail "kvev_publisher_stats_json no longer exported"

[ "$failures" -eq 0 ]
