/*
 * The protocol codec: per-type payload sizes, packet validation, and
 * send/recv wrappers over a SOCK_SEQPACKET socket.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proto.h"

/* A fixed-size string field of a payload, which must hold a NUL. */
struct msg_string {
	size_t		off;
	size_t		len;		/* 0: no such field */
};

struct msg_type {
	uint16_t	type;
	const char	*name;
	size_t		size;
	size_t		first;		/* its first size, before it grew at
					   its end (proto.h, Versions) */
	struct msg_string str[3];
};

#define STR(s, f)	{ offsetof(struct s, f), sizeof(((struct s *)0)->f) }
#define NOSTR		{ 0, 0 }
#define T0(t)		{ GF_MSG_##t, #t, 0, 0, { NOSTR, NOSTR, NOSTR } }
#define T(t, s)		{ GF_MSG_##t, #t, sizeof(struct s), sizeof(struct s), \
			  { NOSTR, NOSTR, NOSTR } }
#define TS(t, s, f)	{ GF_MSG_##t, #t, sizeof(struct s), sizeof(struct s), \
			  { STR(s, f), NOSTR, NOSTR } }
#define TS2(t, s, f, g)	{ GF_MSG_##t, #t, sizeof(struct s), sizeof(struct s), \
			  { STR(s, f), STR(s, g), NOSTR } }
/* A type that grew: it was first sent without its fields from g on. */
#define TG(t, s, g, f)	{ GF_MSG_##t, #t, sizeof(struct s), \
			  offsetof(struct s, g), { STR(s, f), NOSTR, NOSTR } }
#define TG2(t, s, g, f, h) { GF_MSG_##t, #t, sizeof(struct s), \
			  offsetof(struct s, g), { STR(s, f), STR(s, h), NOSTR } }

#define TG3(t, s, g, f, h, k) { GF_MSG_##t, #t, sizeof(struct s), \
			  offsetof(struct s, g), { STR(s, f), STR(s, h), \
			  STR(s, k) } }

/* One that grew by fields from g on, none of them a string. */
#define TGN(t, s, g)	{ GF_MSG_##t, #t, sizeof(struct s), \
			  offsetof(struct s, g), { NOSTR, NOSTR, NOSTR } }
/* A type that grew from no payload at all. */
#define TG0(t, s)	{ GF_MSG_##t, #t, sizeof(struct s), 0, { NOSTR, NOSTR, NOSTR } }

/* Sorted by type. */
static const struct msg_type types[] = {
	TG(HELLO, gf_hello, version, version),
	T(DEVICE_OPEN, gf_device_open),
	T(RESERVE, gf_reserve),
	T(COMMIT, gf_commit),
	T(ROLLBACK, gf_rollback),
	T(FREE, gf_free),
	TG0(SWAP_IN, gf_swap_in),
	T(LEASE_RETURN, gf_lease),
	T(LEASE_RESTORE, gf_lease),
	T(CTX_END, gf_ctx_end),
	TG(MOVED, gf_moved, kept, what),
	T0(STATUS_REQ),
	T0(PS_REQ),
	T(ALLOCS_REQ, gf_allocs_req),
	T(EVENTS_REQ, gf_events_req),
	T0(RELOAD_REQ),
	T(SWAP_REQ, gf_swap_req),
	TS(GROUP_RULE, gf_group_rule, rule),
	TG(GROUP_SET, gf_group_set, owner_uid, name),
	TS(GROUP_RM, gf_group_rm, name),
	T(LIMIT_REQ, gf_limit_req),
	T0(WALLS_REQ),
	T(DISCONNECT_REQ, gf_disconnect_req),
	T(HELLO_OK, gf_hello_ok),
	TGN(DEVICE_INFO, gf_device_info, taken),
	T(GRANT, gf_grant),
	T(DENY, gf_deny),
	TS(ERROR, gf_error, msg),
	TG2(STATUS, gf_status, swap_engine, version, swap_reason),
	TG2(DEVICE_STATUS, gf_device_status, driver_limits, name,
	    driver_reason),
	T(DEVICE_END, gf_end),
	TG2(CLIENT, gf_client, version, group, version),
	T(CLIENT_END, gf_end),
	T(ALLOC, gf_alloc),
	T(ALLOC_END, gf_end),
	T(WAIT, gf_wait),
	TG(GROUP_STATUS, gf_group_status, swap_engine, name),
	T(GROUP_END, gf_end),
	TG3(EVENT, gf_event, reason_more, group, reason, reason_more),
	T(EVENT_END, gf_end),
	T0(OK),
	T(MOVE, gf_move),
	TS2(WALL, gf_wall, group, dir),
	T(WALL_END, gf_end),
};

static const struct msg_type *
type_find(uint16_t type)
{
	size_t lo = 0, hi = sizeof(types) / sizeof(types[0]);

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (types[mid].type == type)
			return &types[mid];
		if (types[mid].type < type)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

ssize_t
proto_payload_size(uint16_t type)
{
	const struct msg_type *t = type_find(type);

	return t ? (ssize_t)t->size : -1;
}

const char *
proto_type_name(uint16_t type)
{
	const struct msg_type *t = type_find(type);

	return t ? t->name : "unknown";
}

/*
 * What a packet of another protocol version may be: a HELLO, to be refused,
 * or the ERROR that refuses it (proto.h, Versions).
 */
static int
version_neutral(uint16_t type)
{
	return type == GF_MSG_HELLO || type == GF_MSG_ERROR;
}

/* The payload's size is the type's, or the type's first (shorter) size. */
static int
payload_size_check(const struct msg_type *t, size_t len, const char **why)
{
	if (len == t->size || len == t->first)
		return 0;
	*why = len < t->size ? "message too short for its type" :
	    "message too long for its type";
	return -1;
}

/*
 * Payload padding (the fields named "zero") carries no meaning: senders
 * zero it, receivers ignore it. The header's zero field is checked so that a
 * future version can give it a meaning.
 */
int
proto_check(const struct gf_msg *m, size_t n, const char **why)
{
	const struct msg_type *t;
	const char *p;
	size_t len;
	size_t i;

	if (n < sizeof(m->hdr)) {
		*why = "packet shorter than the header";
		return -1;
	}
	if (m->hdr.version != GF_PROTO_VERSION &&
	    !version_neutral(m->hdr.type)) {
		*why = "unsupported protocol version";
		return -1;
	}
	if (m->hdr.len != n) {
		*why = "header length does not match the packet";
		return -1;
	}
	if (m->hdr.zero != 0) {
		*why = "reserved header field is not zero";
		return -1;
	}
	/* Another version's HELLO: its payload is that version's. */
	if (m->hdr.version != GF_PROTO_VERSION && m->hdr.type == GF_MSG_HELLO)
		return 0;
	if ((t = type_find(m->hdr.type)) == NULL) {
		*why = "unknown message type";
		return -1;
	}
	len = n - sizeof(m->hdr);
	if (payload_size_check(t, len, why) < 0)
		return -1;
	p = (const char *)m->u.raw;
	/* A string the first size lacks is read as "" (proto_recv). */
	for (i = 0; i < sizeof(t->str) / sizeof(t->str[0]); i++)
		if (t->str[i].len && t->str[i].off + t->str[i].len <= len &&
		    memchr(p + t->str[i].off, '\0', t->str[i].len) == NULL) {
			*why = "string field is not terminated";
			return -1;
		}
	return 0;
}

/*
 * The fields a shorter form of its type lacks, as zero: what a sender
 * without them meant.
 */
static void
payload_complete(struct gf_msg *m, size_t n)
{
	ssize_t size = proto_payload_size(m->hdr.type);
	size_t len = n - sizeof(m->hdr);

	if (size > 0 && len < (size_t)size)
		memset(m->u.raw + len, 0, (size_t)size - len);
}

int
proto_decode(struct gf_msg *m, const void *buf, size_t n, const char **why)
{
	if (n > sizeof(*m)) {
		*why = "packet too long";
		return -1;
	}
	memcpy(m, buf, n);
	if (proto_check(m, n, why) < 0)
		return -1;
	payload_complete(m, n);
	return 0;
}

ssize_t
proto_pack(struct gf_msg *m, uint16_t type, uint32_t seq, const void *payload)
{
	const struct msg_type *t = type_find(type);
	size_t size;

	/* No payload: the form a type had before it grew from nothing. */
	if (t == NULL || (payload == NULL && t->first != 0)) {
		errno = EINVAL;
		return -1;
	}
	size = payload != NULL ? t->size : 0;
	memset(&m->hdr, 0, sizeof(m->hdr));
	m->hdr.version = GF_PROTO_VERSION;
	m->hdr.type = type;
	m->hdr.len = (uint32_t)(sizeof(m->hdr) + size);
	m->hdr.seq = seq;
	if (size)
		memcpy(m->u.raw, payload, size);
	return (ssize_t)m->hdr.len;
}

ssize_t
proto_sendmsg(int fd, const void *pkt, size_t len, int passfd, int flags)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { .iov_base = (void *)pkt, .iov_len = len };
	struct msghdr mh;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (passfd >= 0) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		cm.hdr.cmsg_level = SOL_SOCKET;
		cm.hdr.cmsg_type = SCM_RIGHTS;
		cm.hdr.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&cm.hdr), &passfd, sizeof(int));
	}
	return sendmsg(fd, &mh, flags | MSG_NOSIGNAL);
}

int
proto_send_fd(int fd, uint16_t type, uint32_t seq, const void *payload,
    int passfd)
{
	struct gf_msg m;
	ssize_t n;

	if (proto_pack(&m, type, seq, payload) < 0)
		return -1;
	do
		n = proto_sendmsg(fd, &m, m.hdr.len, passfd, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if ((size_t)n != m.hdr.len) {
		errno = EMSGSIZE;
		return -1;
	}
	return 0;
}

int
proto_send(int fd, uint16_t type, uint32_t seq, const void *payload)
{
	return proto_send_fd(fd, type, seq, payload, -1);
}

/*
 * The first descriptor passed with a packet; any others are closed (a
 * peer must not be able to fill our descriptor table). -1 if none.
 */
static int
passed_fd(struct msghdr *mh)
{
	struct cmsghdr *c;
	int fd = -1, *p;
	size_t i, n;

	for (c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		p = (int *)(void *)CMSG_DATA(c);
		for (i = 0; i < n; i++) {
			int one;

			memcpy(&one, &p[i], sizeof(one));
			if (fd < 0)
				fd = one;
			else
				close(one);
		}
	}
	return fd;
}

int
proto_recv_fd(int fd, struct gf_msg *m, int flags, const char **why,
    int *passfd)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh;
	int got = -1;
	ssize_t n;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (passfd != NULL) {
		*passfd = -1;
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
	}
	/* MSG_TRUNC makes recv report the real length of an oversized packet. */
	do
		n = recvmsg(fd, &mh, flags | MSG_TRUNC | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (passfd != NULL)
		got = passed_fd(&mh);
	if (n == 0 || (size_t)n > sizeof(*m) || proto_check(m, (size_t)n,
	    why) < 0) {
		if (got >= 0)
			close(got);
		if (n == 0)
			return 0;
		if ((size_t)n > sizeof(*m))
			*why = "packet longer than any message";
		return -2;
	}
	if (passfd != NULL)
		*passfd = got;
	payload_complete(m, (size_t)n);
	return 1;
}

int
proto_recv(int fd, struct gf_msg *m, int flags, const char **why)
{
	return proto_recv_fd(fd, m, flags, why, NULL);
}

void
proto_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	memset(dst + n, 0, size - n);
}

void
proto_event_reason(const struct gf_event *e, char buf[PROTO_REASON_MAX])
{
	size_t n = strnlen(e->reason, sizeof(e->reason) - 1);

	memcpy(buf, e->reason, n);
	proto_strlcpy(buf + n, e->reason_more, PROTO_REASON_MAX - n);
}

void
proto_event_reason_set(struct gf_event *e, const char *reason)
{
	size_t n = strnlen(reason, sizeof(e->reason) - 1);

	proto_strlcpy(e->reason, reason, n + 1);
	memset(e->reason + n, 0, sizeof(e->reason) - n);
	proto_strlcpy(e->reason_more, reason + n, sizeof(e->reason_more));
}
