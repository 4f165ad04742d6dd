#!/bin/sh
# make installcheck: build programs against the *installed* libkvevents
# using nothing but the installed kvevents.pc, then run them on the
# installed shared library.  This is what a master's build does, so it
# proves the .pc, the installed headers and the soname link together.
#
#   installcheck.sh CONSUMER.c EXAMPLE.c...
#
# CONSUMER.c is tests/installcheck-consumer.c, which checks what the
# library does; EXAMPLE.c... are the example master's sources
# (examples/mini-master.c examples/store.c), built the way its opening
# comment tells a reader to build it, and run disabled and on ipc://.
# KVEV_MASTER_CPP, when set, is examples/master.cpp, built with $CXX as
# strictly as a C++ master's build would and run on ipc://.
# cmake/installcheck.sh builds them with CMake's find_package instead.
#
# Environment (from make): CC CXX KVEV_MASTER_CPP PKG_CONFIG DESTDIR prefix
# exec_prefix libdir includedir.  make distcheck runs this with a
# temporary prefix; an installation staged with DESTDIR works too.
set -eu

consumer_src=$1
shift
CC=${CC:-cc}
CXX=${CXX:-c++}
KVEV_MASTER_CPP=${KVEV_MASTER_CPP:-}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
DESTDIR=${DESTDIR:-}
: "${libdir:?}" "${includedir:?}" "${prefix:?}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvev-installcheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

pcdir=$DESTDIR$libdir/pkgconfig
if [ ! -f "$pcdir/kvevents.pc" ]; then
  echo "installcheck: $pcdir/kvevents.pc is not installed; run make install first" >&2
  exit 1
fi
# Under DESTDIR the installed kvevents.pc still names the final prefix.
# Point a copy at the staged tree, rewriting only kvevents' own absolute
# directories: PKG_CONFIG_SYSROOT_DIR or --define-variable would move
# GLib's paths as well.
if [ -n "$DESTDIR" ]; then
  mkdir "$tmp/pc"
  sed -e "s#^\\(prefix\\|exec_prefix\\|libdir\\|includedir\\)=/#\\1=$DESTDIR/#" \
    "$pcdir/kvevents.pc" >"$tmp/pc/kvevents.pc"
  pcdir=$tmp/pc
fi

# Only the installed .pc: no -I into the source or build tree.
flags=$(PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
  "$PKG_CONFIG" --cflags --libs kvevents) || {
  echo "installcheck: pkg-config --cflags --libs kvevents failed" >&2
  exit 1
}
echo "installcheck: pkg-config --cflags --libs kvevents: $flags"
case " $flags " in
  *" -I$DESTDIR$includedir "* | *" -L$DESTDIR$libdir "*) ;;
  *)
    # pkg-config omits the system directories (/usr/include, /usr/lib):
    # then the installed files must be exactly there.
    [ -z "$DESTDIR" ] || { echo "installcheck: the flags do not point into DESTDIR" >&2; exit 1; }
    ;;
esac

export LD_LIBRARY_PATH="$DESTDIR$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# compile NAME COMPILER SOURCE...: link a program against the installed
# library and make sure it would load the installed libkvevents.so.1.
compile () {
  name=$1
  compiler=$2
  shift 2
  # shellcheck disable=SC2086 # the compiler's words, pkg-config's word list
  $compiler -Wall -o "$tmp/$name" "$@" $flags
  loaded=$(ldd "$tmp/$name" 2>/dev/null | sed -n 's/^[[:space:]]*libkvevents\.so\.1 => \([^ ]*\).*/\1/p')
  case $loaded in
    "$DESTDIR$libdir"/*) echo "installcheck: $name loads $loaded" ;;
    *) echo "installcheck: $name would load '$loaded', not the installed library" >&2; return 1 ;;
  esac
}

compile consumer "$CC" "$consumer_src"
"$tmp/consumer"                 # a disabled publisher: no socket at all
mkdir "$tmp/run"
"$tmp/consumer" "$tmp/run"      # publishing on ipc:// in a private directory

# The example master, disabled and then publishing.  Its last line is the
# publisher's statistics: with a transport, every event it queued went
# out and none was refused.
compile mini-master "$CC" "$@"
"$tmp/mini-master" >"$tmp/disabled.json"
grep -q '"enabled": false' "$tmp/disabled.json" || {
  echo "installcheck: mini-master without --enable-kv-events: $(cat "$tmp/disabled.json")" >&2
  exit 1
}
"$tmp/mini-master" --enable-kv-events --kv-events-backend-id=installcheck \
  --kv-events-bind-endpoint="ipc://$tmp/run/mini-master.sock" >"$tmp/enabled.json"
echo "installcheck: mini-master: $(cat "$tmp/enabled.json")"
if grep -q '"enabled": true' "$tmp/enabled.json"; then
  enqueued=$(sed -n 's/.*"enqueued_events": \([0-9]*\).*/\1/p' "$tmp/enabled.json")
  published=$(sed -n 's/.*"published_events": \([0-9]*\).*/\1/p' "$tmp/enabled.json")
  if [ "${enqueued:-0}" -eq 0 ] || [ "$enqueued" != "$published" ] ||
    ! grep -q '"rejected_events": 0,' "$tmp/enabled.json"; then
    echo "installcheck: mini-master did not publish every event it queued" >&2
    exit 1
  fi
fi

if [ -n "$KVEV_MASTER_CPP" ]; then
  compile master "$CXX -std=c++17 -Wextra -pedantic -Werror" "$KVEV_MASTER_CPP"
  "$tmp/master" "ipc://$tmp/run/master.sock" >"$tmp/master.json" || {
    echo "installcheck: master did not publish every event it queued: $(cat "$tmp/master.json")" >&2
    exit 1
  }
  echo "installcheck: master: $(cat "$tmp/master.json")"
fi

echo "installcheck: ok"
