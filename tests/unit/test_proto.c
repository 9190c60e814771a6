/*
 * Unit tests of common/proto.c: validation of every message type, and
 * send/recv over a real SOCK_SEQPACKET socketpair.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "proto.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

#define WHY_SHORT_HDR	"packet shorter than the header"
#define WHY_VERSION	"unsupported protocol version"
#define WHY_LEN		"header length does not match the packet"
#define WHY_HDR_ZERO	"reserved header field is not zero"
#define WHY_TYPE	"unknown message type"
#define WHY_SHORT	"message too short for its type"
#define WHY_LONG	"message too long for its type"
#define WHY_STRING	"string field is not terminated"
#define WHY_OVERSIZED	"packet longer than any message"

/* Every type, its payload as the header defines it, and its strings. */
struct type_string {
	size_t		 off;
	size_t		 len;		/* 0: no such field */
	const char	*name;
};

struct type_case {
	uint16_t		 type;
	const char		*name;
	size_t			 size;
	size_t			 first;		/* before it grew; or size */
	struct type_string	 str[2];
};

#define STR(s, f)	{ offsetof(struct s, f), sizeof(((struct s *)0)->f), #f }
#define NOSTR		{ 0, 0, NULL }
#define T0(t)		{ GF_MSG_##t, #t, 0, 0, { NOSTR, NOSTR } }
#define T(t, s)		{ GF_MSG_##t, #t, sizeof(struct s), sizeof(struct s), \
			  { NOSTR, NOSTR } }
#define TS(t, s, f)	{ GF_MSG_##t, #t, sizeof(struct s), sizeof(struct s), \
			  { STR(s, f), NOSTR } }
#define TS2(t, s, f, g)	{ GF_MSG_##t, #t, sizeof(struct s), sizeof(struct s), \
			  { STR(s, f), STR(s, g) } }
/* Types that grew at their end (proto.h, Versions): their first sizes. */
#define TG(t, s, n, f)	{ GF_MSG_##t, #t, sizeof(struct s), n, \
			  { STR(s, f), NOSTR } }
#define TG2(t, s, n, f, g) { GF_MSG_##t, #t, sizeof(struct s), n, \
			  { STR(s, f), STR(s, g) } }

/*
 * Written from include/gpufrac/proto.h, not from common/proto.c's table, so
 * that a type the codec forgets or sizes wrongly shows up here.
 */
static const struct type_case types[] = {
	TG(HELLO, gf_hello, 16, version),
	T(DEVICE_OPEN, gf_device_open),
	T(RESERVE, gf_reserve),
	T(COMMIT, gf_commit),
	T(ROLLBACK, gf_rollback),
	T(FREE, gf_free),
	T0(SWAP_IN),
	T(LEASE_RETURN, gf_lease),
	T(LEASE_RESTORE, gf_lease),
	T0(STATUS_REQ),
	T0(PS_REQ),
	T(ALLOCS_REQ, gf_allocs_req),
	T(EVENTS_REQ, gf_events_req),
	T0(RELOAD_REQ),
	T(SWAP_REQ, gf_swap_req),
	TS(GROUP_RULE, gf_group_rule, rule),
	TS(GROUP_SET, gf_group_set, name),
	TS(GROUP_RM, gf_group_rm, name),
	T(LIMIT_REQ, gf_limit_req),
	T(HELLO_OK, gf_hello_ok),
	T(DEVICE_INFO, gf_device_info),
	T(GRANT, gf_grant),
	T(DENY, gf_deny),
	TS(ERROR, gf_error, msg),
	TS2(STATUS, gf_status, version, swap_reason),
	TS(DEVICE_STATUS, gf_device_status, name),
	T(DEVICE_END, gf_end),
	TG2(CLIENT, gf_client, 120, group, version),
	T(CLIENT_END, gf_end),
	T(ALLOC, gf_alloc),
	T(ALLOC_END, gf_end),
	T(WAIT, gf_wait),
	TS(GROUP_STATUS, gf_group_status, name),
	T(GROUP_END, gf_end),
	TS2(EVENT, gf_event, group, reason),
	T(EVENT_END, gf_end),
	T0(OK),
};

static const struct type_case *
type_case_find(uint16_t type)
{
	size_t i;

	for (i = 0; i < NITEMS(types); i++)
		if (types[i].type == type)
			return &types[i];
	fail_msg("type %u is not in the test's table", type);
	return NULL;
}

/*
 * A valid packet of type tc in *m with payload_len payload bytes (normally
 * tc->size): every payload byte set, each string terminated at its last byte.
 * Returns the packet's length.
 */
static size_t
packet_make(struct gf_msg *m, const struct type_case *tc, size_t payload_len)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	m->hdr.version = GF_PROTO_VERSION;
	m->hdr.type = tc->type;
	m->hdr.len = (uint32_t)(sizeof(m->hdr) + payload_len);
	m->hdr.seq = 0xdeadbeef;
	memset(m->u.raw, 'x', payload_len);
	for (i = 0; i < NITEMS(tc->str); i++)
		if (tc->str[i].len && tc->str[i].off + tc->str[i].len <=
		    payload_len)
			m->u.raw[tc->str[i].off + tc->str[i].len - 1] = '\0';
	return sizeof(m->hdr) + payload_len;
}

static void
check_fails(const struct gf_msg *m, size_t n, const char *want,
    const char *what)
{
	const char *why = NULL;

	if (proto_check(m, n, &why) != -1)
		fail_msg("%s: accepted", what);
	if (why == NULL || strcmp(why, want) != 0)
		fail_msg("%s: reason '%s', want '%s'", what,
		    why ? why : "(none)", want);
}

static void
test_every_type_valid(void **state)
{
	struct gf_msg m;
	const char *why = NULL;
	size_t i, n;

	(void)state;
	for (i = 0; i < NITEMS(types); i++) {
		const struct type_case *tc = &types[i];

		assert_int_equal(proto_payload_size(tc->type), tc->size);
		n = packet_make(&m, tc, tc->size);
		if (proto_check(&m, n, &why) != 0)
			fail_msg("%s: valid packet rejected: %s", tc->name,
			    why);
	}
}

static void
test_every_type_one_byte_short(void **state)
{
	struct gf_msg m;
	size_t i, n;

	(void)state;
	for (i = 0; i < NITEMS(types); i++) {
		const struct type_case *tc = &types[i];

		if (tc->size == 0) {
			/* a header alone: one byte less is no header */
			n = packet_make(&m, tc, 0) - 1;
			m.hdr.len = (uint32_t)n;
			check_fails(&m, n, WHY_SHORT_HDR, tc->name);
			continue;
		}
		n = packet_make(&m, tc, tc->size - 1);
		check_fails(&m, n, WHY_SHORT, tc->name);
	}
}

static void
test_every_type_one_byte_long(void **state)
{
	struct gf_msg m;
	size_t i, n;

	(void)state;
	for (i = 0; i < NITEMS(types); i++) {
		n = packet_make(&m, &types[i], types[i].size + 1);
		check_fails(&m, n, WHY_LONG, types[i].name);
	}
}

/* Of another protocol version, only HELLO and ERROR pass (the next test). */
static void
test_every_type_wrong_version(void **state)
{
	static const uint16_t versions[] = { 0, GF_PROTO_VERSION + 1, 0xffff };
	struct gf_msg m;
	size_t i, j, n;

	(void)state;
	for (i = 0; i < NITEMS(types); i++) {
		if (types[i].type == GF_MSG_HELLO ||
		    types[i].type == GF_MSG_ERROR)
			continue;
		for (j = 0; j < NITEMS(versions); j++) {
			n = packet_make(&m, &types[i], types[i].size);
			m.hdr.version = versions[j];
			check_fails(&m, n, WHY_VERSION, types[i].name);
		}
	}
}

/*
 * Any two versions can say they cannot talk: a HELLO of another version
 * passes whatever its payload (only its header is read), the ERROR that
 * refuses it passes as ours does; their headers are checked still.
 */
static void
test_version_neutral(void **state)
{
	static const size_t hello_sizes[] = { 0, 1, 16, 32, 33,
	    GF_MSG_MAX - sizeof(struct gf_hdr) };
	const struct type_case *hello = type_case_find(GF_MSG_HELLO);
	const struct type_case *error = type_case_find(GF_MSG_ERROR);
	const char *why = NULL;
	struct gf_msg m;
	size_t i, n;

	(void)state;
	for (i = 0; i < NITEMS(hello_sizes); i++) {
		n = packet_make(&m, hello, hello_sizes[i]);
		m.hdr.version = GF_PROTO_VERSION + 1;
		if (proto_check(&m, n, &why) != 0)
			fail_msg("HELLO of version %u, %zu bytes: rejected: %s",
			    m.hdr.version, hello_sizes[i], why);
	}
	n = packet_make(&m, hello, 40);
	m.hdr.version = 0xffff;
	m.hdr.len = (uint32_t)n + 1;
	check_fails(&m, n, WHY_LEN, "foreign HELLO, length mismatch");
	m.hdr.len = (uint32_t)n;
	m.hdr.zero = 1;
	check_fails(&m, n, WHY_HDR_ZERO, "foreign HELLO, header zero set");

	n = packet_make(&m, error, error->size);
	m.hdr.version = GF_PROTO_VERSION + 1;
	assert_int_equal(proto_check(&m, n, &why), 0);
	n = packet_make(&m, error, error->size + 1);
	m.hdr.version = GF_PROTO_VERSION + 1;
	check_fails(&m, n, WHY_LONG, "foreign ERROR, one byte long");
	n = packet_make(&m, error, error->size);
	m.hdr.version = GF_PROTO_VERSION + 1;
	memset(m.u.error.msg, 'x', sizeof(m.u.error.msg));
	check_fails(&m, n, WHY_STRING, "foreign ERROR, unterminated");
}

/*
 * A type that grew passes at its first size too, its new strings
 * unchecked there (proto_recv reads them as ""), and at no size between.
 */
static void
test_first_sizes(void **state)
{
	const char *why = NULL;
	struct gf_msg m;
	size_t i, n, grown = 0;

	(void)state;
	for (i = 0; i < NITEMS(types); i++) {
		const struct type_case *tc = &types[i];

		if (tc->first == tc->size)
			continue;
		grown++;
		n = packet_make(&m, tc, tc->first);
		memset(m.u.raw + tc->first, 'x', tc->size - tc->first);
		if (proto_check(&m, n, &why) != 0)
			fail_msg("%s at its first size: rejected: %s",
			    tc->name, why);
		n = packet_make(&m, tc, tc->first - 1);
		check_fails(&m, n, WHY_SHORT, tc->name);
		n = packet_make(&m, tc, tc->first + 1);
		check_fails(&m, n, WHY_SHORT, tc->name);
	}
	assert_int_equal(grown, 2);	/* HELLO and CLIENT */
}

static void
test_every_type_header_len_mismatch(void **state)
{
	struct gf_msg m;
	size_t i, n;

	(void)state;
	for (i = 0; i < NITEMS(types); i++) {
		n = packet_make(&m, &types[i], types[i].size);
		m.hdr.len = (uint32_t)n + 1;
		check_fails(&m, n, WHY_LEN, types[i].name);
		m.hdr.len = (uint32_t)n - 1;
		check_fails(&m, n, WHY_LEN, types[i].name);
		m.hdr.len = 0;
		check_fails(&m, n, WHY_LEN, types[i].name);
		m.hdr.len = UINT32_MAX;
		check_fails(&m, n, WHY_LEN, types[i].name);
	}
}

static void
test_every_type_header_zero_field(void **state)
{
	struct gf_msg m;
	size_t i, n;

	(void)state;
	for (i = 0; i < NITEMS(types); i++) {
		n = packet_make(&m, &types[i], types[i].size);
		m.hdr.zero = 1;
		check_fails(&m, n, WHY_HDR_ZERO, types[i].name);
		m.hdr.zero = 0x80000000u;
		check_fails(&m, n, WHY_HDR_ZERO, types[i].name);
	}
}

/* The codec knows exactly the types of this table, and no other number. */
static void
test_every_number(void **state)
{
	uint32_t t;
	size_t i, known = 0;

	(void)state;
	for (t = 0; t <= UINT16_MAX; t++) {
		for (i = 0; i < NITEMS(types); i++)
			if (types[i].type == t)
				break;
		if (i < NITEMS(types)) {
			known++;
			continue;
		}
		if (proto_payload_size((uint16_t)t) != -1)
			fail_msg("type %u (%s) is known to the codec but not "
			    "to this test", t, proto_type_name((uint16_t)t));
	}
	assert_int_equal(known, NITEMS(types));
}

/*
 * Types next to the known ones, so that a new type taking one of these
 * numbers without a row in the table above makes this test fail.
 */
static void
test_unknown_type(void **state)
{
	static const uint16_t unknown[] = {
		0, GF_MSG_LEASE_RESTORE + 1, GF_MSG_STATUS_REQ - 1,
		GF_MSG_LIMIT_REQ + 1, GF_MSG_HELLO_OK - 1,
		GF_MSG_OK + 1, 0x7fff, 0xffff,
	};
	struct type_case tc = T0(OK);
	struct gf_msg m;
	size_t i, j, n;

	(void)state;
	for (i = 0; i < NITEMS(unknown); i++) {
		for (j = 0; j < NITEMS(types); j++)
			if (types[j].type == unknown[i])
				fail_msg("type %u is known (%s)", unknown[i],
				    types[j].name);
		tc.type = unknown[i];
		assert_int_equal(proto_payload_size(unknown[i]), -1);
		n = packet_make(&m, &tc, 0);
		check_fails(&m, n, WHY_TYPE, "header-only unknown type");
		n = packet_make(&m, &tc, 16);
		check_fails(&m, n, WHY_TYPE, "unknown type with payload");
	}
}

/* Each string field of each type on its own: the others stay terminated. */
static void
test_unterminated_strings(void **state)
{
	struct gf_msg m;
	const char *why;
	char what[64];
	size_t i, j, n, nstr = 0;

	(void)state;
	for (i = 0; i < NITEMS(types); i++) {
		const struct type_case *tc = &types[i];

		for (j = 0; j < NITEMS(tc->str); j++) {
			const struct type_string *f = &tc->str[j];

			if (f->len == 0)
				continue;
			nstr++;
			snprintf(what, sizeof(what), "%s.%s", tc->name,
			    f->name);
			n = packet_make(&m, tc, tc->size);
			m.u.raw[f->off + f->len - 1] = 'x';
			check_fails(&m, n, WHY_STRING, what);

			/* a terminator anywhere in the field will do */
			m.u.raw[f->off] = '\0';
			if (proto_check(&m, n, &why) != 0)
				fail_msg("%s: terminated at its start, "
				    "rejected: %s", what, why);
			/* but not one in the next field */
			m.u.raw[f->off] = 'x';
			if (f->off + f->len < tc->size) {
				m.u.raw[f->off + f->len] = '\0';
				check_fails(&m, n, WHY_STRING, what);
			}
		}
	}
	/*
	 * HELLO version, ERROR msg, STATUS version and swap_reason,
	 * DEVICE_STATUS name, CLIENT group and version, GROUP_STATUS name,
	 * EVENT group and reason, GROUP_RULE rule, GROUP_SET and GROUP_RM name
	 */
	assert_int_equal(nstr, 13);
}

/* Both strings of EVENT unterminated, and each alone at full length. */
static void
test_event_strings(void **state)
{
	const struct type_case *tc = type_case_find(GF_MSG_EVENT);
	struct gf_msg m;
	const char *why;
	size_t n;

	(void)state;
	n = packet_make(&m, tc, tc->size);
	memset(m.u.event.group, 'g', sizeof(m.u.event.group));
	memset(m.u.event.reason, 'r', sizeof(m.u.event.reason));
	check_fails(&m, n, WHY_STRING, "EVENT, both strings");

	m.u.event.group[sizeof(m.u.event.group) - 1] = '\0';
	check_fails(&m, n, WHY_STRING, "EVENT, reason unterminated");
	m.u.event.reason[sizeof(m.u.event.reason) - 1] = '\0';
	assert_int_equal(proto_check(&m, n, &why), 0);
	m.u.event.group[sizeof(m.u.event.group) - 1] = 'g';
	check_fails(&m, n, WHY_STRING, "EVENT, group unterminated");
}

static void
test_short_header(void **state)
{
	struct gf_msg m;
	size_t n;

	(void)state;
	packet_make(&m, &types[0], types[0].size);
	for (n = 0; n < sizeof(m.hdr); n++)
		check_fails(&m, n, WHY_SHORT_HDR, "short header");
}

static void
test_payload_padding_ignored(void **state)
{
	struct gf_msg m;
	const char *why;
	size_t n;

	(void)state;
	n = packet_make(&m, type_case_find(GF_MSG_ALLOC_END),
	    sizeof(struct gf_end));
	m.u.end.zero = 0xffffffffu;
	assert_int_equal(proto_check(&m, n, &why), 0);
	n = packet_make(&m, type_case_find(GF_MSG_WAIT),
	    sizeof(struct gf_wait));
	m.u.wait.zero = 0xffffffffu;
	assert_int_equal(proto_check(&m, n, &why), 0);
	n = packet_make(&m, type_case_find(GF_MSG_EVENTS_REQ),
	    sizeof(struct gf_events_req));
	m.u.events_req.zero = 0xffffffffu;
	assert_int_equal(proto_check(&m, n, &why), 0);
}

static void
test_type_name(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(types); i++)
		assert_string_equal(proto_type_name(types[i].type),
		    types[i].name);
	assert_string_equal(proto_type_name(0), "unknown");
	assert_string_equal(proto_type_name(999), "unknown");
	assert_string_equal(proto_type_name(0xffff), "unknown");
}

static void
test_pack_every_type(void **state)
{
	struct gf_msg in, m;
	const char *why = NULL;
	size_t i, n;

	(void)state;
	for (i = 0; i < NITEMS(types); i++) {
		n = packet_make(&in, &types[i], types[i].size);
		memset(&m, 0xee, sizeof(m));
		assert_int_equal(proto_pack(&m, types[i].type, 3, in.u.raw),
		    (ssize_t)n);
		assert_int_equal(proto_check(&m, n, &why), 0);
		assert_int_equal(m.hdr.seq, 3);
		if (types[i].size)
			assert_memory_equal(m.u.raw, in.u.raw, types[i].size);
	}
	errno = 0;
	assert_int_equal(proto_pack(&m, 999, 3, in.u.raw), -1);
	assert_int_equal(errno, EINVAL);
}

static void
test_strlcpy(void **state)
{
	char buf[8];

	(void)state;
	memset(buf, 'z', sizeof(buf));
	proto_strlcpy(buf, "abc", sizeof(buf));
	assert_string_equal(buf, "abc");
	assert_memory_equal(buf + 3, "\0\0\0\0\0", 5);	/* zero-filled */
	proto_strlcpy(buf, "0123456789", sizeof(buf));
	assert_string_equal(buf, "0123456");
}

/* A connected SOCK_SEQPACKET pair in sv. */
static int
pair_setup(void **state)
{
	static int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	*state = sv;
	return 0;
}

static int
pair_teardown(void **state)
{
	int *sv = *state;

	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	return 0;
}

static void
test_send_recv_every_type(void **state)
{
	int *sv = *state;
	struct gf_msg out, in;
	const char *why = NULL;
	size_t i, n;

	for (i = 0; i < NITEMS(types); i++) {
		const struct type_case *tc = &types[i];

		n = packet_make(&out, tc, tc->size);
		assert_int_equal(proto_send(sv[0], tc->type, (uint32_t)i + 7,
		    out.u.raw), 0);
		memset(&in, 0xee, sizeof(in));
		if (proto_recv(sv[1], &in, 0, &why) != 1)
			fail_msg("%s: not received: %s", tc->name, why);
		assert_int_equal(in.hdr.version, GF_PROTO_VERSION);
		assert_int_equal(in.hdr.type, tc->type);
		assert_int_equal(in.hdr.len, n);
		assert_int_equal(in.hdr.seq, i + 7);
		assert_int_equal(in.hdr.zero, 0);
		if (tc->size)
			assert_memory_equal(in.u.raw, out.u.raw, tc->size);
	}
}

static void
test_send_unknown_type(void **state)
{
	int *sv = *state;
	struct gf_msg m;

	memset(&m, 0, sizeof(m));
	errno = 0;
	assert_int_equal(proto_send(sv[0], 999, 1, m.u.raw), -1);
	assert_int_equal(errno, EINVAL);
}

/* The same file behind two descriptors (st_dev, st_ino). */
static int
same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
	    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * A descriptor passed with a message arrives with it (close-on-exec);
 * one received by plain proto_recv, or with a malformed packet, is not
 * left open in the receiver.
 */
static void
test_pass_fd(void **state)
{
	int *sv = *state;
	struct gf_free f = { .ptr = 1 };
	const char *why = NULL;
	struct gf_msg m;
	int pipefd[2], got = -2, before, after;

	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(proto_send_fd(sv[0], GF_MSG_FREE, 3, &f, pipefd[0]),
	    0);
	assert_int_equal(proto_recv_fd(sv[1], &m, 0, &why, &got), 1);
	assert_int_equal(m.hdr.seq, 3);
	assert_true(got >= 0);
	assert_true(same_file(got, pipefd[0]));
	assert_int_equal(fcntl(got, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(got);

	/* without a descriptor: -1 */
	assert_int_equal(proto_send(sv[0], GF_MSG_FREE, 4, &f), 0);
	assert_int_equal(proto_recv_fd(sv[1], &m, 0, &why, &got), 1);
	assert_int_equal(got, -1);

	/* plain proto_recv and a malformed packet leave nothing open */
	before = dup(0);
	close(before);
	assert_int_equal(proto_send_fd(sv[0], GF_MSG_FREE, 5, &f, pipefd[1]),
	    0);
	assert_int_equal(proto_recv(sv[1], &m, 0, &why), 1);
	assert_int_equal(proto_send_fd(sv[0], 999, 6, &f, pipefd[1]), -1);
	memset(&m, 0, sizeof(m));
	m.hdr.version = 77;
	m.hdr.len = sizeof(m.hdr);
	{
		struct iovec iov = { &m, sizeof(m.hdr) };
		union {
			struct cmsghdr	 h;
			char		 b[CMSG_SPACE(sizeof(int))];
		} cm;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
		    .msg_control = cm.b, .msg_controllen = sizeof(cm.b) };

		memset(&cm, 0, sizeof(cm));
		cm.h.cmsg_level = SOL_SOCKET;
		cm.h.cmsg_type = SCM_RIGHTS;
		cm.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&cm.h), &pipefd[1], sizeof(int));
		assert_int_equal(sendmsg(sv[0], &mh, 0), sizeof(m.hdr));
	}
	assert_int_equal(proto_recv_fd(sv[1], &m, 0, &why, &got), -2);
	assert_int_equal(got, -1);
	after = dup(0);
	close(after);
	assert_int_equal(after, before);
	close(pipefd[0]);
	close(pipefd[1]);
}

static void
test_recv_oversized(void **state)
{
	int *sv = *state;
	unsigned char big[GF_MSG_MAX + 44];
	struct gf_msg m;
	struct gf_free f = { .ptr = 0x7f0000001000ull };
	const char *why = NULL;

	/* a plausible header on a packet longer than any message */
	memset(big, 0, sizeof(big));
	packet_make(&m, &types[0], types[0].size);
	memcpy(big, &m.hdr, sizeof(m.hdr));
	((struct gf_hdr *)(void *)big)->len = sizeof(big);
	assert_int_equal(send(sv[0], big, sizeof(big), 0), sizeof(big));
	assert_int_equal(proto_recv(sv[1], &m, 0, &why), -2);
	assert_string_equal(why, WHY_OVERSIZED);

	/* the oversized packet is gone as a whole: the next one is intact */
	assert_int_equal(proto_send(sv[0], GF_MSG_FREE, 5, &f), 0);
	assert_int_equal(proto_recv(sv[1], &m, 0, &why), 1);
	assert_int_equal(m.hdr.type, GF_MSG_FREE);
	assert_int_equal(m.u.free.ptr, f.ptr);

	/* exactly GF_MSG_MAX bytes fits the buffer but no message */
	packet_make(&m, &types[0], GF_MSG_MAX - sizeof(m.hdr));
	assert_int_equal(send(sv[0], &m, GF_MSG_MAX, 0), GF_MSG_MAX);
	assert_int_equal(proto_recv(sv[1], &m, 0, &why), -2);
	assert_string_equal(why, WHY_LONG);
}

/* A HELLO of its first size arrives with the version it lacks as "". */
static void
test_recv_first_size(void **state)
{
	static const char none[GF_VERSION_LEN];
	int *sv = *state;
	struct gf_msg m;
	const char *why = NULL;
	size_t n;

	n = packet_make(&m, type_case_find(GF_MSG_HELLO), 16);
	m.u.hello.priority = 5;
	assert_int_equal(send(sv[0], &m, n, 0), (ssize_t)n);
	memset(&m, 0xee, sizeof(m));
	assert_int_equal(proto_recv(sv[1], &m, 0, &why), 1);
	assert_int_equal(m.hdr.len, n);
	assert_int_equal(m.u.hello.priority, 5);
	assert_memory_equal(m.u.hello.version, none, GF_VERSION_LEN);
}

static void
test_recv_malformed(void **state)
{
	int *sv = *state;
	struct gf_msg m;
	const char *why = NULL;
	size_t n;

	n = packet_make(&m, &types[2], types[2].size);
	m.hdr.version = 7;
	assert_int_equal(send(sv[0], &m, n, 0), (ssize_t)n);
	assert_int_equal(proto_recv(sv[1], &m, 0, &why), -2);
	assert_string_equal(why, WHY_VERSION);

	n = packet_make(&m, &types[2], types[2].size);
	assert_int_equal(send(sv[0], &m, n - 3, 0), (ssize_t)n - 3);
	assert_int_equal(proto_recv(sv[1], &m, 0, &why), -2);
	assert_string_equal(why, WHY_LEN);
}

static void
test_recv_nothing_dontwait(void **state)
{
	int *sv = *state;
	struct gf_msg m;
	const char *why = NULL;

	errno = 0;
	assert_int_equal(proto_recv(sv[1], &m, MSG_DONTWAIT, &why), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

static void
test_recv_peer_closed(void **state)
{
	int *sv = *state;
	struct gf_msg m;
	struct gf_end e = { .count = 3 };
	const char *why = NULL;

	/* what was sent before the close is still delivered, then EOF */
	assert_int_equal(proto_send(sv[0], GF_MSG_CLIENT_END, 9, &e), 0);
	close(sv[0]);
	sv[0] = -1;
	assert_int_equal(proto_recv(sv[1], &m, 0, &why), 1);
	assert_int_equal(m.u.end.count, 3);
	assert_int_equal(proto_recv(sv[1], &m, 0, &why), 0);
	assert_int_equal(proto_recv(sv[1], &m, MSG_DONTWAIT, &why), 0);
}

static void
test_send_peer_closed(void **state)
{
	int *sv = *state;
	struct gf_free f = { .ptr = 1 };

	/* EPIPE, and no SIGPIPE (which would kill this test) */
	close(sv[1]);
	sv[1] = -1;
	errno = 0;
	assert_int_equal(proto_send(sv[0], GF_MSG_FREE, 1, &f), -1);
	assert_int_equal(errno, EPIPE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_valid),
		cmocka_unit_test(test_every_type_one_byte_short),
		cmocka_unit_test(test_every_type_one_byte_long),
		cmocka_unit_test(test_every_type_wrong_version),
		cmocka_unit_test(test_version_neutral),
		cmocka_unit_test(test_first_sizes),
		cmocka_unit_test(test_every_type_header_len_mismatch),
		cmocka_unit_test(test_every_type_header_zero_field),
		cmocka_unit_test(test_unknown_type),
		cmocka_unit_test(test_every_number),
		cmocka_unit_test(test_unterminated_strings),
		cmocka_unit_test(test_event_strings),
		cmocka_unit_test(test_short_header),
		cmocka_unit_test(test_payload_padding_ignored),
		cmocka_unit_test(test_type_name),
		cmocka_unit_test(test_pack_every_type),
		cmocka_unit_test(test_strlcpy),
		cmocka_unit_test_setup_teardown(test_send_recv_every_type,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_send_unknown_type,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_recv_oversized,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_pass_fd,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_recv_first_size,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_recv_malformed,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_recv_nothing_dontwait,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_recv_peer_closed,
		    pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_send_peer_closed,
		    pair_setup, pair_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
