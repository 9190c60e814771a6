/*
 * gpufracctl cdi: a Container Device Interface spec that puts a container
 * under gpufrac -- the shim preloaded, the daemon's socket mounted, and
 * gpufrac-oci-hook run at createRuntime and poststop.
 */
#ifndef GF_CTL_CDI_H
#define GF_CTL_CDI_H

/* What follows "cdi" in usage and in gpufracctl(1)'s SYNOPSIS. */
#define CTL_CDI_SYNOPSIS	"[--shim path] [--hook path]"

/*
 * Print the spec for the daemon socket at socket (absolute) to stdout.
 * argv[0..argc) are the words after the command: "--shim PATH" (default
 * GPUFRAC_LIBDIR/libgpufrac.so) and "--hook PATH" (default
 * GPUFRAC_LIBEXECDIR/gpufrac-oci-hook), also as --shim=PATH; "--json" is
 * accepted and changes nothing. Returns 0 (output written to stdout, not
 * flushed: the caller checks stdout), or 2 after one line on stderr for a
 * bad word or a path that is not absolute. It never contacts the daemon.
 */
int	ctl_cdi(const char *socket, int argc, char *argv[]);

#endif
