#!/bin/sh
# Compare a built libkvevents with the committed ABI baseline, or (with
# --update) rewrite the baseline from it.
#
#   abi-check.sh BASELINE LIBRARY HEADERS_DIR [SUPPRESSIONS]
#   abi-check.sh --update BASELINE LIBRARY HEADERS_DIR
#
# Exit status: 0 compatible (only additions, or nothing), 1 an existing
# interface changed or went away, 2 the comparison itself failed, 77 it
# cannot run here (no libabigail, or another architecture than the
# baseline's).  make check-abi and abi/test-abi-break.sh both go through
# this script, so the break test proves the very decision check-abi makes.
set -eu

ABIDW=${ABIDW:-abidw}
ABIDIFF=${ABIDIFF:-abidiff}

update=no
if [ "${1:-}" = --update ]; then
  update=yes
  shift
fi
if [ $# -lt 3 ]; then
  echo "usage: $0 [--update] BASELINE LIBRARY HEADERS_DIR [SUPPRESSIONS]" >&2
  exit 2
fi
baseline=$1 lib=$2 headers=$3 suppr=${4:-}

for tool in "$ABIDW" "$ABIDIFF"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "abi-check: $tool not found (Debian: apt-get install abigail-tools); skipping the ABI check"
    exit 77
  fi
done
if [ ! -f "$lib" ]; then
  echo "abi-check: $lib does not exist; build the library first" >&2
  exit 2
fi
# Without DWARF libabigail sees only symbol names and would call a changed
# signature compatible: refuse rather than pass.
if ! LC_ALL=C readelf -S --wide "$lib" 2>/dev/null | grep -q '[.]debug_info'; then
  echo "abi-check: $lib has no debug information; configure with CFLAGS containing -g" >&2
  exit 2
fi

# These options make the baseline hold the public interface only and stay
# byte-stable while the interface does not change: private types (those
# not defined under HEADERS_DIR, e.g. struct _KvevPublisher) are dropped,
# the functions the library merely calls (libzmq, GLib) are left out, and
# neither build directories nor source line numbers are recorded, so
# `git diff abi/` after make update-abi shows interface changes only.
dw_opts="--headers-dir $headers --drop-private-types --drop-undefined-syms \
--no-corpus-path --no-comp-dir-path --no-show-locs --type-id-style hash"

if [ $update = yes ]; then
  tmp=$baseline.tmp
  # shellcheck disable=SC2086 # dw_opts is a word list on purpose
  "$ABIDW" $dw_opts --out-file "$tmp" "$lib"
  # A translation unit is named as the compiler saw it: relative in a
  # build in the source tree, absolute in a VPATH build.  Keep the part
  # from libkvevents/ on, so the file does not depend on the build layout.
  sed "s|path='[^']*/\(libkvevents/[^'/]*\)'|path='\1'|" "$tmp" >"$tmp.2"
  mv "$tmp.2" "$baseline"
  rm -f "$tmp"
  echo "abi-check: wrote $baseline from $lib"
  echo "abi-check: commit it only in a release commit (see README, 'ABI')"
  exit 0
fi

if [ ! -f "$baseline" ]; then
  echo "abi-check: no baseline $baseline" >&2
  exit 2
fi

# The baseline describes one architecture (type sizes, calling
# conventions); on another one every pointer would look changed.
arch_of () {
  sed -n "1,3s/.*<abi-corpus[^>]* architecture='\\([^']*\\)'.*/\\1/p" "$1" | head -n 1
}
base_arch=$(arch_of "$baseline")
cur_abi=$(mktemp) || exit 2
report=$(mktemp) || exit 2
trap 'rm -f "$cur_abi" "$report"' EXIT
"$ABIDW" --no-corpus-path --drop-undefined-syms --out-file "$cur_abi" "$lib" ||
  { echo "abi-check: abidw cannot read $lib" >&2; exit 2; }
cur_arch=$(arch_of "$cur_abi")
if [ "$base_arch" != "$cur_arch" ]; then
  echo "abi-check: the baseline is for $base_arch, this build is $cur_arch; skipping"
  exit 77
fi

# Why no --headers-dir1/2 --drop-private-types here, although the
# baseline is made with them: with libabigail 2.2 (Debian 12)
#  - --headers-dir1 with --drop-private-types aborts reading an ABIXML
#    corpus (assertion in abg-reader.cc build_or_get_type_decl);
#  - the header filter counts GLib's typedefs and the base types as
#    private, so a parameter turning from gint64 into gint is filtered
#    out as a "private type change" (test-abi-break.sh case 3 catches it).
# The baseline already holds only public types, and a private struct
# behind an opaque pointer is declaration-only in it, so comparing the
# full new corpus against it reports exactly the public interface.
# --no-added-syms: new symbols (a new KVEVENTS_1.x node) are compatible;
# abidiff would otherwise set its ABI-change bit for them.
set -- --no-added-syms
if [ -n "$suppr" ] && [ -f "$suppr" ]; then
  set -- "$@" --suppressions "$suppr"
fi
rc=0
"$ABIDIFF" "$@" "$baseline" "$lib" >"$report" 2>&1 || rc=$?

# abidiff's status is a bit field: 1 error, 2 usage error, 4 ABI change,
# 8 incompatible ABI change (a removed symbol).
if [ $((rc & 3)) -ne 0 ]; then
  echo "abi-check: abidiff failed (status $rc):" >&2
  cat "$report" >&2
  exit 2
fi
if [ $((rc & 12)) -ne 0 ]; then
  if [ $((rc & 8)) -ne 0 ]; then
    echo "abi-check: INCOMPATIBLE: an interface of $(basename "$baseline") was removed (abidiff status $rc)"
  else
    echo "abi-check: INCOMPATIBLE: an existing interface changed (abidiff status $rc)"
  fi
  cat "$report"
  exit 1
fi
echo "abi-check: $lib is compatible with $(basename "$baseline")"
# Show what was added, for the reviewer of a new KVEVENTS_1.x node.
"$ABIDIFF" "$baseline" "$lib" >"$report" 2>&1 || true
if grep -q '^ *\[A\]' "$report"; then
  echo "abi-check: added (each must be in a new KVEVENTS_1.x node and in debian/libkvevents1.symbols):"
  grep '^ *\[A\]' "$report"
fi
exit 0
