/*
 * The simulated processes and their connections to the daemon: each one
 * connected to its socket and accepted by its own listener, then given
 * the identity the kernel would report for that process; activity pages
 * as a shim makes them; packets sent as a peer sends them; and every
 * reply read back and checked: a valid message of the daemon's, at its
 * full size, echoing a seq this connection sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../daemon/depart.h"
#include "../daemon/driver.h"
#include "../daemon/event.h"
#include "../daemon/resolve.h"
#include "fuzz.h"
#include "proto.h"

#define SEND_TRIES	8	/* rounds given to a daemon not reading */

/* Who each slot is (fuzz_input.h). */
static const struct slot_id {
	int		 proc;
	int		 real_creds;
	uint32_t	 uid;
	uint32_t	 gid;
	const char	*cgroup;
} slot_ids[FZ_NSLOTS] = {
	{ 0, 0, 1000, 100, "/fuzz.slice/job-a.scope" },
	{ 1, 0, 1001, 100, "/fuzz.slice/job-b.scope" },
	{ 2, 0, 1002, 200, "/kubepods.slice/kubepods-burstable.slice/"
	    "kubepods-burstable-pod1b2c3d4e_5f60_4a7b_8c9d_0e1f2a3b4c5d.slice/"
	    "cri-containerd-3f2a9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b"
	    "3c4d5e6f7a8b.scope" },
	{ 3, 0, 1003, 200, "" },
	{ 0, 0, 1000, 100, "/fuzz.slice/job-a.scope" },
	{ 4, 1, 0, 0, NULL },
	{ 4, 1, 0, 0, NULL },
	{ 5, 0, 1007, 100, "/user.slice/user-1007.slice/session-1.scope" },
};

/* The processes' pids: 0 is the fuzzer's own. */
static const uint32_t proc_pids[FZ_NPROCS] = {
	FZ_PID(1), FZ_PID(2), FZ_PID(3), FZ_PID(4), 0, FZ_PID(7),
};

static void
proc_reset(struct fz_proc *p)
{
	if (p->page != NULL)
		munmap(p->page, GF_ACTIVITY_SIZE);
	if (p->memfd >= 0)
		close(p->memfd);
	p->page = NULL;
	p->memfd = -1;
	/* A checkpoint job may be running on it (fakes.c). */
	__atomic_store_n(&p->ckpt, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&p->ckpt_state, CU_PROCESS_STATE_RUNNING,
	    __ATOMIC_RELEASE);
	memset(p->nvml, 0, sizeof(p->nvml));
	memset(p->nvml_max, 0, sizeof(p->nvml_max));
	p->killed = 0;
}

void
fz_peers_init(void)
{
	size_t i;

	for (i = 0; i < FZ_NPROCS; i++) {
		struct fz_proc *p = &fz.procs[i];

		memset(p, 0, sizeof(*p));
		p->memfd = -1;
		p->self = proc_pids[i] == 0;
		p->pid = p->self ? (uint32_t)getpid() : proc_pids[i];
		proc_reset(p);
	}
	for (i = 0; i < FZ_NSLOTS; i++) {
		struct fz_slot *s = &fz.slots[i];

		memset(s, 0, sizeof(*s));
		s->proc = &fz.procs[slot_ids[i].proc];
		s->real_creds = slot_ids[i].real_creds;
		s->uid = slot_ids[i].uid;
		s->gid = slot_ids[i].gid;
		s->cgroup = slot_ids[i].cgroup;
		s->fd = -1;
	}
}

void
fz_peers_free(void)
{
	size_t i;

	for (i = 0; i < FZ_NSLOTS; i++)
		if (fz.slots[i].fd >= 0) {
			close(fz.slots[i].fd);
			fz.slots[i].fd = -1;
		}
	for (i = 0; i < FZ_NPROCS; i++)
		proc_reset(&fz.procs[i]);
}

struct fz_proc *
fz_proc_of_pid(uint32_t pid)
{
	size_t i;

	for (i = 0; i < FZ_NPROCS; i++)
		if (fz.procs[i].pid == pid)
			return &fz.procs[i];
	return NULL;
}

/* A process of ours lives while it has a connection; we always do. */
int
fz_proc_alive(const struct fz_proc *p)
{
	size_t i;

	if (p->self)
		return 1;
	for (i = 0; i < FZ_NSLOTS; i++)
		if (fz.slots[i].proc == p && fz.slots[i].fd >= 0)
			return 1;
	return 0;
}

/* The slot whose connection is c, or NULL. */
static const struct fz_slot *
slot_of_conn(const struct conn *c)
{
	size_t i;

	for (i = 0; i < FZ_NSLOTS; i++)
		if (fz.slots[i].fd >= 0 && fz.slots[i].dfd == c->fd)
			return &fz.slots[i];
	return NULL;
}

/*
 * A new connection of s's process: connected to the daemon's socket and
 * accepted by its listener in one round, then given the identity the
 * kernel would report for that process. Returns 0, or -1 when the daemon
 * did not take it.
 */
static int
slot_connect(struct fz_slot *s)
{
	struct sockaddr_un sun;
	struct conn *c;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	proto_strlcpy(sun.sun_path, fz.a.control.path, sizeof(sun.sun_path));
	if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) < 0)
		fz_fail("socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		fz_fail("cannot connect to '%s': %s", sun.sun_path,
		    strerror(errno));
	fz_round();
	TAILQ_FOREACH(c, &fz.a.control.conns, entry)
		if (slot_of_conn(c) == NULL)
			break;
	if (c == NULL) {
		close(fd);
		return -1;
	}
	if (!s->real_creds) {
		/*
		 * What SO_PEERCRED and /proc/PID/cgroup would say of it; no
		 * pidfd (the fuzzer's own is not its): it leaves as its
		 * connection closes.
		 */
		if (c->pidfd >= 0) {
			event_set(fz.a.loop, c->pidfd, 0, NULL, NULL);
			close(c->pidfd);
			c->pidfd = -1;
		}
		c->pid = s->proc->pid;
		c->uid = s->uid;
		c->gid = s->gid;
		free(c->cgroup);
		if ((c->cgroup = strdup(s->cgroup)) == NULL)
			fz_fail("out of memory");
	}
	s->fd = fd;
	s->dfd = c->fd;
	s->sent = 0;
	memset(s->excess, 0, sizeof(s->excess));
	memset(s->seqs, 0, sizeof(s->seqs));
	s->nbigseq = 0;
	return 0;
}

static void
seq_note(struct fz_slot *s, uint32_t seq)
{
	if (seq < 256)
		s->seqs[seq / 8] |= (uint8_t)(1u << (seq % 8));
	else if (s->nbigseq < sizeof(s->bigseq) / sizeof(s->bigseq[0]))
		s->bigseq[s->nbigseq++] = seq;
	else
		s->nbigseq = SIZE_MAX;	/* too many to follow: trust them */
}

static int
seq_sent(const struct fz_slot *s, uint32_t seq)
{
	size_t i;

	if (seq < 256)
		return (s->seqs[seq / 8] >> (seq % 8)) & 1;
	if (s->nbigseq == SIZE_MAX)
		return 1;
	for (i = 0; i < s->nbigseq; i++)
		if (s->bigseq[i] == seq)
			return 1;
	return 0;
}

/*
 * Send one packet on s (connecting it first), with passfd (-1: none).
 * A daemon that does not read is given a few rounds; one that hung up
 * closes the slot. Returns 0, or -1 when the packet did not go.
 */
int
fz_slot_send(struct fz_slot *s, const void *pkt, size_t len, int passfd)
{
	struct gf_hdr hdr;
	int i;

	if (s->fd < 0 && slot_connect(s) < 0)
		return -1;
	if (len >= sizeof(hdr)) {
		memcpy(&hdr, pkt, sizeof(hdr));
		seq_note(s, hdr.seq);
	}
	fz_note_sent(s, pkt, len);
	if (len <= sizeof(s->last)) {
		memcpy(s->last, pkt, len);
		s->lastlen = len;
	}
	for (i = 0; i < SEND_TRIES; i++) {
		if (proto_sendmsg(s->fd, pkt, len, passfd, MSG_DONTWAIT) >= 0) {
			s->sent++;
			return 0;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS)
			break;
		fz_round();
	}
	if (errno == EPIPE || errno == ECONNRESET)
		fz_slot_close(s);
	return -1;
}

/* p's activity page, made as a shim makes it: sealed, ours to write. */
int
fz_proc_page(struct fz_proc *p)
{
	void *m;
	int fd;

	if (p->memfd >= 0)
		return p->memfd;
	if ((fd = memfd_create("gf-activity", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) < 0 || ftruncate(fd, GF_ACTIVITY_SIZE) < 0)
		fz_fail("cannot make an activity page: %s", strerror(errno));
	m = mmap(NULL, GF_ACTIVITY_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd, 0);
	if (m == MAP_FAILED || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK |
	    F_SEAL_GROW | F_SEAL_SEAL) < 0)
		fz_fail("cannot map an activity page: %s", strerror(errno));
	p->page = m;
	p->page->magic = GF_ACTIVITY_MAGIC;
	p->page->version = GF_ACTIVITY_VERSION;
	p->memfd = fd;
	return fd;
}

/* Bytes sent on s that the daemon has not read yet. */
static int
unread(const struct fz_slot *s)
{
	int n = 0;

	if (s->fd < 0 || ioctl(s->fd, SIOCOUTQ, &n) < 0)
		return 0;
	return n;
}

/*
 * Whether the daemon has more to do at once: packets it has not read
 * (asked of the kernel only for slots that sent since its last round),
 * replies queued for a peer that reads them, a connection to close.
 */
int
fz_daemon_busy(void)
{
	const struct fz_slot *s;
	const struct conn *c;
	size_t i;
	int busy = 0;

	for (i = 0; i < FZ_NSLOTS; i++) {
		if (fz.slots[i].sent == 0)
			continue;
		if (unread(&fz.slots[i]) > 0)
			busy = 1;
		else
			fz.slots[i].sent = 0;
	}
	TAILQ_FOREACH(c, &fz.a.control.conns, entry) {
		s = slot_of_conn(c);
		if (c->close_timer > 0 || (c->out_len > c->out_head &&
		    s != NULL && !s->slow))
			busy = 1;
	}
	return busy;
}

/* Close our end once the daemon has read what was sent before. */
void
fz_slot_close(struct fz_slot *s)
{
	int i;

	if (s->fd < 0)
		return;
	for (i = 0; i < 64 && unread(s) > 0; i++)
		fz_round();
	close(s->fd);
	s->fd = -1;
}

/*
 * p exits: each of its connections closes, and then, as the daemon's
 * pidfd would tell it, the process is gone (a self process only: the
 * others' pids never existed, so the daemon returns their charge as
 * their connections close). A later op on p is a new process.
 */
void
fz_proc_exit(struct fz_proc *p)
{
	size_t i;

	for (i = 0; i < FZ_NSLOTS; i++)
		if (fz.slots[i].proc == p)
			fz_slot_close(&fz.slots[i]);
	fz_round();
	if (p->self && depart_cancel(&fz.a, p->pid) > 0)
		resolve_serve(&fz.a);
	proc_reset(p);
	/* Its memory is back in the (simulated) driver: the daemon looks. */
	driver_look_soon(&fz.a);
	fz_round();
}

void
fz_reap_killed(void)
{
	size_t i;

	for (i = 0; i < FZ_NPROCS; i++)
		if (fz.procs[i].killed)
			fz_proc_exit(&fz.procs[i]);
}

static void
reply_check(const struct fz_slot *s, const struct gf_msg *m, ssize_t n)
{
	const char *name = proto_type_name(m->hdr.type), *why;
	ssize_t size;

	if ((size_t)n > sizeof(*m))
		fz_fail("the daemon sent a packet of %zd bytes", n);
	if (proto_check(m, (size_t)n, &why) < 0)
		fz_fail("the daemon sent a bad packet (%s): %s", name, why);
	size = proto_payload_size(m->hdr.type);
	if (m->hdr.version != GF_PROTO_VERSION ||
	    (size_t)n != sizeof(m->hdr) + (size_t)size)
		fz_fail("the daemon sent %s of version %u, %zd bytes", name,
		    m->hdr.version, n);
	if (m->hdr.type < GF_MSG_HELLO_OK)
		fz_fail("the daemon sent %s, which peers send", name);
	if (!seq_sent(s, m->hdr.seq) && !(m->hdr.seq == 0 &&
	    (m->hdr.type == GF_MSG_DEVICE_INFO || m->hdr.type == GF_MSG_MOVE)))
		fz_fail("the daemon sent %s with seq %u, which this connection "
		    "never sent", name, m->hdr.seq);
}

int
fz_slot_recv(struct fz_slot *s, struct gf_msg *m)
{
	union {
		struct gf_msg	m;
		uint8_t		buf[FZ_PKT_MAX];
	} u;
	ssize_t n;

	if (s->fd < 0)
		return -1;
	n = recv(s->fd, &u, sizeof(u), MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n <= 0) {
		close(s->fd);
		s->fd = -1;
		return -1;
	}
	reply_check(s, &u.m, n);
	/* What the copy engine asks: a peer may answer it (liars.c). */
	if (u.m.hdr.type == GF_MSG_MOVE) {
		s->move_id = u.m.u.move.id;
		s->move_dir = u.m.u.move.direction;
	}
	if (fz.trace)
		fprintf(stderr, "  slot %d <- %s seq %u\n", (int)(s - fz.slots),
		    proto_type_name(u.m.hdr.type), u.m.hdr.seq);
	if (m != NULL)
		memcpy(m, &u.m, sizeof(*m));
	return 1;
}

/*
 * Read every reply waiting on s, checking each. A hang-up closes the
 * slot. Returns how many packets were read.
 */
int
fz_drain(struct fz_slot *s)
{
	int got = 0;

	while (fz_slot_recv(s, NULL) == 1)
		got++;
	return got;
}

/* Read the replies waiting for every slot that reads them at once. */
void
fz_drain_all(void)
{
	struct pollfd pfd[FZ_NSLOTS];
	struct fz_slot *who[FZ_NSLOTS];
	nfds_t n = 0, i;

	for (i = 0; i < FZ_NSLOTS; i++)
		if (fz.slots[i].fd >= 0 && !fz.slots[i].slow) {
			pfd[n].fd = fz.slots[i].fd;
			pfd[n].events = POLLIN;
			who[n++] = &fz.slots[i];
		}
	if (n == 0 || poll(pfd, n, 0) <= 0)
		return;
	for (i = 0; i < n; i++)
		if (pfd[i].revents != 0)
			(void)fz_drain(who[i]);
}
