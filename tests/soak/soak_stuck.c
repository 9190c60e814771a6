/*
 * What the soak says of a client that is stuck (neither settled nor held
 * out at a quiet point, or not gone at the end): the call it was in,
 * what gpufracd shows of it and lately did to it, whether it still makes
 * calls and still reads the driver's pipe, and its threads' stacks (with
 * gdb, where it is installed). For whoever reads the failure.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_query.h"
#include "harness.h"
#include "names.h"
#include "soak.h"

static const char *
call_name(uint32_t call)
{
	static const char *const kinds[SOAK_KINDS] = {
		[SOAK_MEM] = "mem", [SOAK_PITCH] = "pitch",
		[SOAK_MANAGED] = "managed", [SOAK_POOL] = "pool",
		[SOAK_VMM] = "vmm", [SOAK_ARRAY] = "array",
		[SOAK_IPC] = "ipc", [SOAK_GRAPH] = "graph",
	};
	static char buf[48];
	unsigned k = call & 0xff;
	const char *kind = k < SOAK_KINDS ? kinds[k] : "?";

	switch (call & ~0xffu) {
	case SOAK_CALL_ALLOC:
		snprintf(buf, sizeof(buf), "allocating (%s)", kind);
		return buf;
	case SOAK_CALL_FREE:
		snprintf(buf, sizeof(buf), "freeing (%s)", kind);
		return buf;
	case SOAK_CALL_VERIFY:
		return "reading memory back (cuMemcpyDtoH)";
	case SOAK_CALL_POOL:
		return "synchronising or trimming a pool";
	case SOAK_CALL_QUIT:
		return "freeing everything";
	default:
		return "in no call of its own";
	}
}

/* Whether the client's stdin is the pipe the driver writes to. */
static int
pipe_same(const struct soak_client *c)
{
	char a[64], b[64], pa[64], pb[64];
	ssize_t na, nb;

	snprintf(pa, sizeof(pa), "/proc/%d/fd/0", (int)c->pid);
	snprintf(pb, sizeof(pb), "/proc/self/fd/%d", c->to);
	if ((na = readlink(pa, a, sizeof(a) - 1)) < 0 ||
	    (nb = readlink(pb, b, sizeof(b) - 1)) < 0)
		return -1;
	return na == nb && memcmp(a, b, (size_t)na) == 0;
}

/* The daemon's last few events about pid, and the last few overall. */
static void
events_say(const struct soak *s, pid_t pid)
{
	struct gf_event *ev = NULL;
	size_t n = 0, i, shown = 0;

	if (ctl_query_events(s->sock, &ev, &n) < 0)
		return;
	for (i = n; i > 0 && shown < 6; i--)
		if (ev[i - 1].pid == (uint32_t)pid) {
			fprintf(stderr, "soak:   gpufracd: %s: %.*s\n",
			    name_event(ev[i - 1].kind),
			    (int)sizeof(ev[i - 1].reason), ev[i - 1].reason);
			shown++;
		}
	for (i = n > 4 ? n - 4 : 0; i < n; i++)
		fprintf(stderr, "soak:   gpufracd, lately: %s pid %u: %.*s\n",
		    name_event(ev[i].kind), ev[i].pid,
		    (int)sizeof(ev[i].reason), ev[i].reason);
	free(ev);
}

/* What gpufracd says of its devices meanwhile. */
static void
devices_say(const struct soak *s)
{
	const struct gf_device_status *d;
	struct ctl_status st;
	size_t i;

	memset(&st, 0, sizeof(st));
	if (ctl_query_status(s->sock, &st) == 0)
		for (i = 0; i < st.ndevices; i++) {
			d = &st.devices[i];
			fprintf(stderr, "soak:   gpufracd: device %u: used %llu "
			    "leased %llu host %llu of %llu, %u clients\n",
			    d->index, (unsigned long long)d->used,
			    (unsigned long long)d->leased,
			    (unsigned long long)d->host,
			    (unsigned long long)d->capacity, d->nclients);
		}
	ctl_status_free(&st);
}

/* Its threads' stacks, where gdb is installed (else nothing). */
static void
stacks_say(pid_t pid)
{
	char arg[16];
	pid_t g;
	int fd;

	snprintf(arg, sizeof(arg), "%d", (int)pid);
	fflush(stderr);
	if ((g = harness_fork()) == 0) {
		if ((fd = open("/dev/null", O_RDWR)) < 0 ||
		    dup2(fd, STDIN_FILENO) < 0 ||
		    dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		execlp("gdb", "gdb", "-p", arg, "-batch", "-nx", "-q", "-ex",
		    "thread apply all bt 16", (char *)NULL);
		_exit(127);
	}
	if (g > 0)
		(void)harness_reap(g, 30000);
}

/* What a stuck client was doing, and what gpufracd says of it. */
void
stuck_say(struct soak *s, int i)
{
	static const char *const states[] = { "running", "waiting",
	    "swapped" };
	const struct soak_slot *sl = &s->slots[i];
	uint32_t call = __atomic_load_n(&sl->call, __ATOMIC_RELAXED);
	uint64_t since = __atomic_load_n(&sl->call_ms, __ATOMIC_RELAXED);
	struct gf_client *ps = NULL;
	size_t n = 0, r;
	uint64_t ops;
	int out = 0;

	fprintf(stderr, "soak:   it was %s", call_name(call));
	if (call != 0)
		fprintf(stderr, " for %llu ms", (unsigned long long)
		    (soak_now_ms() - since));
	if (ctl_query_ps(s->sock, &ps, &n) == 0)
		for (r = 0; r < n; r++)
			if (ps[r].pid == (uint32_t)s->clients[i].pid) {
				fprintf(stderr, "; gpufracd: %s, used %llu, "
				    "host %llu", ps[r].state < 3 ?
				    states[ps[r].state] : "?",
				    (unsigned long long)ps[r].used,
				    (unsigned long long)ps[r].host);
				out |= ps[r].state == GF_STATE_SWAPPED;
			}
	fputc('\n', stderr);
	free(ps);
	/*
	 * Between its own calls it makes others (cuCtxSetCurrent, what it
	 * holds by the driver's measure), all gated: it waits to be brought
	 * back, or in the driver's lock in a call the shim does not see.
	 */
	if (call == 0 && out)
		fprintf(stderr, "soak:   swapped out, in a driver call between "
		    "its own: waiting to be brought back (client_swap_in in "
		    "its stack), or held in the driver's lock by a call the "
		    "shim does not see\n");
	if (s->clients[i].hand_out_ms != 0)
		fprintf(stderr, "soak:   swapped out by hand at %.1fs, back "
		    "in by hand: %s\n", (double)s->clients[i].hand_out_ms /
		    1000, s->clients[i].hand_in < 0 ? "not asked" :
		    s->clients[i].hand_in ? "refused" : "done");
	ops = __atomic_load_n(&sl->ops, __ATOMIC_RELAXED);
	harness_sleep_us(200000);
	fprintf(stderr, "soak:   %llu calls in 200 ms; its stdin is %s\n",
	    (unsigned long long)(__atomic_load_n(&sl->ops, __ATOMIC_RELAXED) -
	    ops), pipe_same(&s->clients[i]) == 1 ? "the driver's pipe" :
	    "NOT the driver's pipe");
	events_say(s, s->clients[i].pid);
	devices_say(s);
	stacks_say(s->clients[i].pid);
}
