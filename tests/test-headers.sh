#!/bin/sh
# The public header compiles alone as strict C99 and as C++, so any master
# can include it, and a C++ master can pass a set of tiers.
set -u
CC=${CC:-cc}
echo "1..9"
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

# KVEV_MEDIA_CPU | KVEV_MEDIA_DISK is an int in C++, which does not turn
# back into a KvevMedia by itself.
cat >"$tmp/media.cc" <<'EOF'
#include <kvevents/kvevents.h>

#if __cplusplus >= 201103L
static_assert ((KVEV_MEDIA_CPU | KVEV_MEDIA_DISK) == KVEV_MEDIA_ALL, "|");
static_assert ((KVEV_MEDIA_ALL & KVEV_MEDIA_DISK) == KVEV_MEDIA_DISK, "&");
static_assert ((KVEV_MEDIA_ALL ^ KVEV_MEDIA_CPU) == KVEV_MEDIA_DISK, "^");
static_assert (~KVEV_MEDIA_CPU == KVEV_MEDIA_DISK, "~ stays within the tiers");
static_assert (~KVEV_MEDIA_NONE == KVEV_MEDIA_ALL, "~ of none");
#endif

int
gained (KvevPublisher *publisher, KvevMedia before, KvevMedia after)
{
  KvevMedia both = KVEV_MEDIA_CPU | KVEV_MEDIA_DISK;

  kvev_publish_stored (publisher, "t", "k", -1, NULL, KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  kvev_publish_delta (publisher, NULL, "k", -1, NULL, before, after & ~KVEV_MEDIA_CPU);
  kvev_publish_removed (publisher, NULL, "k", -1, NULL, KVEV_MEDIA_ALL);
  both &= ~KVEV_MEDIA_DISK;
  both |= KVEV_MEDIA_DISK;
  both ^= KVEV_MEDIA_CPU;
  /* Still a constant expression, also in C++98. */
  static char seen[KVEV_MEDIA_ALL + 1];

  seen[after & KVEV_MEDIA_ALL] = 1;
  return both == KVEV_MEDIA_DISK ? static_cast<int> (sizeof seen) : 0;
}
EOF
if command -v c++ >/dev/null 2>&1; then
  if c++ -std=c++11 -pedantic -Wall -Wextra -Werror $flags -c "$tmp/media.cc" \
    -o "$tmp/media.o" 2>"$tmp/err"; then
    echo "ok 3 - a set of tiers passes as a KvevMedia in C++11, and the operators stay within it"
  else
    echo "not ok 3 - a set of tiers fails in C++11"; sed 's/^/# /' "$tmp/err"
  fi
  # GLib's own headers are not -pedantic C++98.
  if c++ -std=c++98 -Wall -Wextra -Werror $flags -c "$tmp/media.cc" -o "$tmp/media98.o" 2>"$tmp/err"; then
    echo "ok 4 - a set of tiers passes as a KvevMedia in C++98"
  else
    echo "not ok 4 - a set of tiers fails in C++98"; sed 's/^/# /' "$tmp/err"
  fi
  # The README's tour is this program; a C++ master copies it.
  if c++ -x c++ -std=c++11 -Wall -Wextra -Werror $flags -c "$top_srcdir/tests/installcheck-consumer.c" \
    -o "$tmp/consumer.o" 2>"$tmp/err"; then
    echo "ok 5 - tests/installcheck-consumer.c compiles as C++"
  else
    echo "not ok 5 - tests/installcheck-consumer.c fails as C++"; sed 's/^/# /' "$tmp/err"
  fi
else
  echo "ok 3 # SKIP no C++ compiler"
  echo "ok 4 # SKIP no C++ compiler"
  echo "ok 5 # SKIP no C++ compiler"
fi

# A switch over a KvevMedia may name every value the type holds, the set
# of both tiers included, under -Wswitch (in -Wall), with each compiler
# that is installed.
cat >"$tmp/switch.c" <<'EOF'
#include <kvevents/kvevents.h>

int tiers (KvevMedia media);

int
tiers (KvevMedia media)
{
  switch (media)
    {
    case KVEV_MEDIA_NONE:
      return 0;
    case KVEV_MEDIA_CPU:
    case KVEV_MEDIA_DISK:
      return 1;
    case KVEV_MEDIA_ALL:
      return 2;
    }
  return -1;
}
EOF
cp "$tmp/switch.c" "$tmp/switch.cc"
for compiler in gcc clang; do
  if ! command -v $compiler >/dev/null 2>&1; then
    echo "ok # SKIP no $compiler"
  elif $compiler -std=c99 -pedantic -Wall -Wextra -Werror $flags -c "$tmp/switch.c" \
    -o "$tmp/switch.o" 2>"$tmp/err"; then
    echo "ok - case KVEV_MEDIA_ALL: compiles as C with $compiler -Wall -Wextra -Werror"
  else
    echo "not ok - case KVEV_MEDIA_ALL: fails as C with $compiler"; sed 's/^/# /' "$tmp/err"
  fi
done
for compiler in g++ clang++; do
  if ! command -v $compiler >/dev/null 2>&1; then
    echo "ok # SKIP no $compiler"
  elif $compiler -std=c++98 -Wall -Wextra -Werror $flags -c "$tmp/switch.cc" \
    -o "$tmp/switch98.o" 2>"$tmp/err" \
    && $compiler -std=c++11 -Wall -Wextra -Werror $flags -c "$tmp/switch.cc" \
      -o "$tmp/switch11.o" 2>"$tmp/err"; then
    echo "ok - case KVEV_MEDIA_ALL: compiles as C++98 and C++11 with $compiler -Wall -Wextra -Werror"
  else
    echo "not ok - case KVEV_MEDIA_ALL: fails as C++ with $compiler"; sed 's/^/# /' "$tmp/err"
  fi
done
