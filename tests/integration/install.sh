# make install and make uninstall of the build under test, in a DESTDIR:
# the systemd unit goes to systemd's unit directory with the PREFIX's
# paths, passes systemd-analyze verify (where systemd is installed), and
# uninstall takes back everything but the operator's configuration. A
# packager's SYSCONFDIR (built apart: it is compiled in) is where the
# configuration goes, where gpufracd reads it and its drop-ins, and what
# the man pages installed say.
. "$(dirname "$0")/lib.sh"

# gfmake ARGS...: make in the build under test, with the variables the
# make running the tests was given (O, SANITIZE, CC...), not its jobs; so
# nothing is rebuilt. LIBDIR and LIBEXECDIR are compiled in: a PREFIX
# given here keeps the build's.
case ${MAKEFLAGS:-} in
*" -- "*) MAKEFLAGS="-- ${MAKEFLAGS#* -- }";;
*) MAKEFLAGS=;;
esac
export MAKEFLAGS
unset MAKELEVEL MFLAGS
gfmake() {
	make -C "$TOP" --no-print-directory O="$BUILD" "$@" \
	    >"$TMP/make.out" 2>&1 || { cat "$TMP/make.out"; return 1; }
}
UNITDIR=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null)
UNITDIR=${UNITDIR:-/lib/systemd/system}

D=$TMP/dest
check "make install into a DESTDIR" gfmake install DESTDIR="$D"
UNIT=$D$UNITDIR/gpufracd.service
check "puts the unit in systemd's unit directory ($UNITDIR)" test -f "$UNIT"
check_eq "naming the gpufracd it installed" \
	"$(grep '^Exec' "$UNIT" 2>/dev/null)" \
	"$(printf '%s\n' 'ExecStartPre=/usr/local/sbin/gpufracd -n' \
	    'ExecStart=/usr/local/sbin/gpufracd -f' \
	    'ExecReload=/bin/kill -HUP $MAINPID')"
check "which is there" test -x "$D/usr/local/sbin/gpufracd"

D2=$TMP/dest2
check "make install with another PREFIX" gfmake install DESTDIR="$D2" \
	PREFIX=/opt/gf LIBDIR=/usr/local/lib LIBEXECDIR=/usr/local/libexec
check_eq "the unit names that PREFIX's gpufracd" \
	"$(grep '^ExecStart=' "$D2$UNITDIR/gpufracd.service" 2>/dev/null)" \
	"ExecStart=/opt/gf/sbin/gpufracd -f"
check "which is there" test -x "$D2/opt/gf/sbin/gpufracd"
check "and SYSTEMDUNITDIR puts the unit elsewhere" gfmake install \
	DESTDIR="$TMP/dest3" SYSTEMDUNITDIR=/etc/systemd/system
check "there" test -f "$TMP/dest3/etc/systemd/system/gpufracd.service"

# systemd-analyze checks the unit's commands (as the unit installed with
# PREFIX=$D/usr/local would name them: where this gpufracd is) and its
# man pages.
if command -v systemd-analyze >/dev/null; then
	sed "s|=/usr/local/|=$D/usr/local/|" "$UNIT" >"$TMP/gpufracd.service"
	MANPATH=$D/usr/local/share/man systemd-analyze verify \
	    "$TMP/gpufracd.service" >"$TMP/verify" 2>&1
	check_eq "the unit passes systemd-analyze verify, saying nothing" \
		"$?:$(cat "$TMP/verify")" "0:"
else
	echo "# systemd-analyze verify skipped: systemd-analyze is not installed"
fi

check "make uninstall" gfmake uninstall DESTDIR="$D"
check "removes the unit" test ! -e "$UNIT"
check_eq "and everything else but the configuration" \
	"$(cd "$D" && find . -type f)" "./etc/gpufrac/gpufrac.conf"

# SYSCONFDIR: a build of its own in $TMP, since it is compiled in (the
# build under test stays as it is).
ETC=$TMP/sysconf
D4=$TMP/dest4
check "make install with SYSCONFDIR=$ETC, built apart" gfmake install \
	O="$TMP/build-sysconf" SYSCONFDIR="$ETC" DESTDIR="$D4"
check "puts the configuration there" test -f "$D4$ETC/gpufrac/gpufrac.conf"
GFD=$D4/usr/local/sbin/gpufracd
check_eq "gpufracd -h names it as the default" \
	"$("$GFD" -h | grep -c -- "-c file .*(default: $ETC/gpufrac/gpufrac.conf)")" 1
mkdir -p "$ETC/gpufrac/gpufrac.conf.d"
printf '[daemon]\nlog_level = loud\n' >"$ETC/gpufrac/gpufrac.conf"
check_eq "gpufracd -n without -c reads it" "$("$GFD" -n 2>&1)" \
	"$ETC/gpufrac/gpufrac.conf:2: bad level for 'log_level': 'loud' (expected error, warn, info or debug)"
printf '[daemon]\nlog_level = debug\n' >"$ETC/gpufrac/gpufrac.conf"
printf '[daemon]\nwait_timeout = soon\n' >"$ETC/gpufrac/gpufrac.conf.d/a.conf"
check_eq "and its drop-ins beside it" "$("$GFD" -n 2>&1)" \
	"$ETC/gpufrac/gpufrac.conf.d/a.conf:2: bad duration for 'wait_timeout': 'soon' (expected e.g. 30s, 500ms or 2m)"
rm "$ETC/gpufrac/gpufrac.conf.d/a.conf"
check_eq "a good one is OK" "$("$GFD" -n 2>&1)" "configuration OK"
for m in man5/gpufrac.conf.5 man8/gpufracd.8; do
	check_eq "$m names it where the tree's says /etc/gpufrac" \
		"$(grep -c "$ETC/gpufrac/gpufrac.conf" "$D4/usr/local/share/man/$m") $(grep -c /etc/gpufrac "$D4/usr/local/share/man/$m")" \
		"$(grep -c /etc/gpufrac/gpufrac.conf "$TOP/man/${m#*/}") 0"
done

finish
