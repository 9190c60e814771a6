#!/bin/sh
# gpufrac-node-install: the init container of the gpufracd DaemonSet
# (gpufracd.yaml). Writes the CDI spec of `gpufracctl cdi` into the node's
# CDI directory, after copying onto the node the files of this image that
# the spec names -- the shim, which the runtime mounts into containers, and
# the OCI hook, which it runs on the node -- at the same paths. The node's
# directories are mounted under $HOST.
set -eu

HOST=${HOST:-/host}
PREFIX=${PREFIX:-/opt/gpufrac}
CDI_DIR=${CDI_DIR:-/etc/cdi}

die() {
	echo "gpufrac-node-install: $*" >&2
	exit 1
}

# Copy one of this image's files to the same path under $HOST. The copy is
# renamed over the old file, never written into it: processes that have
# the old shim mapped keep theirs.
put() {
	dst=$HOST$1
	mkdir -p "${dst%/*}" || die "cannot create '${dst%/*}'"
	if ! { cp "$1" "$dst.new" && chmod 755 "$dst.new" &&
	    mv -f "$dst.new" "$dst"; }; then
		die "cannot install '$dst'"
	fi
	echo "gpufrac-node-install: installed $1"
}

# Written under a name that the runtimes do not read (they read *.json
# and *.yaml), then renamed into place once all it names is there.
mkdir -p "$HOST$CDI_DIR" || die "cannot create '$HOST$CDI_DIR'"
spec=$HOST$CDI_DIR/gpufrac.json
tmp=$HOST$CDI_DIR/.gpufrac.json.new
"$PREFIX/bin/gpufracctl" cdi >"$tmp" || die "gpufracctl cdi failed"

# The paths the spec names as mounts' hostPath and hooks' path (it has no
# device nodes, whose "path" is the container's): this image's files under
# $PREFIX, copied to the node, and the socket's directory, which must be
# on the node already.
paths=$(grep -o '"\(hostPath\|path\)" *: *"[^"]*"' "$tmp" |
    sed 's/^.*: *"//; s/"$//' | sort -u)
[ -n "$paths" ] || die "no paths in the spec that gpufracctl cdi wrote"
for p in $paths; do
	case $p in
	"$PREFIX"/*)
		[ -f "$p" ] || die "the spec names '$p', which this image lacks"
		put "$p"
		;;
	/*)
		[ -e "$HOST$p" ] ||
		    die "the spec names '$p', which is not on the node"
		;;
	*)
		die "the spec names '$p', not an absolute path"
		;;
	esac
done
# For the node's administrators.
put "$PREFIX/bin/gpufracctl"
mv -f "$tmp" "$spec" || die "cannot write '$spec'"
echo "gpufrac-node-install: wrote $CDI_DIR/gpufrac.json"
