# gpufracctl cdi mounts the socket's directory into every container: the
# directory is taken canonical ("..", ".", symbolic links resolved) and
# never '/' nor a top-level system directory (issue 27), which would give
# containers the host's root, all of /run or /tmp.
. "$(dirname "$0")/lib.sh"

# refused SOCKET DIR: cdi refuses the socket, naming DIR, exit 2.
refused() {
	local out
	out=$("$GPUFRACCTL" -s "$1" cdi 2>&1 >/dev/null)
	check_eq "cdi refuses socket '$1'" "$?:$out" \
		"2:gpufracctl: cdi: socket '$1' is in '$2', which would be mounted in every container: give the daemon a directory of its own, such as /run/gpufrac"
}
refused /gpufrac.sock /
refused /./gpufrac.sock /
refused /run/../gpufrac.sock /
refused /run/gpufrac/../../gpufrac.sock /
refused /run/gpufrac.sock /run
refused /var/run/gpufrac.sock /run
refused /tmp/gpufrac.sock /tmp
refused /usr/gpufrac.sock /usr
refused /etc/x/../gpufrac.sock /etc

# A link to '/' is followed, as the runtime would follow it.
ln -s / "$TMP/root"
refused "$TMP/root/gpufrac.sock" /

# mounts SOCKET: the spec's socket directory mount and GPUFRAC_SOCKET.
mounts() {
	"$GPUFRACCTL" -s "$1" cdi | json \
	    '(j["devices"][0]["containerEdits"]["mounts"][1]["hostPath"], j["devices"][0]["containerEdits"]["env"][1])'
}
mkdir "$TMP/run"
check_eq "a directory of its own is mounted, canonical" \
	"$(mounts "$TMP/./x/../run//gpufrac.sock")" \
	"('$TMP/run', 'GPUFRAC_SOCKET=$TMP/run/gpufrac.sock')"
ln -s "$TMP/run" "$TMP/link"
check_eq "through a link, the directory it names" \
	"$(mounts "$TMP/link/gpufrac.sock")" \
	"('$TMP/run', 'GPUFRAC_SOCKET=$TMP/run/gpufrac.sock')"
check_eq "the default one, even before the daemon made it" \
	"$(mounts /nonexistent-gpufrac/gpufrac/gpufrac.sock)" \
	"('/nonexistent-gpufrac/gpufrac', 'GPUFRAC_SOCKET=/nonexistent-gpufrac/gpufrac/gpufrac.sock')"
finish
