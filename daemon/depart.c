/*
 * Departing clients: a pidfd per process whose connection closed before
 * it exited, watched in the event loop; once the process has exited its
 * charge is returned, or, where the driver's look can tell (driver.c),
 * kept as releasing until the driver has the memory back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arbiter.h"
#include "depart.h"
#include "driver.h"
#include "event.h"
#include "ledger.h"
#include "log.h"
#include "resolve.h"
#include "swap.h"
#include "units.h"

/* Linux 5.3; headers older than the kernel may lack the number (434 on
 * every architecture but alpha). */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open	434
#endif

/*
 * Whether /proc says pid has exited: a zombie (or dead) or gone, as the
 * simulated driver decides it too. 0 when it runs or /proc cannot tell.
 */
static int
proc_exited(uint32_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if ((fp = fopen(path, "re")) == NULL)
		return errno == ENOENT || errno == ESRCH;
	n = (ssize_t)fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "PID (COMM) STATE ...": COMM may hold spaces and parentheses. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return 0;
	return p[2] == 'Z' || p[2] == 'X' || p[2] == 'x';
}

/* Return lc's whole charge, end its preemption, and free it. */
static void
client_gone(struct arbiter *a, struct ledger_client *lc)
{
	resolve_client_gone(a, lc);
	swap_client_gone(a, lc);
	ledger_client_drop(&a->ledger, lc);
}

static void
depart_end(struct arbiter *a, struct depart *d)
{
	if (d->pidfd >= 0) {
		event_set(a->loop, d->pidfd, 0, NULL, NULL);
		close(d->pidfd);
	}
	TAILQ_REMOVE(&a->departs, d, entry);
	client_gone(a, d->lc);
	free(d);
}

/* Whether lc holds anything on a device (not out to host). */
static int
holds_device(const struct ledger *l, const struct ledger_client *lc)
{
	size_t i;

	for (i = 0; i < l->ndevices; i++)
		if (lc->usage[i].used > 0)
			return 1;
	return 0;
}

/*
 * d's process has exited: return its charge now, or keep it as releasing
 * until the driver's look sees the memory back. 1: kept.
 */
static int
depart_exited(struct arbiter *a, struct depart *d)
{
	char sbuf[32];

	if (d->pidfd >= 0) {
		event_set(a->loop, d->pidfd, 0, NULL, NULL);
		close(d->pidfd);
		d->pidfd = -1;
	}
	if (!driver_follows() || !holds_device(&a->ledger, d->lc)) {
		log_info("client pid %u exited; %s returned", d->lc->pid,
		    size_format(ledger_client_used(&a->ledger, d->lc), sbuf,
		    sizeof(sbuf)));
		depart_end(a, d);
		return 0;
	}
	d->exit_ms = event_now_ms();
	d->lc->state = GF_STATE_RELEASING;
	log_info("client pid %u exited; its %s stay charged until the "
	    "driver has them back", d->lc->pid,
	    size_format(ledger_client_used(&a->ledger, d->lc), sbuf,
	    sizeof(sbuf)));
	driver_look_soon(a);
	return 1;
}

void
depart_done(struct arbiter *a, struct depart *d, int kept)
{
	struct ledger_client *lc = d->lc;
	unsigned long long ms = event_now_ms() - d->exit_ms;
	size_t i;

	/* One event per device, as the charges were made. */
	for (i = 0; i < a->ledger.ndevices; i++) {
		if (lc->usage[i].used == 0)
			continue;
		if (kept)
			arbiter_event(a, GF_EV_DRIVER_KEPT, lc, (int)i,
			    lc->usage[i].used, "the driver had not given it "
			    "back %llu ms after the process exited: uncharged "
			    "all the same", ms);
		else
			arbiter_event(a, GF_EV_RELEASED, lc, (int)i,
			    lc->usage[i].used, "memory came back %llu ms after "
			    "the process exited", ms);
	}
	depart_end(a, d);
}

/* The pidfd is readable: the process has exited. */
static void
depart_event(struct event_loop *loop, int fd, int mask, void *arg)
{
	struct depart *d = arg;
	struct arbiter *a = d->a;

	(void)loop;
	(void)fd;
	(void)mask;
	if (depart_exited(a, d) == 0)
		resolve_serve(a);
}

/*
 * A pidfd for pid; or -1, with *exited set when it has exited already,
 * else when it cannot be had (logged).
 */
static int
pidfd_for(uint32_t pid, int *exited)
{
	int fd;

	/*
	 * pid comes from SO_PEERCRED at accept. A pid is not reused while
	 * its process is alive or a zombie, and we open the pidfd as its
	 * connection closes, when it is still one or the other (checked
	 * just below): the pidfd is that process's, not a newcomer's.
	 */
	*exited = 0;
	fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (fd < 0) {
		if (errno == ESRCH)
			*exited = 1;
		else
			log_debug("cannot watch pid %u for its exit (%s); "
			    "returning its charge now", pid, strerror(errno));
		return -1;
	}
	if (proc_exited(pid)) {
		close(fd);
		*exited = 1;
		return -1;
	}
	return fd;
}

int
depart_begin(struct arbiter *a, struct ledger_client *lc)
{
	struct depart *d;
	int fd = -1, exited = 0;

	if (a->stopping || lc->pid == 0 ||
	    ledger_client_used(&a->ledger, lc) == 0 ||
	    ((fd = pidfd_for(lc->pid, &exited)) < 0 && !exited))
		goto out_drop;
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		log_warnx("no memory to wait for pid %u to exit; returning "
		    "its charge now", lc->pid);
		goto out_close;
	}
	d->a = a;
	d->lc = lc;
	d->pidfd = fd;
	lc->departing = 1;
	TAILQ_INSERT_TAIL(&a->departs, d, entry);
	if (fd < 0)
		return depart_exited(a, d);
	/* A pidfd turns readable when its process has exited. */
	if (event_set(a->loop, fd, EVENT_READ, depart_event, d) < 0) {
		log_warn("cannot watch pid %u for its exit; returning its "
		    "charge now", lc->pid);
		TAILQ_REMOVE(&a->departs, d, entry);
		free(d);
		goto out_close;
	}
	return 1;

out_close:
	if (fd >= 0)
		close(fd);
out_drop:
	client_gone(a, lc);
	return 0;
}

int
depart_cancel(struct arbiter *a, uint32_t pid)
{
	struct depart *d, *next;
	int n = 0;

	for (d = TAILQ_FIRST(&a->departs); d != NULL; d = next) {
		next = TAILQ_NEXT(d, entry);
		if (d->lc->pid != pid || d->pidfd < 0)
			continue;
		log_debug("pid %u is back: its old charge is dropped", pid);
		depart_end(a, d);
		n++;
	}
	return n;
}

void
depart_free(struct arbiter *a)
{
	struct depart *d;

	while ((d = TAILQ_FIRST(&a->departs)) != NULL)
		depart_end(a, d);
}
