/*
 * gpufracctl cdi: the CDI spec (cdiVersion 0.6.0) of the device
 * "gpufrac.io/gpu=all". Its container edits are what a container needs to
 * be a gpufrac client -- the shim and the daemon's socket directory bind
 * mounted read-only at the same paths, LD_PRELOAD and GPUFRAC_SOCKET set --
 * and the hooks that give an annotated container its own group.
 */
#include <limits.h>
#include <stdio.h>
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
	const char	*socket;
	char		 sockdir[PATH_MAX];
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
 * The directory of the socket is mounted, not the socket: a daemon that
 * restarts makes a new socket file, which a mount of the old one would
 * not show.
 */
static int
sockdir_find(struct cdi_paths *p)
{
	char *slash;

	if (path_check("socket", p->socket) < 0)
		return -1;
	snprintf(p->sockdir, sizeof(p->sockdir), "%s", p->socket);
	slash = strrchr(p->sockdir, '/');
	while (slash > p->sockdir && slash[-1] == '/')
		slash--;
	*slash = '\0';
	if (p->sockdir[0] == '\0') {
		log_errx("cdi: socket '%s' is in '/', which would be mounted "
		    "in every container: give it a directory of its own",
		    p->socket);
		return -1;
	}
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
