#!/bin/sh
# The CMake package as a master's build meets it: the build's
# kvevents-config.cmake and version file, headers and library copied
# under a temporary prefix where make install would put them, found by
# find_package from CMAKE_PREFIX_PATH alone.  make installcheck does the
# same on the installed files (cmake/installcheck.sh).
set -u
: "${top_srcdir:?}" "${top_builddir:?}" "${prefix:?}" "${libdir:?}" "${includedir:?}"
: "${PACKAGE_VERSION:?}"
CMAKE=${CMAKE:-cmake}
if ! command -v "$CMAKE" >/dev/null 2>&1; then
  echo "1..0 # SKIP no cmake"
  exit 0
fi
rel_lib=${libdir#"$prefix"/}
rel_inc=${includedir#"$prefix"/}
if [ "$rel_lib" = "$libdir" ] || [ "$rel_inc" = "$includedir" ]; then
  echo "1..0 # SKIP libdir or includedir is outside the prefix: only the installed files are right"
  exit 0
fi
echo "1..6"
# The build's compilers (CC, CXX) and flags: a sanitized library needs
# its runtime in every program that links it.
CFLAGS=${KVEV_CFLAGS:-}
CXXFLAGS=${KVEV_CXXFLAGS:-}
LDFLAGS=${KVEV_LDFLAGS:-}
export CFLAGS CXXFLAGS LDFLAGS
srcdir=$(cd "$top_srcdir" && pwd)
builddir=$(cd "$top_builddir" && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

root=$tmp/prefix
cmakedir=$root/$rel_lib/cmake/kvevents
mkdir -p "$cmakedir" "$root/$rel_inc/kvevents"
if cp "$builddir/cmake/kvevents-config.cmake" "$builddir/cmake/kvevents-config-version.cmake" \
  "$cmakedir/" 2>"$tmp/err"; then
  echo "ok 1 - configure wrote kvevents-config.cmake and kvevents-config-version.cmake"
else
  echo "not ok 1 - no CMake package in the build"; sed 's/^/# /' "$tmp/err"
  echo "Bail out! nothing to find"
  exit 1
fi
cp "$srcdir"/include/kvevents/*.h "$root/$rel_inc/kvevents/"
cp "$builddir/include/kvevents/kvevents-version.h" "$root/$rel_inc/kvevents/"
cp -P "$builddir"/libkvevents/.libs/libkvevents.so* "$root/$rel_lib/"

# One find_package a version request, in a project without a compiler;
# SameMajorVersion: any later version of the same major one.
major=${PACKAGE_VERSION%%.*}
minor=${PACKAGE_VERSION#*.}
minor=${minor%%.*}
mkdir "$tmp/versions"
{
  cat <<EOF2
cmake_minimum_required (VERSION 3.19)
project (versions LANGUAGES NONE)
function (try label)
  unset (kvevents_DIR CACHE)
  find_package (kvevents \${ARGN} CONFIG QUIET PATHS "$cmakedir" NO_DEFAULT_PATH)
  if (kvevents_FOUND)
    message (STATUS "try \${label}: found")
  else ()
    message (STATUS "try \${label}: not found")
  endif ()
endfunction ()
function (try_width)
  set (CMAKE_SIZEOF_VOID_P 2)
  try (width)
endfunction ()
EOF2
  while read -r expect request; do
    echo "try (\"$request\" $request)"
    case $expect in
      found) echo "try $request: found" ;;
      *) echo "try $request: not found" ;;
    esac >>"$tmp/versions/expected"
  done <<EOF2
found
found $major
found $major.0
found $major.$minor
found $PACKAGE_VERSION EXACT
not $major.$minor EXACT
not $major.$((minor + 1))
not $((major + 1))
not $((major + 1)).0
not $((major - 1))
not $((major - 1)).9
found $major.0...<$((major + 1))
found $major.0...$PACKAGE_VERSION
not $major.0...<$PACKAGE_VERSION
not $major.0...$((major + 1)).0
not $major.0...<$((major + 2))
not $((major - 1)).0...<$((major + 1))
EOF2
  echo "try_width ()"
} >"$tmp/versions/CMakeLists.txt"
echo "try width: not found" >>"$tmp/versions/expected"
"$CMAKE" -S "$tmp/versions" -B "$tmp/versions/build" >"$tmp/versions.log" 2>&1
sed -n 's/^-- \(try .*\)$/\1/p' "$tmp/versions.log" >"$tmp/versions/got"
if diff "$tmp/versions/expected" "$tmp/versions/got" >"$tmp/diff"; then
  echo "ok 2 - $PACKAGE_VERSION is taken for what SameMajorVersion allows, and nothing else"
else
  echo "not ok 2 - version requests, expected and found:"; sed 's/^/# /' "$tmp/diff" "$tmp/versions.log"
fi

# The target, pointing into the prefix the files were found in.
mkdir "$tmp/target"
cat >"$tmp/target/CMakeLists.txt" <<EOF2
cmake_minimum_required (VERSION 3.13)
project (target LANGUAGES C)
find_package (kvevents CONFIG REQUIRED)
foreach (p IMPORTED_LOCATION IMPORTED_SONAME INTERFACE_INCLUDE_DIRECTORIES INTERFACE_LINK_LIBRARIES)
  get_target_property (v kvevents::kvevents \${p})
  message (STATUS "\${p}=\${v}")
endforeach ()
get_target_property (v PkgConfig::_kvevents_glib INTERFACE_INCLUDE_DIRECTORIES)
message (STATUS "glib=\${v}")
EOF2
CMAKE_PREFIX_PATH=$root "$CMAKE" -S "$tmp/target" -B "$tmp/target/build" >"$tmp/target.log" 2>&1
got() { sed -n "s/^-- $1=//p" "$tmp/target.log"; }
if [ "$(got IMPORTED_LOCATION)" = "$root/$rel_lib/libkvevents.so" ] &&
  [ "$(got IMPORTED_SONAME)" = "libkvevents.so.1" ] &&
  [ "$(got INTERFACE_INCLUDE_DIRECTORIES)" = "$root/$rel_inc" ] &&
  [ "$(got INTERFACE_LINK_LIBRARIES)" = "PkgConfig::_kvevents_glib" ] &&
  case ";$(got glib);" in *"/glib-2.0;"*) true ;; *) false ;; esac; then
  echo "ok 3 - kvevents::kvevents: the library and headers under the prefix found, GLib linked"
else
  echo "not ok 3 - kvevents::kvevents found under $root:"; sed 's/^/# /' "$tmp/target.log"
fi

# The master's build of cmake/consumer/, run on the library it found;
# the C++ example with it where make check builds that too.
cxx=OFF
[ "${KVEV_HAVE_CXX17:-0}" = 1 ] && cxx=ON
if CMAKE_PREFIX_PATH=$root "$CMAKE" -S "$srcdir/cmake/consumer" -B "$tmp/consumer" \
  -DKVEV_WITH_CXX=$cxx >"$tmp/consumer.log" 2>&1 &&
  "$CMAKE" --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1; then
  echo "ok 4 - cmake/consumer builds with find_package and kvevents::kvevents (C++: $cxx)"
else
  echo "not ok 4 - cmake/consumer does not build"; sed 's/^/# /' "$tmp/consumer.log"
fi
loaded=$(ldd "$tmp/consumer/consumer" 2>/dev/null |
  sed -n 's/^[[:space:]]*libkvevents\.so\.1 => \([^ ]*\).*/\1/p')
mkdir "$tmp/run"
if case $loaded in "$root/$rel_lib/"*) true ;; *) false ;; esac &&
  "$tmp/consumer/consumer" >"$tmp/run.log" 2>&1 &&
  { [ "${KVEV_HAVE_ZMQ:-0}" != 1 ] || "$tmp/consumer/consumer" "$tmp/run" >>"$tmp/run.log" 2>&1; } &&
  { [ $cxx = OFF ] || "$tmp/consumer/master" "ipc://$tmp/run/master.sock" >>"$tmp/run.log" 2>&1; }; then
  echo "ok 5 - the consumer (and master) run on $loaded"
else
  echo "not ok 5 - the consumer (and master), loading '$loaded'"; sed 's/^/# /' "$tmp/run.log"
fi

# A half-removed installation is not found, and says what is missing
# (in lines that CMake wraps where the path's length puts the breaks).
rm "$root/$rel_lib/libkvevents.so"
if CMAKE_PREFIX_PATH=$root "$CMAKE" -S "$srcdir/cmake/consumer" -B "$tmp/broken" \
  >"$tmp/broken.log" 2>&1; then
  echo "not ok 6 - found without libkvevents.so"
elif tr -s ' \n' '  ' <"$tmp/broken.log" | grep -q "libkvevents.so does not exist"; then
  echo "ok 6 - without libkvevents.so find_package fails and names it"
else
  echo "not ok 6 - without libkvevents.so:"; sed 's/^/# /' "$tmp/broken.log"
fi
