/*
 * For the common/proto.c tests (test_proto.c, test_proto_io.c): every
 * message type as include/gpufrac/proto.h defines it, the reasons
 * proto_check gives, and valid packets of each type. Include after
 * cmocka.h.
 */
#ifndef GF_TEST_PROTO_CASES_H
#define GF_TEST_PROTO_CASES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
	struct type_string	 str[3];
};

#define STR(s, f)	{ offsetof(struct s, f), sizeof(((struct s *)0)->f), #f }
#define NOSTR		{ 0, 0, NULL }
#define T0(t)		{ GF_MSG_##t, #t, 0, 0, { NOSTR, NOSTR, NOSTR } }
#define T(t, s)		{ GF_MSG_##t, #t, sizeof(struct s), sizeof(struct s), \
			  { NOSTR, NOSTR, NOSTR } }
#define TS(t, s, f)	{ GF_MSG_##t, #t, sizeof(struct s), sizeof(struct s), \
			  { STR(s, f), NOSTR, NOSTR } }
#define TS2(t, s, f, g)	{ GF_MSG_##t, #t, sizeof(struct s), sizeof(struct s), \
			  { STR(s, f), STR(s, g), NOSTR } }
/* Types that grew at their end (proto.h, Versions): their first sizes. */
#define TG(t, s, n, f)	{ GF_MSG_##t, #t, sizeof(struct s), n, \
			  { STR(s, f), NOSTR, NOSTR } }
#define TGN(t, s, n)	{ GF_MSG_##t, #t, sizeof(struct s), n, \
			  { NOSTR, NOSTR, NOSTR } }
#define TG0(t, s)	{ GF_MSG_##t, #t, sizeof(struct s), 0, \
			  { NOSTR, NOSTR, NOSTR } }
#define TG2(t, s, n, f, g) { GF_MSG_##t, #t, sizeof(struct s), n, \
			  { STR(s, f), STR(s, g), NOSTR } }
#define TG3(t, s, n, f, g, h) { GF_MSG_##t, #t, sizeof(struct s), n, \
			  { STR(s, f), STR(s, g), STR(s, h) } }

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
	TG0(SWAP_IN, gf_swap_in),
	T(LEASE_RETURN, gf_lease),
	T(LEASE_RESTORE, gf_lease),
	T(CTX_END, gf_ctx_end),
	TG(MOVED, gf_moved, 160, what),
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
	T0(WALLS_REQ),
	T(DISCONNECT_REQ, gf_disconnect_req),
	T(HELLO_OK, gf_hello_ok),
	TGN(DEVICE_INFO, gf_device_info, 64),
	T(GRANT, gf_grant),
	T(DENY, gf_deny),
	TS(ERROR, gf_error, msg),
	TG2(STATUS, gf_status, 136, version, swap_reason),
	TG2(DEVICE_STATUS, gf_device_status, 168, name, driver_reason),
	T(DEVICE_END, gf_end),
	TG2(CLIENT, gf_client, 120, group, version),
	T(CLIENT_END, gf_end),
	T(ALLOC, gf_alloc),
	T(ALLOC_END, gf_end),
	T(WAIT, gf_wait),
	TG(GROUP_STATUS, gf_group_status, 104, name),
	T(GROUP_END, gf_end),
	TG3(EVENT, gf_event, 176, group, reason, reason_more),
	T(EVENT_END, gf_end),
	T0(OK),
	T(MOVE, gf_move),
	TS2(WALL, gf_wall, group, dir),
	T(WALL_END, gf_end),
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

#endif /* GF_TEST_PROTO_CASES_H */
