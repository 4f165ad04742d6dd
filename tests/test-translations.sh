#!/bin/sh
# test-translations.sh: a tool speaks Simplified Chinese from both text
# domains, its own messages from kvevents-tools (po-tools/) and what the
# library tells it, a GError or the option group's help, from kvevents1
# (po/).
#
# make check runs the build tree's kvevents-pub with KVEVENTS_LOCALEDIR
# at a locale tree made of the catalogues just built, both of them and
# then each alone: a message must come from its own domain.  make
# installcheck and the autopkgtest run an installed kvevents-pub
# (KVEV_PUB) on the catalogues where make install or the packages put
# them, found by the tool for its domain and by the library for its own.
# A staged installation (DESTDIR) cannot be found by the programs
# themselves, so there KVEVENTS_LOCALEDIR and LD_LIBRARY_PATH point into
# it.
#
# Exits 1 when a check failed, for the installed runs; make check reads
# the TAP.
#
# SPDX-License-Identifier: Apache-2.0

top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
PUB=${KVEV_PUB:-$top_builddir/tools/kvevents-pub}
installed=no
test -n "${KVEV_PUB:-}" && installed=yes

dir=$(mktemp -d "${TMPDIR:-/tmp}/test-translations.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT

if test $installed = yes; then TOTAL=5; else TOTAL=9; fi
echo "1..$TOTAL"
. "$top_srcdir/tests/tap.sh"

skip_all () {
  while test "$n" -lt "$TOTAL"; do skip "$1"; done
  exit 0
}

# LANGUAGE counts only in a locale other than C, and the messages are
# UTF-8: C.UTF-8 is both, and glibc has it built in.
if command -v locale >/dev/null && ! locale -a 2>/dev/null | grep -qix 'c\.utf-\{0,1\}8'; then
  skip_all "no C.UTF-8 locale"
fi

# The translations of the messages the checks provoke, as the catalogues
# have them: a tool's own message and option, and the library's.
tool_message='未知命令“bogus”'                 # unknown command "%s"
tool_option='输出版本信息并退出'                # Print the version and exit
library_message='“maybe”不是 enable_kv_events 的有效值'  # Invalid value "%s" for %s: ...
library_group='显示 KV 事件发布者选项'          # Show KV event publisher options

# pub NAME ARGS...: kvevents-pub in zh_CN reads a line with a command that
# does not exist; its output in $dir/NAME.out and $dir/NAME.err.
pub () {
  name=$1
  shift
  printf 'bogus\n' | LC_ALL=C.UTF-8 LANGUAGE=zh_CN "$PUB" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
}

# both FILE TEXT FILE TEXT: each file has its text.
both () { contains "$1" "$2" && contains "$3" "$4"; }

# speaks NAME: kvevents-pub says a tool's message, a library's message and
# its --help, each into $dir/NAME-*.
speaks () {
  pub "$1-input"
  pub "$1-flag" --enable-kv-events=maybe
  pub "$1-help" --help
}

if test $installed = no; then
  mos="$top_srcdir/po/zh_CN.gmo $top_srcdir/po-tools/zh_CN.gmo"
  for mo in $mos; do
    test -f "$mo" || skip_all "no $mo (configured without NLS)"
  done
  : "${GETTEXT_PACKAGE:?}" "${KVT_GETTEXT_PACKAGE:?}"
  # catalogue TREE PODIR DOMAIN: zh_CN's catalogue from PODIR as DOMAIN's
  # in the locale tree $dir/TREE.
  catalogue () {
    mkdir -p "$dir/$1/zh_CN/LC_MESSAGES"
    cp "$top_srcdir/$2/zh_CN.gmo" "$dir/$1/zh_CN/LC_MESSAGES/$3.mo"
  }
  catalogue both po "$GETTEXT_PACKAGE"
  catalogue both po-tools "$KVT_GETTEXT_PACKAGE"
  catalogue tools po-tools "$KVT_GETTEXT_PACKAGE"
  catalogue library po "$GETTEXT_PACKAGE"
  KVEVENTS_LOCALEDIR=$dir/both
  export KVEVENTS_LOCALEDIR
elif test -z "${DESTDIR:-}"; then
  unset KVEVENTS_LOCALEDIR
else
  KVEVENTS_LOCALEDIR=$DESTDIR${localedir:?}
  LD_LIBRARY_PATH=$DESTDIR${libdir:?}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export KVEVENTS_LOCALEDIR LD_LIBRARY_PATH
fi

speaks both
check "a tool's own message is translated (kvevents-tools)" contains "$dir/both-input.err" "$tool_message"
check "a library GError through the tool is translated (the library's domain)" \
  contains "$dir/both-flag.err" "$library_message"
check "--help translates the tool's options (kvevents-tools)" contains "$dir/both-help.out" "$tool_option"
check "--help translates the library's option group (the library's domain)" \
  contains "$dir/both-help.out" "$library_group"

if test $installed = no; then
  # Each catalogue alone: the other domain's messages stay English.
  KVEVENTS_LOCALEDIR=$dir/tools
  speaks tools
  check "with the tools' catalogue alone, the tool's message is translated and the library's is not" \
    both "$dir/tools-input.err" "$tool_message" \
    "$dir/tools-flag.err" 'Invalid value "maybe" for enable_kv_events'
  check "with the tools' catalogue alone, --help translates the tool's options only" \
    both "$dir/tools-help.out" "$tool_option" "$dir/tools-help.out" 'Show KV event publisher options'
  KVEVENTS_LOCALEDIR=$dir/library
  speaks library
  check "with the library's catalogue alone, the library's message is translated and the tool's is not" \
    both "$dir/library-flag.err" "$library_message" \
    "$dir/library-input.err" 'unknown command "bogus"'
  check "with the library's catalogue alone, --help translates the library's group only" \
    both "$dir/library-help.out" "$library_group" "$dir/library-help.out" 'Print the version and exit'
fi

# A KVEVENTS_LOCALEDIR that is no directory is said, naming it (in
# English or, from the installed catalogue, in Chinese).
KVEVENTS_LOCALEDIR=$dir/nowhere
export KVEVENTS_LOCALEDIR
pub nowhere
check "a KVEVENTS_LOCALEDIR that is not a directory is reported" \
  both "$dir/nowhere.err" KVEVENTS_LOCALEDIR "$dir/nowhere.err" "$dir/nowhere"

test "$n" = "$TOTAL" || echo "# planned $TOTAL tests, ran $n"
test "$failures" = 0
