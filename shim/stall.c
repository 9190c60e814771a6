/*
 * Telling a thread that waits in the driver unseen from the others
 * (stall.h): the driver's code found once, the process's threads read
 * from /proc/self/task, and the top of a blocked thread's stack read with
 * process_vm_readv, which fails instead of faulting where a stack ends.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "stall.h"

/*
 * How much of a blocked thread's stack is read, from its stack pointer
 * up: the driver's frames lie just above the system call it waits in,
 * and the deeper a word, the likelier it is a stale one.
 */
#define STALL_STACK_BYTES	(16 * 1024)
#define STALL_PAGE		4096

/* A thread's state as /proc shows it. */
struct stall_state {
	int		blocked;	/* in a system call */
	long		nr;		/* which */
	uint64_t	sp, pc;
};

struct stall_thread {
	pid_t		tid;
	int		seen;		/* at this look */
	int		named;		/* its name was read: */
	int		driver_own;	/* a thread of the driver's */
	struct stall_state snap;	/* when the process went out */
	struct stall_state last;	/* at the last look */
	int		last_driver;	/* then: waiting in the driver */
};

/* ---- the driver's code ------------------------------------------------ */

struct stall_find {
	struct stall	*s;
	uintptr_t	 fn;
};

static int
stall_find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct stall_find *f = arg;
	struct stall *s = f->s;
	const ElfW(Phdr) *ph;
	uintptr_t lo, hi;
	int has = 0, i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    f->fn >= lo && f->fn < lo + ph->p_memsz)
			has = 1;
	}
	if (!has)
		return 0;
	for (i = 0; i < info->dlpi_phnum && s->ntext < STALL_TEXTS; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		lo = info->dlpi_addr + ph->p_vaddr;
		hi = lo + ph->p_memsz;
		s->text[s->ntext][0] = lo;
		s->text[s->ntext][1] = hi;
		s->text_readable[s->ntext++] = (ph->p_flags & PF_R) != 0;
	}
	return 1;
}

int
stall_init(struct stall *s, const void *driver_fn)
{
	struct stall_find f = { s, (uintptr_t)driver_fn };

	memset(s, 0, sizeof(*s));
	if (driver_fn == NULL || dl_iterate_phdr(stall_find_object, &f) == 0 ||
	    s->ntext == 0)
		return -1;
	if ((s->buf = malloc(STALL_STACK_BYTES)) == NULL)
		return -1;
	return 0;
}

void
stall_free(struct stall *s)
{
	free(s->t);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

static int
stall_text(const struct stall *s, uintptr_t a, size_t before)
{
	size_t i;

	for (i = 0; i < s->ntext; i++)
		if (a >= s->text[i][0] + before && a < s->text[i][1])
			return (int)i + 1;
	return 0;
}

/*
 * Whether the instruction before ra is a call: a return address, not a
 * pointer to a function that a frame happens to hold. Where the code
 * cannot be read or the machine is another, any address in it will do.
 */
static int
stall_after_call(const struct stall *s, uintptr_t ra)
{
	int i = stall_text(s, ra, 8);

	if (i == 0)
		return stall_text(s, ra, 0) != 0;
	if (!s->text_readable[i - 1])
		return 1;
#if defined(__x86_64__)
	{
		const unsigned char *p = (const unsigned char *)ra;
		int k;

		if (p[-5] == 0xe8)		/* call rel32 */
			return 1;
		for (k = 2; k <= 7; k++)	/* call r/m64: FF /2 */
			if (p[-k] == 0xff && (p[-k + 1] & 0x38) == 0x10)
				return 1;
		return 0;
	}
#elif defined(__aarch64__)
	{
		uint32_t insn;

		memcpy(&insn, (const void *)(ra - 4), sizeof(insn));
		return (insn & 0xfc000000u) == 0x94000000u ||	/* bl */
		    (insn & 0xfffffc1fu) == 0xd63f0000u;	/* blr */
	}
#else
	return 1;
#endif
}

/* ---- threads ------------------------------------------------------------ */

static int
stall_number(const char **p, int base, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(*p, &end, base);
	if (end == *p || errno == ERANGE)
		return -1;
	*p = end;
	return 0;
}

/*
 * Parse /proc/PID/task/TID/syscall: "running", or "NR A1 .. A6 SP PC" in
 * a system call, or "-1 SP PC" blocked outside one (proc(5)).
 */
static void
stall_parse(const char *line, struct stall_state *st)
{
	const char *p = line;
	uint64_t v;
	int i;

	memset(st, 0, sizeof(*st));
	if (*p < '0' || *p > '9' || stall_number(&p, 10, &v) < 0 ||
	    v > 4096)
		return;
	st->nr = (long)v;
	for (i = 0; i < 6; i++)
		if (stall_number(&p, 16, &v) < 0)
			return;
	if (stall_number(&p, 16, &st->sp) < 0 ||
	    stall_number(&p, 16, &st->pc) < 0)
		return;
	st->blocked = 1;
}

static void
stall_read_state(pid_t tid, struct stall_state *st)
{
	char path[64], line[256];
	ssize_t n;
	int fd;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return;
	line[n] = '\0';
	stall_parse(line, st);
}

static int
stall_same(const struct stall_state *a, const struct stall_state *b)
{
	return a->blocked && b->blocked && a->nr == b->nr && a->sp == b->sp &&
	    a->pc == b->pc;
}

/*
 * Whether a thread blocked in st waits inside the driver: its pc, or a
 * return address near the top of its stack, in the driver's code. The
 * stack is read a page at a time, so that a read stops where it ends.
 */
static int
stall_in_driver(struct stall *s, const struct stall_state *st)
{
	struct iovec local, remote[STALL_STACK_BYTES / STALL_PAGE + 1];
	uintptr_t at = (uintptr_t)st->sp, w;
	size_t n = 0, i;
	ssize_t got;

	if (stall_text(s, (uintptr_t)st->pc, 0))
		return 1;
	while (n < sizeof(remote) / sizeof(remote[0])) {
		size_t len = STALL_PAGE - (at % STALL_PAGE);
		size_t left = STALL_STACK_BYTES - (at - (uintptr_t)st->sp);

		if (left == 0)
			break;
		remote[n].iov_base = (void *)at;
		remote[n++].iov_len = len < left ? len : left;
		at += len < left ? len : left;
	}
	local.iov_base = s->buf;
	local.iov_len = STALL_STACK_BYTES;
	got = process_vm_readv(getpid(), &local, 1, remote, n, 0);
	for (i = 0; got > 0 && i + sizeof(w) <= (size_t)got; i += sizeof(w)) {
		memcpy(&w, s->buf + i, sizeof(w));
		if (stall_text(s, w, 0) && stall_after_call(s, w))
			return 1;
	}
	return 0;
}

static struct stall_thread *
stall_find(struct stall *s, pid_t tid)
{
	struct stall_thread *t;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->t[i].tid == tid)
			return &s->t[i];
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;

		if ((t = realloc(s->t, cap * sizeof(*t))) == NULL)
			return NULL;
		s->t = t;
		s->cap = cap;
	}
	t = &s->t[s->n++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

/*
 * Whether the thread is one of the driver's own, which the real driver
 * names "cuda-EvtHandlr", "cuda00001400006" and so on: it waits in the
 * driver for ever, and where it waits changes when the process is locked
 * (seen on an H200, tests/gpu/stall_probe), so its state tells nothing.
 */
static int
stall_driver_own(pid_t tid)
{
	char path[64], name[16];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, name, sizeof(name));
	close(fd);
	return n >= 4 && memcmp(name, "cuda", 4) == 0;
}

static int
stall_self(const struct stall *s, pid_t tid)
{
	size_t i;

	for (i = 0; i < STALL_SELF; i++)
		if (s->self[i] == tid)
			return 1;
	return 0;
}

/*
 * Note every thread's state (snapshot: as the process went out), drop
 * those that have gone. Returns a thread seen waiting in the driver in
 * the same state at the last look and this one, or 0.
 */
static pid_t
stall_walk(struct stall *s, int snapshot)
{
	struct stall_state before;
	struct stall_thread *t;
	struct dirent *e;
	pid_t found = 0;
	const char *p;
	size_t i, j;
	uint64_t v;
	int was;
	DIR *d;

	if ((d = opendir("/proc/self/task")) == NULL)
		return 0;
	for (i = 0; i < s->n; i++)
		s->t[i].seen = 0;
	while ((e = readdir(d)) != NULL) {
		p = e->d_name;
		if (stall_number(&p, 10, &v) < 0 || *p != '\0' ||
		    stall_self(s, (pid_t)v) ||
		    (t = stall_find(s, (pid_t)v)) == NULL)
			continue;
		t->seen = 1;
		if (!t->named) {
			t->driver_own = stall_driver_own(t->tid);
			t->named = 1;
		}
		if (t->driver_own)
			continue;
		before = t->last;
		was = t->last_driver;
		stall_read_state(t->tid, &t->last);
		if (snapshot)
			t->snap = t->last;
		/* Unchanged since the last look: so is the verdict. */
		if (snapshot || !stall_same(&before, &t->last))
			t->last_driver = t->last.blocked &&
			    !stall_same(&t->last, &t->snap) &&
			    stall_in_driver(s, &t->last);
		/*
		 * Its name read again before it is accused: a thread's maker
		 * names it once it runs (pthread_setname_np), and a loaded
		 * machine may let it wait in the driver before that.
		 */
		else if (was && found == 0 &&
		    !(t->driver_own = stall_driver_own(t->tid)))
			found = t->tid;
	}
	closedir(d);
	for (i = j = 0; i < s->n; i++)
		if (s->t[i].seen)
			s->t[j++] = s->t[i];
	s->n = j;
	return found;
}

void
stall_snapshot(struct stall *s)
{
	s->n = 0;
	(void)stall_walk(s, 1);
}

pid_t
stall_look(struct stall *s)
{
	return stall_walk(s, 0);
}

size_t
stall_count(const struct stall *s)
{
	return s->n;
}
