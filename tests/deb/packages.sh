# The Debian packages `make deb` built (in $DEB_DIR), as a node gets them
# (`make check-deb` runs this, as root): each holds what `make install`
# put in the package build; dpkg installs gpufrac, upgrades it from the
# build before, removes and purges it, with its maintainer scripts, in a
# throwaway root: an overlay of this machine's / (its packages, so the
# dependencies are there) in a private mount namespace, where the host
# sees nothing. systemd does not run there: tests/deb/systemctl stands in,
# logging what the scripts ask and running the unit's commands as
# installed. There the installed daemon answers, a program under the
# installed shim is held to its limit, and the unit passes systemd-analyze
# verify.

# The mounts need root and a mount namespace of our own: run again in
# one, before lib.sh makes anything to clean up.
if [ -z "${GPUFRAC_DEB_NS:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "skipped: the package test needs root"; exit 77; }
	GPUFRAC_DEB_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../integration/lib.sh"
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
ARCH=$(dpkg-architecture -qDEB_HOST_ARCH)
VERSION=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)
DEB=$DEB_DIR/gpufrac_${VERSION}_$ARCH.deb
DEB_SLURM=$DEB_DIR/gpufrac-slurm_${VERSION}_$ARCH.deb
INSTALLED=$DEB_DIR/gpufrac-$VERSION/debian/tmp

# What `make install` put (files and links), each named as the packages
# name it: man pages and large docs compressed by dh_compress.
installed_list() {
	(cd "$INSTALLED" && find . ! -type d) | sed 's|^\.||' | sort
}
packaged_list() {
	for d in "$DEB" "$DEB_SLURM"; do dpkg-deb --fsys-tarfile "$d" | tar -t; done |
	    sed -e 's|^\.||' -e '/\/$/d' -e 's|\.gz$||' | sort -u
}
check "make install put files in the package build" test -d "$INSTALLED/usr"
installed_list >"$TMP/installed"
packaged_list >"$TMP/packaged"
check_eq "the packages hold all of them" \
	"$(comm -23 "$TMP/installed" "$TMP/packaged")" ""
check "the shim is in the multiarch directory" \
	grep -qx "/usr/lib/$MA/libgpufrac.so" "$TMP/packaged"
check "the plugin where Debian's Slurm looks for plugins" \
	grep -qx "/usr/lib/$MA/slurm-wlm/gpufrac_spank.so" "$TMP/packaged"
check_eq "gpufrac-slurm depends on gpufrac and the Slurm it was built against" \
	"$(dpkg-deb -f "$DEB_SLURM" Depends | tr ',' '\n' | grep -c "gpufrac (= $VERSION)\|slurm-wlm-basic-plugins (>= $(dpkg-query -W -f '${Version}' libslurm-dev | cut -d. -f1-2))\|slurm-wlm-basic-plugins (<<")" 3

# "The build before": this one, numbered lower.
mkdir "$TMP/prev"
dpkg-deb -R "$DEB" "$TMP/prev/tree"
sed -i "s/^Version: .*/Version: $VERSION~prev/" "$TMP/prev/tree/DEBIAN/control"
check "the previous build, made" \
	dpkg-deb -b "$TMP/prev/tree" "$TMP/prev/gpufrac.deb" >/dev/null

# The throwaway root. It is not under $TMP, which the cleanup removes
# whole: /dev, /proc and /sys are mounted in it.
ROOT=$(mktemp -d /tmp/gpufrac-deb-root.XXXXXX)
LAYERS=$(mktemp -d /tmp/gpufrac-deb-layers.XXXXXX)
mount -t tmpfs layers "$LAYERS"
mkdir "$LAYERS/upper" "$LAYERS/work"
mount -t overlay throwaway \
    -o "lowerdir=/,upperdir=$LAYERS/upper,workdir=$LAYERS/work" "$ROOT"
for d in /dev /proc /sys; do mount --rbind "$d" "$ROOT$d"; done
mount -t tmpfs run "$ROOT/run"
mount --bind "$TMP" "$ROOT$TMP"
# A machine under systemd, where services start on install (this one's
# policy-rc.d may say no), with the stand-in systemctl.
mkdir -p "$ROOT/run/systemd/system"
rm -f "$ROOT/usr/sbin/policy-rc.d"
install -m 755 "$TOP/tests/deb/systemctl" "$ROOT/usr/bin/systemctl"

ROOT_PID=/run/gpufracd.pid
cleanup_root() {
	[ -s "$ROOT$ROOT_PID" ] && kill -9 "$(cat "$ROOT$ROOT_PID")" 2>/dev/null
	umount -R "$ROOT" && rmdir "$ROOT"
	umount "$LAYERS" && rmdir "$LAYERS"
	cleanup
}
trap cleanup_root EXIT

# inroot CMD...: CMD in the throwaway root, on its daemon's socket.
inroot() {
	chroot "$ROOT" env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	    GPUFRAC_SOCKET=/run/gpufrac/gpufrac.sock "$@"
}
dpkg_in() { inroot dpkg "$@" >>"$TMP/dpkg.log" 2>&1 || { cat "$TMP/dpkg.log"; return 1; }; }
calls() { grep -c "$1" "$ROOT/run/systemctl.log"; }
daemon_pid() { cat "$ROOT$ROOT_PID" 2>/dev/null; }
answers() { inroot gpufracctl status >/dev/null 2>&1; }
WANTS=$ROOT/etc/systemd/system/multi-user.target.wants/gpufracd.service
CONF=$ROOT/etc/gpufrac/gpufrac.conf

# Install.
check "dpkg installs the previous build" dpkg_in -i "$TMP/prev/gpufrac.deb"
check "which enables the unit" test -L "$WANTS"
check_eq "and starts it" "$(calls '^--quiet --system start gpufracd.service$')" 1
wait_for "the daemon it started answers" 10 answers
check_eq "gpufracd -h names the configuration installed" \
	"$(inroot gpufracd -h 2>&1 | grep -c '(default: /etc/gpufrac/gpufrac.conf)')" 1

# The files installed, against the simulated driver.
SHIM_PATH=/usr/lib/$MA/libgpufrac.so
C=$BUILD/tests/clients/cuclient_linked
check_eq "a program under the installed shim is held to its limit" \
	"$(inroot env GPUFRAC_MEMORY_LIMIT=64Mi LD_PRELOAD="$SHIM_PATH" "$C" \
	    alloc 48Mi alloc 32Mi info 2>"$TMP/client.err")" \
	"alloc ok
alloc err=2
info free=16777216 total=67108864"
check_eq "by the daemon (the shim says nothing of holding it alone)" \
	"$(cat "$TMP/client.err")" ""
check_eq "found by its name alone, in the multiarch directory" \
	"$(inroot env GPUFRAC_MEMORY_LIMIT=64Mi LD_PRELOAD=libgpufrac.so "$C" alloc 80Mi)" \
	"alloc err=2"
check_eq "an honest program within its limit is not refused" \
	"$(inroot env GPUFRAC_MEMORY_LIMIT=64Mi LD_PRELOAD="$SHIM_PATH" "$C" alloc 64Mi)" \
	"alloc ok"
check_eq "gpufracctl cdi names the shim in the multiarch directory" \
	"$(inroot env -u GPUFRAC_SOCKET gpufracctl cdi | grep -c "\"$SHIM_PATH\"")" 2
check_eq "as does the CDI spec installed, which it prints" \
	"$(inroot env -u GPUFRAC_SOCKET gpufracctl cdi)" "$(cat "$ROOT/etc/cdi/gpufrac.json")"
check_eq "whose hooks are the hook installed" \
	"$(sed -n 's/.*"path": "\([^"]*\)".*/\1/p' "$ROOT/etc/cdi/gpufrac.json" | sort -u)" \
	/usr/libexec/gpufrac-oci-hook
check "which is there" test -x "$ROOT/usr/libexec/gpufrac-oci-hook"
check_eq "and libgpufrac(7), with no /usr/local path left" \
	"$(zgrep -c "$SHIM_PATH" "$ROOT/usr/share/man/man7/libgpufrac.7.gz") $(zgrep -c /usr/local/lib "$ROOT/usr/share/man/man7/libgpufrac.7.gz")" "1 0"
inroot systemd-analyze verify /lib/systemd/system/gpufracd.service \
    >"$TMP/verify" 2>&1
check_eq "the unit installed passes systemd-analyze verify, saying nothing" \
	"$?:$(cat "$TMP/verify")" "0:"

# Upgrade, the administrator's configuration edited.
echo "; edited by the administrator" >>"$CONF"
before=$(daemon_pid)
check "dpkg upgrades it to this build" dpkg_in -i "$DEB"
check_eq "keeping the configuration edited" "$(tail -n 1 "$CONF")" \
	"; edited by the administrator"
check_eq "restarting the daemon, not stopping it" \
	"$(calls '^--quiet --system restart gpufracd.service$') $(calls stop)" "1 0"
check "a new one" test "$(daemon_pid)" != "$before"
wait_for "which answers" 10 answers

check "dpkg installs gpufrac-slurm" dpkg_in -i "$DEB_SLURM"
check "the plugin where Slurm's PluginDir is" \
	test -f "$ROOT/usr/lib/$MA/slurm-wlm/gpufrac_spank.so"
check_eq "a plugstack.conf.d snippet that Slurm's plugstack.conf includes" \
	"$(grep -v '^#' "$ROOT/etc/slurm/plugstack.conf.d/gpufrac.conf") $(grep -c '^include /etc/slurm/plugstack.conf.d/\*.conf' "$ROOT/etc/slurm/plugstack.conf")" \
	"optional gpufrac_spank.so 1"

# Remove, then purge.
check "dpkg removes both" dpkg_in -r gpufrac-slurm gpufrac
check_eq "stopping the daemon" "$(calls '^stop gpufracd.service$')" 1
check "which is gone" test -z "$(daemon_pid)"
check "its programs are gone" test ! -e "$ROOT/usr/sbin/gpufracd" -a \
	! -e "$ROOT$SHIM_PATH" -a ! -e "$ROOT/lib/systemd/system/gpufracd.service"
check "the configuration is kept" grep -q "edited by the administrator" "$CONF"
check "dpkg purges both" dpkg_in -P gpufrac-slurm gpufrac
check "the configuration is gone" test ! -e "$CONF" -a ! -e "$ROOT/etc/gpufrac" \
	-a ! -e "$ROOT/etc/cdi/gpufrac.json" \
	-a ! -e "$ROOT/etc/slurm/plugstack.conf.d/gpufrac.conf"
check "the unit is no longer enabled" test ! -L "$WANTS"
check "dpkg knows neither" \
	test -z "$(inroot dpkg-query -W gpufrac gpufrac-slurm 2>/dev/null)"
finish
