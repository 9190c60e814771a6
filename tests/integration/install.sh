# make install and make uninstall of the build under test, in a DESTDIR:
# the systemd unit goes to systemd's unit directory with the PREFIX's
# paths, passes systemd-analyze verify (where systemd is installed), and
# uninstall takes back everything but the operator's configuration. A
# packager's SYSCONFDIR (built apart: it is compiled in) is where the
# configuration goes, where gpufracd reads it and its drop-ins, and what
# the man pages installed say; with its LIBDIR, LIBEXECDIR and SPANKDIR,
# the docs installed (man pages, README) and the CDI spec name the shim,
# the hook and the plugin where they are.
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
check "the README in the doc directory" test -f "$D/usr/local/share/doc/gpufrac/README.md"
check "the Grafana dashboard" test -f "$D/usr/local/share/gpufrac/grafana/gpufrac.json"

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
# build under test stays as it is): a copy of the parts install needs,
# in which make recompiles only what compiles the paths in, and links.
ETC=$TMP/sysconf
D4=$TMP/dest4
B4=$TMP/build-sysconf
mkdir "$B4"
for part in .deps .build-flags .paths common shim daemon tools oci slurm; do
	[ ! -e "$BUILD/$part" ] || cp -a "$BUILD/$part" "$B4/"
done
check "make install with SYSCONFDIR=$ETC and a packager's LIBDIR, built apart" \
	gfmake -j"$(nproc)" install O="$B4" SYSCONFDIR="$ETC" DESTDIR="$D4" \
	LIBDIR=/usr/lib/gf-arch LIBEXECDIR=/usr/libexec \
	SPANKDIR=/usr/lib/gf-arch/slurm-wlm
check "puts the configuration there" test -f "$D4$ETC/gpufrac/gpufrac.conf"
# (the Slurm plugin's where it is built)
check_eq "having recompiled only the files that compile the paths in" \
	"$(grep -o ' -c [^ ]*\.c' "$TMP/make.out" | sort | tr '\n' ' ')" \
	" -c daemon/gpufracd.c $([ ! -e "$BUILD/slurm/opts.o" ] ||
	echo " -c slurm/opts.c ") -c tools/ctl_cdi.c "
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

# The docs installed name the shim, the hook and the plugin where that
# build put them, and no /usr/local path of the tree's.
M=$D4/usr/local/share/man
check_eq "libgpufrac(7) and the README name the shim in LIBDIR" \
	"$(grep -c /usr/lib/gf-arch/libgpufrac.so "$M/man7/libgpufrac.7") $(grep -c 'LD_PRELOAD=/usr/lib/gf-arch/libgpufrac.so' "$D4/usr/local/share/doc/gpufrac/README.md")" \
	"$(grep -c /usr/local/lib/libgpufrac.so "$TOP/man/libgpufrac.7") $(grep -c 'LD_PRELOAD=/usr/local/lib/libgpufrac.so' "$TOP/README.md")"
check_eq "gpufrac-oci-hook(8) names the hook in LIBEXECDIR" \
	"$(grep -c /usr/libexec/gpufrac-oci-hook "$M/man8/gpufrac-oci-hook.8")" \
	"$(grep -c /usr/local/libexec/gpufrac-oci-hook "$TOP/man/gpufrac-oci-hook.8")"
check_eq "gpufrac_spank(8) names the plugin in SPANKDIR" \
	"$(grep -c /usr/lib/gf-arch/slurm-wlm/gpufrac_spank.so "$M/man8/gpufrac_spank.8")" \
	"$(grep -c /usr/local/lib/slurm/gpufrac_spank.so "$TOP/man/gpufrac_spank.8")"
check_eq "none names /usr/local/lib or /usr/local/libexec" \
	"$(cat "$M"/man*/* "$D4/usr/local/share/doc/gpufrac/README.md" | grep -c '/usr/local/lib')" 0
check_eq "nor does the CDI spec" "$(grep -c /usr/local "$D4/etc/cdi/gpufrac.json")" 0
if [ -n "$(find "$BUILD" -name gpufrac_spank.so)" ]; then
	check "the plugin is in SPANKDIR" \
		test -f "$D4/usr/lib/gf-arch/slurm-wlm/gpufrac_spank.so"
fi

finish
