/*
 * gpufracctl cdi: the CDI spec (cdiVersion 0.6.0) of the device
 * "gpufrac.io/gpu=all". Its container edits are what a container needs to
 * be a gpufrac client -- the shim and the daemon's socket directory bind
 * mounted read-only at the same paths, LD_PRELOAD and GPUFRAC_SOCKET set --
 * and the hooks that give an annotated container its own group.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_cdi.h"
#include "ctl_json.h"
#include "log.h"

#define CDI_VERSION	"0.6.0"
#define CDI_KIND	"gpufrac.io/gpu"
#define CDI_DEVICE	"all"

enum {
	CDI_OK = 0,
	CDI_USAGE = 2,
};

#define CDI_USAGE_LINE	"gpufracctl [-s socket] cdi " CTL_CDI_SYNOPSIS

struct cdi_paths {
	const char	*shim;
	const char	*hook;
	const char	*socket;	/* sockdir's, once sockdir_find ran */
	char		 sockdir[PATH_MAX];
	char		 sockpath[PATH_MAX];
};

/*
 * Directories that hold more than the daemon's socket: mounted into a
 * container, they would give it the host's (issue 27). The socket wants a
 * directory of its own, as /run/gpufrac is.
 */
static const char *const shared_dirs[] = {
	"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64",
	"/libx32", "/media", "/mnt", "/opt", "/proc", "/root", "/run",
	"/run/user", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/usr/lib",
	"/usr/local", "/var", "/var/lib", "/var/run", "/var/tmp",
};

static void
json_str(const char *s)
{
	ctl_json_string(stdout, s, strlen(s));
}

/* "NAME=value" as one JSON string. */
static void
json_env(const char *name, const char *value)
{
	char buf[PATH_MAX + 64];

	snprintf(buf, sizeof(buf), "%s=%s", name, value);
	json_str(buf);
}

/* A bind mount of path at the same path in the container. */
static void
print_mount(const char *path, const char *options, int last)
{
	fputs("          {\n            \"hostPath\": ", stdout);
	json_str(path);
	fputs(",\n            \"containerPath\": ", stdout);
	json_str(path);
	printf(",\n            \"options\": [%s]\n          }%s\n", options,
	    last ? "" : ",");
}

static void
print_hook(const struct cdi_paths *p, const char *stage, int last)
{
	fputs("          {\n            \"hookName\": ", stdout);
	json_str(stage);
	fputs(",\n            \"path\": ", stdout);
	json_str(p->hook);
	fputs(",\n            \"args\": [\"gpufrac-oci-hook\", ", stdout);
	json_str(stage);
	fputs("],\n            \"env\": [", stdout);
	json_env("GPUFRAC_SOCKET", p->socket);
	printf("]\n          }%s\n", last ? "" : ",");
}

static void
print_spec(const struct cdi_paths *p)
{
	printf("{\n  \"cdiVersion\": \"%s\",\n  \"kind\": \"%s\",\n"
	    "  \"devices\": [\n    {\n      \"name\": \"%s\",\n"
	    "      \"containerEdits\": {\n", CDI_VERSION, CDI_KIND, CDI_DEVICE);
	fputs("        \"env\": [\n          ", stdout);
	json_env("LD_PRELOAD", p->shim);
	fputs(",\n          ", stdout);
	json_env("GPUFRAC_SOCKET", p->socket);
	fputs("\n        ],\n        \"mounts\": [\n", stdout);
	print_mount(p->shim, "\"ro\", \"nosuid\", \"nodev\", \"bind\"", 0);
	print_mount(p->sockdir,
	    "\"ro\", \"nosuid\", \"nodev\", \"noexec\", \"bind\"", 1);
	fputs("        ],\n        \"hooks\": [\n", stdout);
	print_hook(p, "createRuntime", 0);
	print_hook(p, "poststop", 1);
	fputs("        ]\n      }\n    }\n  ]\n}\n", stdout);
}

/* CDI names host and container paths absolutely. */
static int
path_check(const char *what, const char *path)
{
	if (path[0] != '/') {
		log_errx("cdi: %s '%s' is not an absolute path", what, path);
		return -1;
	}
	if (strlen(path) >= PATH_MAX) {
		log_errx("cdi: %s '%.64s...' is too long", what, path);
		return -1;
	}
	return 0;
}

/*
 * path with ".", ".." and repeated slashes resolved by its words alone,
 * into buf (PATH_MAX): for a directory that does not exist yet.
 */
static void
path_lexical(const char *path, char *buf)
{
	size_t n = 0, len;
	const char *w;

	for (w = path; *w != '\0'; w += len) {
		w += strspn(w, "/");
		len = strcspn(w, "/");
		if (len == 0 || (len == 1 && w[0] == '.'))
			continue;
		if (len == 2 && w[0] == '.' && w[1] == '.') {
			while (n > 0 && buf[--n] != '/')
				;
			continue;
		}
		buf[n++] = '/';
		memcpy(buf + n, w, len);
		n += len;
	}
	buf[n] = '\0';
}

static int
dir_shared(const char *dir)
{
	size_t i;

	if (dir[0] == '\0' || strcmp(dir, "/") == 0)
		return 1;
	for (i = 0; i < sizeof(shared_dirs) / sizeof(shared_dirs[0]); i++)
		if (strcmp(dir, shared_dirs[i]) == 0)
			return 1;
	return 0;
}

/*
 * The directory of the socket is mounted, not the socket: a daemon that
 * restarts makes a new socket file, which a mount of the old one would
 * not show. It is canonical (symbolic links, "..", "." resolved, as the
 * runtime would) and never '/' nor a directory the host shares with much
 * else: "/./gpufrac.sock" would mount the host's root into containers.
 */
static int
sockdir_find(struct cdi_paths *p)
{
	char dir[PATH_MAX], canon[PATH_MAX];
	const char *base;
	int n;

	if (path_check("socket", p->socket) < 0)
		return -1;
	base = strrchr(p->socket, '/') + 1;
	if (*base == '\0' || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0) {
		log_errx("cdi: socket '%s' names a directory, not a socket",
		    p->socket);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%.*s", (int)(base - p->socket),
	    p->socket);
	if (realpath(dir, canon) == NULL) {
		if (errno != ENOENT) {
			log_errx("cdi: cannot resolve the directory of socket "
			    "'%s': %s", p->socket, strerror(errno));
			return -1;
		}
		path_lexical(dir, canon);
	}
	if (dir_shared(canon)) {
		log_errx("cdi: socket '%s' is in '%s', which would be mounted "
		    "in every container: give the daemon a directory of its "
		    "own, such as /run/gpufrac", p->socket,
		    canon[0] != '\0' ? canon : "/");
		return -1;
	}
	snprintf(p->sockdir, sizeof(p->sockdir), "%s", canon);
	n = snprintf(p->sockpath, sizeof(p->sockpath), "%s/%s", canon, base);
	if (n < 0 || (size_t)n >= sizeof(p->sockpath)) {
		log_errx("cdi: socket '%.64s...' is too long", p->socket);
		return -1;
	}
	p->socket = p->sockpath;
	return 0;
}

/* --opt VALUE or --opt=VALUE at argv[*i]: 1 and *value set, 0, or -1. */
static int
opt_take(const char *opt, int argc, char *argv[], int *i,
    const char **value)
{
	size_t n = strlen(opt);

	if (strncmp(argv[*i], opt, n) != 0)
		return 0;
	if (argv[*i][n] == '=') {
		*value = argv[*i] + n + 1;
		return 1;
	}
	if (argv[*i][n] != '\0')
		return 0;
	if (*i + 1 == argc) {
		log_errx("cdi: option '%s' needs an argument", opt);
		return -1;
	}
	*value = argv[++*i];
	return 1;
}

int
ctl_cdi(const char *socket, int argc, char *argv[])
{
	struct cdi_paths p = {
		.shim = GPUFRAC_LIBDIR "/libgpufrac.so",
		.hook = GPUFRAC_LIBEXECDIR "/gpufrac-oci-hook",
		.socket = socket,
	};
	int i, r;

	for (i = 0; i < argc; i++) {
		if ((r = opt_take("--shim", argc, argv, &i, &p.shim)) == 0)
			r = opt_take("--hook", argc, argv, &i, &p.hook);
		if (r < 0)
			goto usage;
		if (r == 0 && strcmp(argv[i], "--json") != 0) {
			log_errx("cdi: unknown argument '%s'", argv[i]);
			goto usage;
		}
	}
	/* ld.so(8): LD_PRELOAD's list is separated by spaces or colons */
	if (strpbrk(p.shim, ": \t") != NULL) {
		log_errx("cdi: shim '%s': LD_PRELOAD cannot name a path with "
		    "a space or ':'", p.shim);
		return CDI_USAGE;
	}
	if (path_check("shim", p.shim) < 0 ||
	    path_check("hook", p.hook) < 0 || sockdir_find(&p) < 0)
		return CDI_USAGE;
	print_spec(&p);
	return CDI_OK;

usage:
	log_errx("usage: %s", CDI_USAGE_LINE);
	return CDI_USAGE;
}
