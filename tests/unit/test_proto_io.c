/*
 * Unit tests of common/proto.c's send and receive over a real
 * SOCK_SEQPACKET socketpair: every type, descriptors passed with a
 * message, malformed and oversized packets, a closed peer. The table of
 * types is in proto_cases.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "proto_cases.h"

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
