/*
 * The daemon client's per-device state: a device's UUID, the limit in
 * force on it and its capacity, as the daemon states them, and opening
 * devices on a connection (DEVICE_OPEN).
 */
#include <stdio.h>
#include <string.h>

#include "client_int.h"
#include "env.h"
#include "gpufrac/proto.h"
#include "log.h"
#include "proto.h"
#include "real.h"
#include "shim.h"
#include "units.h"
#include "uuid.h"

struct client_device client_devs[SHIM_MAX_DEVICES];

/* ---- devices ---------------------------------------------------------- */

int
client_device_valid(int dev)
{
	static int said;

	if (dev >= 0 && dev < SHIM_MAX_DEVICES)
		return 1;
	if (shim_once(&said))
		log_errx("device %d is beyond the %d devices gpufrac accounts "
		    "for; its memory is not accounted", dev, SHIM_MAX_DEVICES);
	return 0;
}

static int
client_device_uuid(int dev)
{
	struct client_device *d = &client_devs[dev];
	CUresult r = CUDA_ERROR_NOT_FOUND;
	CUuuid u;

	if (real_cu.cuDeviceGetUuid_v2 != NULL)
		r = real_cu.cuDeviceGetUuid_v2(&u, dev);
	else if (real_cu.cuDeviceGetUuid_v1 != NULL)
		r = real_cu.cuDeviceGetUuid_v1(&u, dev);
	if (r != CUDA_SUCCESS) {
		if (shim_once(&d->said_uuid))
			log_errx("cannot get the UUID of device %d (CUresult "
			    "%d); its memory is not accounted", dev, (int)r);
		return -1;
	}
	memcpy(d->uuid, u.bytes, GF_UUID_LEN);
	d->uuid_known = 1;
	return 0;
}

/* The driver's total of dev, asked once; 0 if it will not say. */
static uint64_t
client_device_total(int dev)
{
	struct client_device *d = &client_devs[dev];
	size_t bytes;

	if (d->real_total == 0 && real_cu.cuDeviceTotalMem_v2 != NULL &&
	    real_cu.cuDeviceTotalMem_v2(&bytes, dev) == CUDA_SUCCESS)
		d->real_total = bytes;
	return d->real_total;
}

/*
 * The limit in force on dev: the daemon's last word, else the process's
 * own request resolved against the driver's total, else none.
 */
uint64_t
client_device_limit(int dev)
{
	struct client_device *d = &client_devs[dev];
	const struct limit_one *req = &shim_env.limit.dev[dev];
	uint64_t total;

	if (d->have_limit)
		return d->limit;
	if (req->kind == GF_LIMIT_NONE)
		return UINT64_MAX;
	if (req->kind == GF_LIMIT_BYTES)
		return req->value;
	if ((total = client_device_total(dev)) == 0) {
		if (shim_once(&d->said_total))
			log_errx("cannot get the total memory of device %d; "
			    "its percentage limit is not enforced", dev);
		return UINT64_MAX;
	}
	return limit_resolve(req->kind, req->value, total);
}

/*
 * What a message from the daemon says about dev's limit and capacity.
 * Applied as the message is read, under the lock, so that a later word
 * (a limit update after a reload) is never overwritten by an earlier one.
 */
void
client_device_note(int dev, const struct gf_msg *m)
{
	struct client_device *d = &client_devs[dev];

	switch (m->hdr.type) {
	case GF_MSG_DEVICE_INFO:
		if (memcmp(m->u.device_info.uuid, d->uuid, GF_UUID_LEN) != 0)
			return;		/* the caller says what is wrong */
		d->have_limit = 1;
		d->limit = m->u.device_info.limit;
		d->have_capacity = 1;
		d->capacity = m->u.device_info.capacity;
		d->overhead = m->u.device_info.overhead;
		d->taken = m->u.device_info.taken;
		break;
	case GF_MSG_GRANT:
		d->have_limit = 1;
		d->limit = m->u.grant.limit;
		break;
	case GF_MSG_DENY:
		if (m->u.deny.reason != GF_DENY_UNKNOWN_DEVICE) {
			d->have_limit = 1;
			d->limit = m->u.deny.limit;
		}
		break;
	}
}

/*
 * A message the daemon sent unasked (seq 0). DEVICE_INFO restates a
 * device's limit and capacity, after a reload changed them, or what
 * others hold of them (view.h); anything else is not for this version of
 * the shim. Lock held.
 */
void
client_unsolicited(const struct gf_msg *m)
{
	const struct gf_device_info *di = &m->u.device_info;
	char ubuf[UUID_STR_LEN], b1[16], b2[16], b3[16];
	int dev, known = 0;

	if (m->hdr.type == GF_MSG_MOVE) {
		client_move(m->u.move.direction, m->u.move.id);
		return;
	}
	if (m->hdr.type != GF_MSG_DEVICE_INFO) {
		log_debug("ignoring an unsolicited %s from gpufracd",
		    proto_type_name(m->hdr.type));
		return;
	}
	uuid_format(di->uuid, ubuf, sizeof(ubuf));
	for (dev = 0; dev < SHIM_MAX_DEVICES; dev++) {
		if (!client_devs[dev].uuid_known || memcmp(client_devs[dev].uuid,
		    di->uuid, GF_UUID_LEN) != 0)
			continue;
		known = 1;
		client_device_note(dev, m);
		log_info("gpufracd says device %d (%s): limit %s, capacity %s, "
		    "context %s", dev, ubuf, size_format(di->limit, b1,
		    sizeof(b1)), size_format(di->capacity, b2, sizeof(b2)),
		    size_format(di->overhead, b3, sizeof(b3)));
	}
	if (!known)
		log_debug("ignoring a limit for device %s, which this process "
		    "does not use", ubuf);
}

/*
 * The slot of the device with this UUID: one this process uses through
 * CUDA, or one taken from the top for a management query. -1 if full.
 * Lock held.
 */
int
client_device_by_uuid(const uint8_t uuid[GF_UUID_LEN])
{
	int dev;

	for (dev = 0; dev < SHIM_MAX_DEVICES; dev++)
		if (client_devs[dev].uuid_known &&
		    memcmp(client_devs[dev].uuid, uuid, GF_UUID_LEN) == 0)
			return dev;
	for (dev = SHIM_MAX_DEVICES - 1; dev >= 0; dev--)
		if (!client_devs[dev].uuid_known && !client_devs[dev].in_use) {
			memcpy(client_devs[dev].uuid, uuid, GF_UUID_LEN);
			client_devs[dev].uuid_known = 1;
			return dev;
		}
	return -1;
}

/* ---- opening devices -------------------------------------------------- */

static void
client_device_open_msg(int dev, struct gf_device_open *o)
{
	const struct limit_one *req = &shim_env.limit.dev[dev];

	memset(o, 0, sizeof(*o));
	memcpy(o->uuid, client_devs[dev].uuid, GF_UUID_LEN);
	o->ordinal = (uint32_t)dev;
	o->limit_kind = req->kind;
	o->limit_value = req->value;
}

/*
 * The daemon's answer m to DEVICE_OPEN of dev, whose limit, if any, is
 * noted already. -1 (why set) when it is no answer to that.
 */
static int
client_device_opened(int dev, const struct gf_msg *m, char *why,
    size_t whylen)
{
	struct client_device *d = &client_devs[dev];
	char ubuf[UUID_STR_LEN];

	uuid_format(d->uuid, ubuf, sizeof(ubuf));
	switch (m->hdr.type) {
	case GF_MSG_DEVICE_INFO:
		if (memcmp(m->u.device_info.uuid, d->uuid, GF_UUID_LEN) != 0) {
			snprintf(why, whylen, "DEVICE_INFO names another "
			    "device");
			return -1;
		}
		log_debug("device %d (%s): limit %llu, capacity %llu", dev,
		    ubuf, (unsigned long long)m->u.device_info.limit,
		    (unsigned long long)m->u.device_info.capacity);
		return 0;
	case GF_MSG_ERROR:
		/* Its RESERVEs will be denied: the daemon decides. */
		if (shim_once(&d->said_refused))
			log_errx("gpufracd refused device %d (%s): %s", dev,
			    ubuf, m->u.error.msg);
		return 0;
	default:
		client_unexpected(m, GF_MSG_DEVICE_OPEN, why, whylen);
		return -1;
	}
}

/* DEVICE_OPEN on fd, a connection not shared yet. Lock held. */
int
client_device_open_new(int fd, unsigned gen, int dev, char *why,
    size_t whylen)
{
	struct gf_device_open o;
	struct gf_msg m;

	client_device_open_msg(dev, &o);
	if (client_exchange(fd, GF_MSG_DEVICE_OPEN, &o, -1, &m, 1, why,
	    whylen) < 0)
		return -1;
	client_device_note(dev, &m);
	if (client_device_opened(dev, &m, why, whylen) < 0)
		return -1;
	client_devs[dev].open_gen = gen;
	return 0;
}

/*
 * DEVICE_OPEN on the live connection. Requests sent after it are served
 * after it, so dev counts as opened from the moment it is sent: another
 * thread's RESERVE need not wait for its reply. Lock held, released while
 * waiting.
 */
void
client_device_open_live(int dev)
{
	char why[CLIENT_WHY_LEN];
	struct gf_device_open o;
	struct gf_msg m;
	unsigned gen;

	client_device_open_msg(dev, &o);
	client_devs[dev].open_gen = client_gen;
	if (client_call(GF_MSG_DEVICE_OPEN, dev, &o, &m, &gen) < 0)
		return;
	if (client_device_opened(dev, &m, why, sizeof(why)) < 0 &&
	    gen == client_gen)
		client_lost(why);
}

/* Make dev known (UUID) and opened on the live connection; -1: unaccounted. */
int
client_device_prepare(int dev)
{
	struct client_device *d = &client_devs[dev];

	if (!d->uuid_known && client_device_uuid(dev) < 0)
		return -1;
	d->in_use = 1;
	if (client_up && d->open_gen != client_gen)
		client_device_open_live(dev);
	return 0;
}
