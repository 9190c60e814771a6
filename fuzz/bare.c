/*
 * Processes without connections (issue 38, I): NVML lists them holding
 * device memory and no connection explains them, as a program without
 * the shim (or with a renamed driver library, or a fake shim) would be.
 * Each of FZ_NBARE pids lives one life after another (FZ_OP_BARE): it
 * appears, grows, shrinks, exits with its memory back or still listed a
 * while, and its pid is taken by a new process. The daemon sees them
 * through the seams fakes.c wraps: procid_read gives a life's identity
 * and a pidfd, pidfd_start_ms its start, pidfd_signal reaches it.
 *
 * A life's pidfd is the read end of a pipe the fuzzer holds the write
 * end of (each procid_read hands out a dup): closing the write end, as
 * the process exits, makes every dup readable (POLLHUP), as a pidfd
 * turns readable when its process exits. The pipe's inode names the
 * life: a signal through the pidfd of a life that ended reaches nobody.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../daemon/driver.h"
#include "../daemon/nvml.h"
#include "../daemon/procid.h"
#include "bare.h"
#include "fuzz.h"

/* Who each pid's processes are, life after life. */
static const struct {
	uint32_t	 uid;
	uint32_t	 gid;
	const char	*cgroup;
} bare_ids[FZ_NBARE] = {
	{ 2000, 300, "/bare.slice/a.scope" },	/* the default group */
	{ 2001, 300, "/bare.slice/b.scope" },	/* configs.c: group cap */
	{ 2002, 300, "/bare.slice/c.scope" },	/* group cap */
	{ 0, 0, "/system.slice/x.service" },	/* root */
};

/* The start of the next life, in ms since boot: before any look. */
static uint64_t next_start;

static void
life_end(struct fz_bare *b)
{
	if (b->life_w >= 0)
		close(b->life_w);
	b->life_w = -1;
	b->alive = 0;
	b->killed = 0;
}

static void
life_begin(struct fz_bare *b, int why)
{
	int fds[2];
	struct stat st;

	life_end(b);
	if (b->life_r >= 0)
		close(b->life_r);
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0 || fstat(fds[0], &st) < 0)
		fz_fail("pipe: %s", strerror(errno));
	b->life_r = fds[0];
	b->life_w = fds[1];
	b->ino = st.st_ino;
	b->alive = 1;
	b->start_ms = ++next_start;
	b->why = why % (PROCID_NOT_CONNECTED + 1);
	memset(b->layers, 0, sizeof(b->layers));
	memset(b->seen, 0, sizeof(b->seen));
}

void
fz_bare_init(void)
{
	size_t i;

	next_start = 1000;
	for (i = 0; i < FZ_NBARE; i++) {
		struct fz_bare *b = &fz.bare[i];

		memset(b, 0, sizeof(*b));
		b->pid = FZ_BARE_PID(i);
		b->uid = bare_ids[i].uid;
		b->gid = bare_ids[i].gid;
		b->cgroup = bare_ids[i].cgroup;
		b->life_r = b->life_w = -1;
	}
}

/* Every life ends, its memory back; the daemon looks. */
void
fz_bare_free(void)
{
	size_t i;

	for (i = 0; i < FZ_NBARE; i++) {
		life_end(&fz.bare[i]);
		memset(fz.bare[i].nvml, 0, sizeof(fz.bare[i].nvml));
	}
	if (fz.a.loop != NULL) {
		driver_look_soon(&fz.a);
		fz_settle();
	}
	for (i = 0; i < FZ_NBARE; i++)
		if (fz.bare[i].life_r >= 0) {
			close(fz.bare[i].life_r);
			fz.bare[i].life_r = -1;
		}
}

struct fz_bare *
fz_bare_of_pid(uint32_t pid)
{
	size_t i;

	for (i = 0; i < FZ_NBARE; i++)
		if (fz.bare[i].pid == pid)
			return &fz.bare[i];
	return NULL;
}

/* The live process whose pidfd fd is (a dup of its life's), or NULL. */
struct fz_bare *
fz_bare_of_pidfd(int fd)
{
	struct stat st;
	size_t i;

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	for (i = 0; i < FZ_NBARE; i++)
		if (fz.bare[i].alive && fz.bare[i].life_r >= 0 &&
		    fz.bare[i].ino == st.st_ino)
			return &fz.bare[i];
	return NULL;
}

/* The process exits; its memory goes back to the driver unless kept. */
static void
bare_exit(struct fz_bare *b, int keep)
{
	life_end(b);
	if (!keep)
		memset(b->nvml, 0, sizeof(b->nvml));
	driver_look_soon(&fz.a);
}

void
fz_bare_reap(void)
{
	size_t i;

	for (i = 0; i < FZ_NBARE; i++)
		if (fz.bare[i].killed)
			bare_exit(&fz.bare[i], 0);
}

void
fz_bare_op(unsigned idx, uint8_t kind, uint8_t devb, uint64_t mib)
{
	struct fz_bare *b = &fz.bare[idx % FZ_NBARE];
	size_t dev = devb % FZ_MAXDEV;

	switch (kind & 3) {
	case 1:
		bare_exit(b, 0);
		return;
	case 3:
		bare_exit(b, 1);
		return;
	case 2:
		bare_exit(b, 0);
		life_begin(b, kind >> 4);
		break;
	default:
		if (!b->alive && mib > 0) {
			memset(b->nvml, 0, sizeof(b->nvml));
			life_begin(b, kind >> 4);
		}
		break;
	}
	b->nvml[dev] = mib << 20;
}

/* ---- the seams (fakes.c) ------------------------------------------------ */

int
fz_bare_procid(uint32_t pid, uint64_t at_ms, const char *socket,
    struct procid *p)
{
	struct fz_bare *b = fz_bare_of_pid(pid);

	if (b == NULL || !b->alive || b->start_ms > at_ms) {
		errno = ESRCH;
		return -1;
	}
	memset(p, 0, sizeof(*p));
	if ((p->pidfd = fcntl(b->life_r, F_DUPFD_CLOEXEC, 0)) < 0)
		fz_fail("dup: %s", strerror(errno));
	if ((p->cgroup = strdup(b->cgroup)) == NULL)
		fz_fail("out of memory");
	p->uid = b->uid;
	p->gid = b->gid;
	p->start_ms = b->start_ms;
	p->why = b->why;
	if (b->why == PROCID_OTHER_SOCKET)
		snprintf(p->socket, sizeof(p->socket), "%s.other", socket);
	return 0;
}

uint64_t
fz_bare_start_ms(const struct fz_bare *b)
{
	return b->alive ? b->start_ms : 0;
}

/*
 * A rise is a new layer taken at ms; a fall takes from the newest
 * first, as taken.h has it. With no room left, the rise joins the newest
 * layer and makes it as new as ms: it then looks newer than it is, which
 * only ever makes a kill look more deserved (bare_check.c).
 */
static void
layers_fit(struct fz_bare_layers *t, uint64_t total, uint64_t ms)
{
	uint64_t have = 0, cut;
	size_t i;

	for (i = 0; i < t->n; i++)
		have += t->v[i].bytes;
	if (total > have) {
		if (t->n == FZ_NLAYERS) {
			t->v[t->n - 1].bytes += total - have;
			t->v[t->n - 1].ms = ms;
		} else
			t->v[t->n++] = (struct fz_bare_layer){ ms,
			    total - have };
		return;
	}
	while (have > total && t->n > 0) {
		cut = have - total;
		if (cut >= t->v[t->n - 1].bytes) {
			have -= t->v[--t->n].bytes;
			continue;
		}
		t->v[t->n - 1].bytes -= cut;
		have = total;
	}
}

void
fz_bare_seen(size_t dev, const struct nvml_proc *procs, long n)
{
	uint64_t bytes;
	size_t i;
	long k;

	if (dev >= FZ_MAXDEV)
		return;
	for (i = 0; i < FZ_NBARE; i++) {
		struct fz_bare *b = &fz.bare[i];

		for (bytes = 0, k = 0; k < n; k++)
			if (procs[k].pid == b->pid)
				bytes += procs[k].bytes;
		b->seen[dev] = bytes;
		b->seen_ino = b->ino;
		if (b->alive)
			layers_fit(&b->layers[dev], bytes, fz_clock_now());
	}
}
