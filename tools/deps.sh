#!/bin/sh
# tools/deps.sh PACKAGE...: the Debian packages make needs, before it
# builds or tests anything (make deps, and once per build tree before a
# build). The missing ones are installed as root; another user gets one
# line naming them and the command to run, and exit status 1. Without
# dpkg (not Debian) nothing is checked: the build says what it lacks.
command -v dpkg-query >/dev/null 2>&1 || exit 0

# dpkg-query lists those it knows, installed or not; the others it names
# on stderr.
installed=$(dpkg-query -W -f '${Package} ${db:Status-Status}\n' "$@" \
    2>/dev/null | awk '$2 == "installed" { printf " %s ", $1 }')
missing=
for p; do
	case $installed in
	*" $p "*) ;;
	*) missing="$missing $p";;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "gpufrac: missing Debian packages:$missing; run as root:" \
	    "make deps, or apt-get install --no-install-recommends$missing" >&2
	exit 1
fi
echo "gpufrac: installing the missing Debian packages:$missing"
apt-get update -q &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends $missing
