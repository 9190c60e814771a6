# A fresh machine in two commands: make builds or tests nothing before the
# Debian packages its goals need are there. As root it installs the
# missing ones (apt-get, as `make deps` does) and goes on; as another
# user it stops with one line naming them and the command, before any
# compiler runs; once a list was found installed, dpkg is not asked again.
# Packages go missing by name (gf-no-such-package is in no archive);
# apt-get, id and the compiler are stand-ins that say they were called.
. "$(dirname "$0")/lib.sh"
MISSING=gf-no-such-package
B=$TMP/b

mkdir "$TMP/bin"
# shellcheck disable=SC2016
fake() { printf '#!/bin/sh\necho "$*" >>%s/%s.log\n%s\n' "$TMP" "$1" "$2" \
	>"$TMP/bin/$1"; chmod +x "$TMP/bin/$1"; }
fake id 'echo "$FAKE_UID"'
fake apt-get 'exit 0'
fake cc 'exit 1'				# reached: the build went on
fake dpkg-query "exec $(command -v dpkg-query) \"\$@\""
command -v dpkg-query >/dev/null || skip "no dpkg-query: not a Debian system"

# gfmake UID ARGS...: make in a build tree of its own, with the stand-ins,
# as user UID; its stderr in $TMP/err. The make running the tests does not
# pass on its goals, variables or jobs.
gfmake() {
	FAKE_UID=$1; shift
	rm -f "$TMP"/cc.log "$TMP"/apt-get.log "$TMP"/dpkg-query.log
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS FAKE_UID="$FAKE_UID" \
	    PATH="$TMP/bin:$PATH" make -C "$TOP" --no-print-directory O="$B" \
	    CC="$TMP/bin/cc" "$@" >"$TMP/out" 2>"$TMP/err"
}
called() { test -s "$TMP/$1.log"; }
# what make said, but for its own "make: *** [...] Error 1"
said() { grep -v '^make: \*\*\*' "$TMP/err"; }
LINE="gpufrac: missing Debian packages: $MISSING; run as root: make deps, or apt-get install --no-install-recommends $MISSING"

# --- another user --------------------------------------------------------------
gfmake 1000 BUILD_DEPS="gcc $MISSING make" all
check "as another user, make stops when a build package is missing" test $? -ne 0
check_eq "with one line naming it and the command" \
	"$(said)" "$LINE"
check "before any compiler ran" test ! -e "$TMP/cc.log"
check "and without apt-get" test ! -e "$TMP/apt-get.log"
check "nor a stamp saying it is there" test ! -e "$B/.deps"

gfmake 1000 DEPS="gcc $MISSING" deps
check "make deps says the same" test $? -ne 0
check_eq "in the same line" "$(said)" "$LINE"

gfmake 1000 BUILD_DEPS=gcc DEPS="gcc $MISSING" all
check "a package only the tests need does not stop a build" called cc
gfmake 1000 BUILD_DEPS=gcc DEPS="gcc $MISSING" check
check "but it stops make check" test $? -ne 0
check_eq "with the line" "$(said)" "$LINE"
check "before any compiler ran" test ! -e "$TMP/cc.log"

# --- root ------------------------------------------------------------------------
rm -rf "$B"
gfmake 0 BUILD_DEPS="gcc $MISSING" all
check_eq "as root, make installs what is missing as make deps does" \
	"$(cat "$TMP/apt-get.log" 2>/dev/null)" \
	"$(printf 'update -q\ninstall -y -q --no-install-recommends %s' "$MISSING")"
check "then goes on building" called cc
check_eq "the stamp keeps the list" "$(cat "$B/.deps")" "gcc $MISSING"
gfmake 0 BUILD_DEPS="gcc $MISSING" all
check "the next make asks neither apt" test ! -e "$TMP/apt-get.log"
check "nor dpkg" test ! -e "$TMP/dpkg-query.log"
check "and builds" called cc

rm -rf "$B"
gfmake 0 BUILD_DEPS="gcc make" all
check "with nothing missing, dpkg is asked" called dpkg-query
check "and apt is not, even as root" test ! -e "$TMP/apt-get.log"

finish
