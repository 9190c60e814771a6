/*
 * The ledger: each device's shareable capacity and each client's charge on
 * it, with the allocation records behind every charge. Pure arithmetic: no
 * I/O besides log lines about broken invariants, no clock (callers pass the
 * time), no sockets, no policy (a collision is reported, not resolved).
 *
 * Invariants, per client and device:
 *   usage.used   == usage.pending + sum of the client's allocation sizes
 *   device.used  == sum over clients of usage.used
 * Nothing ever wraps below zero: a subtraction that would (a broken
 * invariant, or a client returning more than it holds) is clamped at zero
 * and logged.
 */
#ifndef GF_DAEMON_LEDGER_H
#define GF_DAEMON_LEDGER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "gpufrac/proto.h"
#include "ptrmap.h"

#define LEDGER_GROUP_DEFAULT	"default"

struct ledger_device {
	uint8_t		uuid[GF_UUID_LEN];
	char		name[GF_NAME_LEN];
	uint32_t	index;		/* driver ordinal, all devices visible */
	uint32_t	swap_support;
	uint64_t	total;		/* as the driver reports */
	uint64_t	reserve;	/* kept back by configuration */
	uint64_t	capacity;	/* total - reserve */
	uint64_t	used;		/* charged to clients */
	uint32_t	nclients;	/* clients that opened it */
};

/* One live allocation, as the client committed it. */
struct ledger_alloc {
	uint64_t	ptr;
	uint64_t	size;
	uint64_t	time_ms;	/* when it was committed */
	uint32_t	kind;		/* GF_KIND_* */
	uint32_t	device;		/* index into ledger.devices */
};

/* A client's standing on one device. */
struct ledger_usage {
	int		opened;		/* DEVICE_OPEN accepted */
	uint32_t	req_kind;	/* the limit it asked for: GF_LIMIT_* */
	uint64_t	req_value;
	uint64_t	limit;		/* effective limit, bytes */
	uint64_t	used;		/* pending + committed allocations */
	uint64_t	pending;	/* reserved, not yet committed */
};

struct ledger_client {
	TAILQ_ENTRY(ledger_client) entry;
	uint32_t	pid;
	uint32_t	uid;
	uint32_t	gid;
	uint32_t	state;		/* GF_STATE_* */
	char		*cgroup;	/* "/user.slice/...", or "" if unknown */
	char		group[GF_GROUP_LEN];
	uint64_t	guarantee;
	struct ledger_usage *usage;	/* one per device */
	struct ptrmap	allocs;		/* ptr -> struct ledger_alloc */
};

TAILQ_HEAD(ledger_clients, ledger_client);

struct ledger {
	struct ledger_device *devices;
	size_t		ndevices;
	uint32_t	default_kind;	/* default_limit: GF_LIMIT_* */
	uint64_t	default_value;
	struct ledger_clients clients;	/* in order of arrival */
	size_t		nclients;
};

/* What ledger_reserve decided. */
enum {
	LEDGER_GRANT = 0,
	LEDGER_LIMIT,		/* beyond the client's own limit */
	LEDGER_COLLISION,	/* within the limit, the device is full */
	LEDGER_NOT_OPEN,	/* the client has not opened the device */
};

/* An empty ledger whose default limit is 100% of each device. */
void	ledger_init(struct ledger *l);
/* Drops every client, then the devices. */
void	ledger_free(struct ledger *l);

/*
 * Add a device (before any client exists); reserve 0, capacity = total.
 * name is truncated to fit. Returns its index, or -1 (ENOMEM, or clients
 * exist: EBUSY).
 */
int	ledger_device_add(struct ledger *l, const uint8_t uuid[GF_UUID_LEN],
	    uint32_t index, const char *name, uint64_t total,
	    uint32_t swap_support);
/* The device's index in l->devices, or -1. */
int	ledger_device_find(const struct ledger *l,
	    const uint8_t uuid[GF_UUID_LEN]);

/*
 * Configuration. Both recompute every client's effective limit; a client
 * already above its new limit keeps what it holds and gets no more. A
 * reserve above the device's total is clamped to it (callers validate).
 */
void	ledger_set_reserve(struct ledger *l, size_t dev, uint64_t reserve);
void	ledger_set_default_limit(struct ledger *l, uint32_t kind,
	    uint64_t value);

/*
 * The effective limit on dev of a client asking for (kind, value):
 * min(what it asks for, default_limit), both resolved against the device's
 * capacity; GF_LIMIT_NONE asks for nothing.
 */
uint64_t ledger_limit(const struct ledger *l, size_t dev, uint32_t kind,
	    uint64_t value);

/*
 * A new client in group "default", state running, guarantee 0. cgroup is
 * copied (NULL = unknown). Returns NULL on ENOMEM.
 */
struct ledger_client *ledger_client_new(struct ledger *l, uint32_t pid,
	    uint32_t uid, uint32_t gid, const char *cgroup);
/* Return the client's whole charge on every device and free it. */
void	ledger_client_drop(struct ledger *l, struct ledger_client *c);
/* The first client with pid after `after` (NULL: from the start), or NULL. */
struct ledger_client *ledger_client_find(const struct ledger *l,
	    uint32_t pid, const struct ledger_client *after);
/* What the client holds on all devices together. */
uint64_t ledger_client_used(const struct ledger *l,
	    const struct ledger_client *c);

/* Open dev for c (again: the new request replaces the old). */
void	ledger_open(struct ledger *l, struct ledger_client *c, size_t dev,
	    uint32_t kind, uint64_t value);

/*
 * Charge size on dev to c if it is within c's limit and fits the device;
 * returns LEDGER_GRANT (charged, as pending) or why not (nothing charged).
 */
int	ledger_reserve(struct ledger *l, struct ledger_client *c, size_t dev,
	    uint64_t size);

/*
 * Turn a reserve into an allocation of size at ptr: the pending `reserved`
 * becomes `size` (reserved 0: an allocation that already exists, charged
 * whatever the limit). A ptr already recorded is replaced. Returns 0, -1
 * with errno EINVAL when dev is not open, or ENOMEM (the charge stands, the
 * record is lost).
 */
int	ledger_commit(struct ledger *l, struct ledger_client *c, size_t dev,
	    uint64_t ptr, uint64_t reserved, uint64_t size, uint32_t kind,
	    uint64_t now_ms);

/* Return a pending reserve of size. -1 (EINVAL) when dev is not open. */
int	ledger_rollback(struct ledger *l, struct ledger_client *c, size_t dev,
	    uint64_t size);

/*
 * Return the allocation at ptr and drop its record. Returns 0, or -1 when
 * the client has no allocation there.
 */
int	ledger_release(struct ledger *l, struct ledger_client *c, uint64_t ptr);

#endif
