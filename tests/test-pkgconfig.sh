#!/bin/sh
# A master's build sees GLib's flags and libkvevents' own, nothing more:
# the public headers never include zmq.h and no static archive ships, so
# libzmq and its dependencies (the -I of mit-krb5, pgm, libxml2) have no
# place in a master's compile and link lines.  Reads the build tree's
# kvevents.pc, which make install installs as it is.
set -u
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
: "${top_builddir:?}" "${libdir:?}" "${includedir:?}"
echo "1..3"
PKG_CONFIG_PATH=$top_builddir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH

if flags=$("$PKG_CONFIG" --cflags --libs kvevents 2>&1) &&
  case " $flags " in *" -lkvevents "*) true ;; *) false ;; esac; then
  echo "ok 1 - pkg-config --cflags --libs kvevents: $flags"
else
  echo "not ok 1 - pkg-config --cflags --libs kvevents: $flags"
fi

# pkg-config drops what it counts as system directories, so each of ours
# may be missing; nothing may be there that is neither GLib's nor ours.
glib=$("$PKG_CONFIG" --cflags --libs glib-2.0)
extra=
for word in $flags; do
  case " $glib -I$includedir -L$libdir -lkvevents " in
    *" $word "*) ;;
    *) extra="$extra $word" ;;
  esac
done
if [ -z "$extra" ]; then
  echo "ok 2 - only GLib's flags and -I/-L/-lkvevents"
else
  echo "not ok 2 - flags that are neither GLib's nor libkvevents':$extra"
fi

# pkgconf resolves Requires.private for --cflags too: anything there
# reaches every master's compile line.
private=$("$PKG_CONFIG" --print-requires-private kvevents 2>&1)
if [ -z "$private" ]; then
  echo "ok 3 - kvevents.pc requires nothing privately"
else
  echo "not ok 3 - kvevents.pc requires privately: $private"
fi
