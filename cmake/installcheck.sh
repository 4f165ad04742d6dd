#!/bin/sh
# make installcheck: cmake/consumer/, a master's CMake build, against the
# *installed* libkvevents: find_package (kvevents CONFIG REQUIRED) from
# CMAKE_PREFIX_PATH alone, tests/installcheck-consumer.c and the C++
# example linked to kvevents::kvevents, run on the installed library.
# abi/installcheck.sh builds the same programs with pkg-config.
#
#   installcheck.sh SRCDIR
#
# Environment (from make): CC CXX CMAKE DESTDIR prefix libdir
# KVEV_HAVE_CXX17 KVEV_HAVE_ZMQ KVEV_CMAKE_RELOCATABLE.  make distcheck
# runs this with a temporary prefix; an installation staged with DESTDIR
# is found too, since the package finds its prefix from where it is.
set -eu

srcdir=$(cd "$1" && pwd)
CMAKE=${CMAKE:-}
DESTDIR=${DESTDIR:-}
: "${prefix:?}" "${libdir:?}"
if [ -z "$CMAKE" ]; then
  echo "installcheck: SKIP the CMake consumer: configure found no cmake"
  exit 0
fi
if [ -n "$DESTDIR" ] && [ "${KVEV_CMAKE_RELOCATABLE:-no}" != yes ]; then
  echo "installcheck: SKIP the CMake consumer: libdir or includedir is outside the prefix," \
    "so its paths are the final ones, not DESTDIR's"
  exit 0
fi
cmakedir=$DESTDIR$libdir/cmake/kvevents
if [ ! -f "$cmakedir/kvevents-config.cmake" ]; then
  echo "installcheck: $cmakedir/kvevents-config.cmake is not installed; run make install first" >&2
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvev-installcheck-cmake.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cxx=OFF
[ "${KVEV_HAVE_CXX17:-0}" = 1 ] && cxx=ON
export CC CXX
export LD_LIBRARY_PATH="$DESTDIR$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# consumer BUILD PREFIX: configure and build cmake/consumer/ in BUILD
# with CMAKE_PREFIX_PATH=PREFIX; prints where find_package found the
# package.
consumer () {
  if ! { CMAKE_PREFIX_PATH=$2 "$CMAKE" -S "$srcdir/cmake/consumer" -B "$1" \
    -DKVEV_WITH_CXX=$cxx >"$1.log" 2>&1 && "$CMAKE" --build "$1" >>"$1.log" 2>&1; }; then
    cat "$1.log" >&2
    echo "installcheck: cmake/consumer does not build against $2" >&2
    return 1
  fi
  sed -n 's/^-- kvevents [0-9.]* in //p' "$1.log"
}

found=$(consumer "$tmp/build" "$DESTDIR$prefix")
if [ "$found" != "$cmakedir" ]; then
  echo "installcheck: find_package found kvevents in '$found', not in $cmakedir" >&2
  exit 1
fi
loaded=$(ldd "$tmp/build/consumer" 2>/dev/null |
  sed -n 's/^[[:space:]]*libkvevents\.so\.1 => \([^ ]*\).*/\1/p')
case $loaded in
  "$DESTDIR$libdir"/*) echo "installcheck: the CMake consumer loads $loaded" ;;
  *) echo "installcheck: the CMake consumer would load '$loaded', not the installed library" >&2; exit 1 ;;
esac
mkdir "$tmp/run"
"$tmp/build/consumer"
[ "${KVEV_HAVE_ZMQ:-0}" != 1 ] || "$tmp/build/consumer" "$tmp/run"
if [ $cxx = ON ]; then
  "$tmp/build/master" "ipc://$tmp/run/master.sock" >"$tmp/master.json" || {
    echo "installcheck: the CMake-built master did not publish every event it queued:" \
      "$(cat "$tmp/master.json")" >&2
    exit 1
  }
  echo "installcheck: the CMake-built master: $(cat "$tmp/master.json")"
fi

# The same installation reached through a link from another prefix, as
# Debian's /lib reaches /usr/lib: the way up from the link would miss the
# headers, so the package must keep the prefix it was installed in.
rel=${libdir#"$prefix"/}
if [ -z "$DESTDIR" ] && [ "$rel" != "$libdir" ]; then
  mkdir -p "$tmp/alias/$rel"
  rmdir "$tmp/alias/$rel"
  ln -s "$libdir" "$tmp/alias/$rel"
  found=$(consumer "$tmp/build-alias" "$tmp/alias")
  case $found in
    "$tmp/alias/"*) echo "installcheck: found through a link from another prefix: $found" ;;
    *) echo "installcheck: the link from another prefix was not taken: '$found'" >&2; exit 1 ;;
  esac
fi

echo "installcheck: cmake: ok"
