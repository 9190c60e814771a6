/*
 * The sharing benchmark's clock and child processes: the daemon and the
 * tenants. Every child dies with its parent (PDEATHSIG) and is listed
 * here, so that an early exit leaves nothing running.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "log.h"
#include "share.h"

/* The child side of share_tenant_start(); never returns. */
static void __attribute__((noreturn))
tenant_exec(const struct share_run *r, unsigned index, gid_t gid,
    const char *limit, int in, int out)
{
	char prog[PATH_MAX], shim[PATH_MAX], errpath[PATH_MAX], name[32];
	int err;

	if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0)
		_exit(127);
	snprintf(name, sizeof(name), "tenant-%u.err", index);
	if (harness_path(errpath, sizeof(errpath), r->dir, name) < 0 ||
	    harness_path(prog, sizeof(prog), r->top, "bench/share_tenant") < 0 ||
	    harness_path(shim, sizeof(shim), r->top, "shim/libgpufrac.so") < 0)
		_exit(127);
	if ((err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) < 0 || dup2(err, STDERR_FILENO) < 0)
		_exit(127);
	/* The daemon matches groups on the primary gid of its peer. */
	if (gid != (gid_t)-1 && (setgroups(0, NULL) < 0 || setgid(gid) < 0)) {
		fprintf(stderr, "share: cannot set gid %u: %s\n",
		    (unsigned)gid, strerror(errno));
		_exit(127);
	}
	if ((limit != NULL && setenv("GPUFRAC_MEMORY_LIMIT", limit, 1) < 0) ||
	    harness_preload_set(shim) < 0)
		_exit(127);
	execl(prog, "share_tenant", (char *)NULL);
	fprintf(stderr, "share: cannot run '%s': %s\n", prog, strerror(errno));
	_exit(127);
}

/* What a tenant child is to run: tenant_exec's arguments. */
struct tenant {
	const struct share_run *r;
	unsigned	 index;
	gid_t		 gid;
	const char	*limit;
};

static void
tenant_child(void *arg, int in, int out)
{
	const struct tenant *t = arg;

	tenant_exec(t->r, t->index, t->gid, t->limit, in, out);
}

pid_t
share_tenant_start(const struct share_run *r, unsigned index, gid_t gid,
    const char *limit, int *to, int *from)
{
	struct tenant t = { r, index, gid, limit };
	pid_t pid = harness_spawn(tenant_child, &t, to, from);

	if (pid < 0)
		log_warnx("cannot start tenant %u", index);
	return pid;
}

