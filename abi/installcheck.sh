#!/bin/sh
# make installcheck: build programs against the *installed* libkvevents
# using nothing but the installed kvevents.pc, then run them on the
# installed shared library.  This is what a master's build does, so it
# proves the .pc, the installed headers and the soname link together.
#
#   installcheck.sh CONSUMER.c
#
# CONSUMER.c is examples/consumer.c.  (examples/mini-master.c is not used: it
# includes config.h and the tools' helpers, so it cannot be built from
# installed files alone.)
#
# Environment (from make): CC PKG_CONFIG DESTDIR prefix exec_prefix libdir
# includedir.  make distcheck runs this with a temporary prefix; an
# installation staged with DESTDIR works too.
set -eu

consumer_src=$1
CC=${CC:-cc}
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

# compile NAME SOURCE: link a program against the installed library and
# make sure it would load the installed libkvevents.so.1.
compile () {
  # shellcheck disable=SC2086 # $flags is pkg-config's word list
  $CC -Wall -o "$tmp/$1" "$2" $flags
  loaded=$(ldd "$tmp/$1" 2>/dev/null | sed -n 's/^[[:space:]]*libkvevents\.so\.1 => \([^ ]*\).*/\1/p')
  case $loaded in
    "$DESTDIR$libdir"/*) echo "installcheck: $1 loads $loaded" ;;
    *) echo "installcheck: $1 would load '$loaded', not the installed library" >&2; return 1 ;;
  esac
}

compile consumer "$consumer_src"
"$tmp/consumer"                 # a disabled publisher: no socket at all
mkdir "$tmp/run"
"$tmp/consumer" "$tmp/run"      # publishing on ipc:// in a private directory

echo "installcheck: ok"
