/*
 * Unit tests of common/proto.c's codec: validation of every message type
 * (proto_check), type names, packing and proto_strlcpy. Send and receive
 * over a socket are in test_proto_io.c; the table of types in
 * proto_cases.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "proto_cases.h"

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

/*
 * A type as long as GF_MSG_MAX allows (EVENT) is one byte past the
 * message: the buffer has room for it (a receiver's is checked by
 * proto_recv, "packet longer than any message").
 */
static void
test_every_type_one_byte_long(void **state)
{
	union {
		struct gf_msg	m;
		unsigned char	room[sizeof(struct gf_msg) + 8];
	} u;
	size_t i, n;

	(void)state;
	for (i = 0; i < NITEMS(types); i++) {
		n = packet_make(&u.m, &types[i], types[i].size + 1);
		check_fails(&u.m, n, WHY_LONG, types[i].name);
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
		if (tc->first > 0) {
			n = packet_make(&m, tc, tc->first - 1);
			check_fails(&m, n, WHY_SHORT, tc->name);
		}
		n = packet_make(&m, tc, tc->first + 1);
		check_fails(&m, n, WHY_SHORT, tc->name);
	}
	/*
	 * HELLO, SWAP_IN, CLIENT, STATUS, DEVICE_INFO, MOVED, EVENT,
	 * GROUP_STATUS, DEVICE_STATUS
	 */
	assert_int_equal(grown, 9);
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

/* The codec knows exactly the types of the table, and no other number. */
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
 * numbers without a row in proto_cases.h's table makes this test fail.
 */
static void
test_unknown_type(void **state)
{
	static const uint16_t unknown[] = {
		0, GF_MSG_MOVED + 1, GF_MSG_STATUS_REQ - 1,
		GF_MSG_DISCONNECT_REQ + 1, GF_MSG_HELLO_OK - 1,
		GF_MSG_WALL_END + 1, 0x7fff, 0xffff,
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
	 * DEVICE_STATUS name and driver_reason, CLIENT group and version,
	 * GROUP_STATUS name, EVENT group, reason and reason_more, GROUP_RULE
	 * rule, GROUP_SET and GROUP_RM name, MOVED what, WALL group and dir
	 */
	assert_int_equal(nstr, 18);
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
	/* No payload: the first size, where a type grew from nothing. */
	assert_int_equal(proto_pack(&m, GF_MSG_SWAP_IN, 3, NULL),
	    (ssize_t)sizeof(m.hdr));
	assert_int_equal(proto_check(&m, sizeof(m.hdr), &why), 0);
	errno = 0;
	assert_int_equal(proto_pack(&m, GF_MSG_RESERVE, 3, NULL), -1);
	assert_int_equal(errno, EINVAL);
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

/*
 * An event's reason longer than its field goes on in reason_more, and
 * comes back whole; one longer than both is cut; a short one leaves
 * reason_more empty, as an older daemon's.
 */
static void
test_event_reason(void **state)
{
	char want[PROTO_REASON_MAX + 16], got[PROTO_REASON_MAX];
	struct gf_event e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) - 1; i++)
		want[i] = (char)('a' + i % 26);
	want[130] = '\0';
	memset(&e, 'z', sizeof(e));
	proto_event_reason_set(&e, want);
	assert_int_equal(strlen(e.reason), GF_REASON_LEN - 1);
	assert_int_equal(strlen(e.reason_more), 130 - (GF_REASON_LEN - 1));
	proto_event_reason(&e, got);
	assert_string_equal(got, want);
	want[130] = 'x';
	want[sizeof(want) - 1] = '\0';
	proto_event_reason_set(&e, want);
	proto_event_reason(&e, got);
	assert_int_equal(strlen(got), PROTO_REASON_MAX - 1);
	assert_memory_equal(got, want, PROTO_REASON_MAX - 1);
	proto_event_reason_set(&e, "short");
	assert_string_equal(e.reason_more, "");
	proto_event_reason(&e, got);
	assert_string_equal(got, "short");
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
		cmocka_unit_test(test_event_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
