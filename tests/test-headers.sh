#!/bin/sh
# The public header compiles alone as strict C99 and as C++, so any master
# can include it.
set -u
CC=${CC:-cc}
echo "1..2"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf '#include <kvevents/kvevents.h>\nint main (void) { return kvev_has_transport () ? 0 : 0; }\n' >"$tmp/t.c"
cp "$tmp/t.c" "$tmp/t.cc"
flags="-I$top_srcdir/include -I$top_builddir/include $GLIB_CFLAGS"
if $CC -std=c99 -pedantic -Wall -Wextra -Werror $flags -c "$tmp/t.c" -o "$tmp/t.o" 2>"$tmp/err"; then
  echo "ok 1 - kvevents.h compiles with -std=c99 -pedantic -Werror"
else
  echo "not ok 1 - kvevents.h fails -std=c99 -pedantic"; sed 's/^/# /' "$tmp/err"
fi
if command -v c++ >/dev/null 2>&1; then
  if c++ -std=c++11 -pedantic -Wall -Wextra -Werror $flags -c "$tmp/t.cc" -o "$tmp/t2.o" 2>"$tmp/err"; then
    echo "ok 2 - kvevents.h compiles as C++11"
  else
    echo "not ok 2 - kvevents.h fails as C++11"; sed 's/^/# /' "$tmp/err"
  fi
else
  echo "ok 2 # SKIP no C++ compiler"
fi
