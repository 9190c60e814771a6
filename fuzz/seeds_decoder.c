/*
 * The decoder target's seed corpus (FUZZ_TARGET=decoder, harness.c): an
 * input there is one connection of the fuzzer's own process, its packets
 * each a 16-bit little-endian length and that many bytes. seeds-decoder
 * DIR writes into DIR one input per kind of message a peer sends the
 * daemon, valid and where it is valid (a shim's after its HELLO and
 * DEVICE_OPEN), msg-KIND; a whole shim conversation; and the reproducers
 * of the bugs found so far in that format, regress-NAME. make fuzz-seeds
 * writes fuzz/corpus-decoder, which make fuzz starts the decoder target
 * from and make check replays (fuzz_replay.sh). It fails if a kind that
 * proto.c knows a peer may send has no seed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "gpufrac/proto.h"
#include "proto.h"

#define MiB		(1ull << 20)
#define GiB		(1ull << 30)
#define PTR(n)		(0x7f0000000000ull + (uint64_t)(n) * GiB)

struct input {
	uint8_t		 buf[4096];
	size_t		 n;
	uint32_t	 seq;
};

/* One packet of type with payload (as proto_pack takes it). */
static void
pkt(struct input *in, uint16_t type, const void *payload)
{
	struct gf_msg m;
	ssize_t n = proto_pack(&m, type, ++in->seq, payload);
	uint16_t len;

	if (n < 0 || in->n + sizeof(len) + (size_t)n > sizeof(in->buf)) {
		fprintf(stderr, "seeds-decoder: cannot add a %s\n",
		    proto_type_name(type));
		exit(1);
	}
	len = (uint16_t)n;	/* little-endian: proto.h asserts it */
	memcpy(in->buf + in->n, &len, sizeof(len));
	memcpy(in->buf + in->n + sizeof(len), &m, (size_t)n);
	in->n += sizeof(len) + (size_t)n;
}

/* A shim's HELLO, and the DEVICE_OPEN of the world's first GPU. */
static void
shim(struct input *in, int open)
{
	struct gf_hello h = { .priority = INT32_MIN, .resolver = GF_UNSET,
	    .wait_timeout_ms = GF_UNSET, .version = "fuzz" };
	struct gf_device_open o = { .limit_kind = GF_LIMIT_NONE };

	pkt(in, GF_MSG_HELLO, &h);
	memset(o.uuid, FZ_UUID_BYTE(0), GF_UUID_LEN);
	if (open)
		pkt(in, GF_MSG_DEVICE_OPEN, &o);
}

/* RESERVE (when reserved), then COMMIT: reserved 0 is a re-registration. */
static void
alloc(struct input *in, uint64_t ptr, uint64_t reserved, uint64_t size)
{
	struct gf_reserve r = { .size = reserved, .kind = GF_KIND_MEM,
	    .flags = GF_RESERVE_LEASE };
	struct gf_commit c = { .ptr = ptr, .reserved = reserved,
	    .size = size, .kind = GF_KIND_MEM };

	memset(r.uuid, FZ_UUID_BYTE(0), GF_UUID_LEN);
	memcpy(c.uuid, r.uuid, GF_UUID_LEN);
	if (reserved != 0)
		pkt(in, GF_MSG_RESERVE, &r);
	pkt(in, GF_MSG_COMMIT, &c);
}

/* Messages whose payload is a device's uuid and a size. */
static void
sized(struct input *in, uint16_t type, uint64_t size)
{
	union {
		struct gf_reserve	reserve;
		struct gf_rollback	rollback;
		struct gf_lease		lease;
		struct gf_ctx_end	ctx_end;
	} u;

	memset(&u, 0, sizeof(u));
	memset(u.lease.uuid, FZ_UUID_BYTE(0), GF_UUID_LEN);
	if (type == GF_MSG_RESERVE) {
		u.reserve.size = size;
		u.reserve.kind = GF_KIND_MEM;
	} else if (type == GF_MSG_CTX_END) {
		u.ctx_end.bytes = size;
		u.ctx_end.count = 1;
	} else
		u.lease.size = size;	/* rollback's too: the same place */
	pkt(in, type, &u);
}

/* A run-time group with one rule (GROUP_RULE, GROUP_SET). */
static void
group(struct input *in, const char *rule)
{
	struct gf_group_rule r = { { 0 } };
	struct gf_group_set g = { .name = "fuzzdec", .nrules = 1,
	    .limit_kind = GF_LIMIT_BYTES, .limit_value = GiB,
	    .guarantee_kind = GF_LIMIT_NONE, .resolver = GF_RESOLVER_WAIT,
	    .on_preempt = GF_UNSET, .wait_timeout_ms = GF_UNSET };

	proto_strlcpy(r.rule, rule, sizeof(r.rule));
	pkt(in, GF_MSG_GROUP_RULE, &r);
	pkt(in, GF_MSG_GROUP_SET, &g);
}

/* One valid message of the kind, after what makes it valid. */
static void
one(struct input *in, uint16_t type)
{
	static const uint32_t none[2];
	struct gf_free f = { PTR(1) };
	struct gf_swap_in si = { GF_SWAPIN_CALL };
	struct gf_moved mv = { .direction = GF_SWAP_OUT, .id = 1 };
	struct gf_allocs_req ar = { 0 };
	struct gf_events_req er = { 0 };
	struct gf_swap_req sr = { 0, GF_SWAP_OUT };
	struct gf_group_rm rm = { "fuzzdec" };
	struct gf_limit_req lr = { .index = GF_UNSET,
	    .limit_kind = GF_LIMIT_PERCENT, .limit_value = 5000 };
	struct gf_disconnect_req dr = { 0 };

	switch (type) {
	case GF_MSG_HELLO:
	case GF_MSG_DEVICE_OPEN:
		shim(in, type == GF_MSG_DEVICE_OPEN);
		return;
	case GF_MSG_RESERVE:
	case GF_MSG_ROLLBACK:
		shim(in, 1);
		sized(in, GF_MSG_RESERVE, 64 * MiB);
		if (type == GF_MSG_ROLLBACK)
			sized(in, type, 64 * MiB);
		return;
	case GF_MSG_COMMIT:
	case GF_MSG_FREE:
	case GF_MSG_CTX_END:
	case GF_MSG_LEASE_RETURN:
		shim(in, 1);
		alloc(in, PTR(1), 64 * MiB, 64 * MiB);
		if (type == GF_MSG_FREE)
			pkt(in, type, &f);
		else if (type != GF_MSG_COMMIT)
			sized(in, type, 4 * MiB);
		return;
	case GF_MSG_LEASE_RESTORE:
		shim(in, 1);
		sized(in, type, 4 * MiB);
		return;
	case GF_MSG_SWAP_IN:
	case GF_MSG_MOVED:
		shim(in, 0);
		pkt(in, type, type == GF_MSG_SWAP_IN ? (void *)&si :
		    (void *)&mv);
		return;
	case GF_MSG_STATUS_REQ:
	case GF_MSG_WALLS_REQ:
	case GF_MSG_PS_REQ:
	case GF_MSG_RELOAD_REQ:
		pkt(in, type, none);
		return;
	case GF_MSG_ALLOCS_REQ:
		pkt(in, type, &ar);
		return;
	case GF_MSG_EVENTS_REQ:
		pkt(in, type, &er);
		return;
	case GF_MSG_SWAP_REQ:
		pkt(in, type, &sr);
		return;
	case GF_MSG_GROUP_RULE:
	case GF_MSG_GROUP_SET:
		group(in, type == GF_MSG_GROUP_RULE ?
		    "cgroup:/fuzz.slice/dec.scope" : "uid:4242");
		return;
	case GF_MSG_GROUP_RM:
		group(in, "gid:4242");
		pkt(in, type, &rm);
		return;
	case GF_MSG_LIMIT_REQ:
		pkt(in, type, &lr);
		return;
	case GF_MSG_DISCONNECT_REQ:
		pkt(in, type, &dr);
		return;
	}
	fprintf(stderr, "seeds-decoder: no seed for a %s\n",
	    proto_type_name(type));
	exit(1);
}

static void
write_input(const char *dir, const char *name, const struct input *in)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fp = fopen(path, "wb")) == NULL ||
	    fwrite(in->buf, 1, in->n, fp) != in->n || fclose(fp) != 0) {
		fprintf(stderr, "seeds-decoder: cannot write '%s': %s\n", path,
		    strerror(errno));
		exit(1);
	}
}

int
main(int argc, char *argv[])
{
	static struct input in;
	char name[64];
	uint16_t t;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: seeds-decoder directory\n");
		return 2;
	}
	/* Every kind a peer sends: those below the daemon's replies. */
	for (t = 1; t < GF_MSG_HELLO_OK; t++) {
		if (strcmp(proto_type_name(t), "unknown") == 0)
			continue;
		memset(&in, 0, sizeof(in));
		one(&in, t);
		snprintf(name, sizeof(name), "msg-%s", proto_type_name(t));
		for (i = 0; name[i] != '\0'; i++)
			name[i] = name[i] == '_' ? '-' :
			    (char)tolower((unsigned char)name[i]);
		write_input(argv[1], name, &in);
	}

	/* A shim's whole conversation, as libgpufrac holds it. */
	memset(&in, 0, sizeof(in));
	shim(&in, 1);
	alloc(&in, PTR(1), 256 * MiB, 256 * MiB);
	sized(&in, GF_MSG_RESERVE, GiB);
	sized(&in, GF_MSG_ROLLBACK, GiB);
	alloc(&in, PTR(2), 4 * MiB, 4 * MiB);
	sized(&in, GF_MSG_LEASE_RETURN, 4 * MiB);
	pkt(&in, GF_MSG_FREE, &(struct gf_free){ PTR(1) });
	sized(&in, GF_MSG_CTX_END, 2 * MiB);
	pkt(&in, GF_MSG_SWAP_IN, &(struct gf_swap_in){ GF_SWAPIN_CALL });
	write_input(argv[1], "conversation", &in);

	/*
	 * fuzz/README, regress/commit-saturates: re-registrations of 2^63
	 * bytes each, which the ledger cannot count together.
	 */
	memset(&in, 0, sizeof(in));
	shim(&in, 1);
	alloc(&in, PTR(1), 0, 1ull << 63);
	alloc(&in, PTR(2), 0, 1ull << 63);
	write_input(argv[1], "regress-commit-saturates", &in);
	return 0;
}
