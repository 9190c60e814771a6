/*
 * The wire protocol spoken by hand, as the shim and gpufracctl speak it:
 * a client's HELLO, DEVICE_OPEN, RESERVE and ROLLBACK, and the STATUS and
 * PS queries the bench uses to find the device and watch a waiter.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "bench.h"
#include "log.h"
#include "proto.h"
#include "sock.h"

int
wire_connect(const char *path)
{
	struct timeval tv = { 10, 0 };
	char err[SOCK_ERR_LEN];
	int fd;

	if ((fd = sock_connect(path, err, sizeof(err))) < 0)
		return -1;
	/* A daemon that stops answering fails the measurement, not the run. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The next message for seq; what the daemon says unasked is skipped. */
static int
wire_recv(int fd, uint32_t seq, struct gf_msg *m)
{
	const char *why;
	int r;

	for (;;) {
		if ((r = proto_recv(fd, m, 0, &why)) != 1) {
			if (r == -2)
				log_warnx("bad message from gpufracd: %s", why);
			else if (r == 0)
				errno = ECONNRESET;
			return -1;
		}
		if (m->hdr.seq == seq)
			return 0;
	}
}

int
wire_call(int fd, uint16_t type, uint32_t seq, const void *payload,
    struct gf_msg *reply)
{
	if (proto_send(fd, type, seq, payload) < 0)
		return -1;
	return wire_recv(fd, seq, reply);
}

int
wire_client(const char *path, const uint8_t uuid[GF_UUID_LEN])
{
	struct gf_device_open o;
	struct gf_hello h;
	struct gf_msg m;
	int fd;

	if ((fd = wire_connect(path)) < 0)
		return -1;
	memset(&h, 0, sizeof(h));
	h.priority = INT32_MIN;
	h.resolver = GF_UNSET;
	h.wait_timeout_ms = GF_UNSET;
	if (wire_call(fd, GF_MSG_HELLO, 1, &h, &m) < 0 ||
	    m.hdr.type != GF_MSG_HELLO_OK)
		goto out_close;
	memset(&o, 0, sizeof(o));
	memcpy(o.uuid, uuid, GF_UUID_LEN);
	o.limit_kind = GF_LIMIT_NONE;
	if (wire_call(fd, GF_MSG_DEVICE_OPEN, 2, &o, &m) < 0 ||
	    m.hdr.type != GF_MSG_DEVICE_INFO)
		goto out_close;
	return fd;

out_close:
	close(fd);
	return -1;
}

int
wire_reserve(int fd, uint32_t seq, const uint8_t uuid[GF_UUID_LEN],
    uint64_t size)
{
	struct gf_reserve r;
	struct gf_msg m;

	memset(&r, 0, sizeof(r));
	memcpy(r.uuid, uuid, GF_UUID_LEN);
	r.size = size;
	r.kind = GF_KIND_MEM;
	if (wire_call(fd, GF_MSG_RESERVE, seq, &r, &m) < 0)
		return -1;
	return m.hdr.type == GF_MSG_GRANT ? 0 : -1;
}

int
wire_rollback(int fd, uint32_t seq, const uint8_t uuid[GF_UUID_LEN],
    uint64_t size)
{
	struct gf_rollback rb;

	memset(&rb, 0, sizeof(rb));
	memcpy(rb.uuid, uuid, GF_UUID_LEN);
	rb.size = size;
	return proto_send(fd, GF_MSG_ROLLBACK, seq, &rb);
}

int
wire_status(const char *path, uint8_t uuid[GF_UUID_LEN], uint32_t *nclients)
{
	struct gf_msg m;
	int fd, found = 0, r = -1;

	if ((fd = wire_connect(path)) < 0)
		return -1;
	if (wire_call(fd, GF_MSG_STATUS_REQ, 1, NULL, &m) < 0 ||
	    m.hdr.type != GF_MSG_STATUS)
		goto out_close;
	*nclients = m.u.status.nclients;
	while (wire_recv(fd, 1, &m) == 0) {
		if (m.hdr.type == GF_MSG_DEVICE_STATUS && !found) {
			memcpy(uuid, m.u.device_status.uuid, GF_UUID_LEN);
			found = 1;
		} else if (m.hdr.type == GF_MSG_DEVICE_END) {
			r = found ? 0 : -1;
			break;
		}
	}
out_close:
	close(fd);
	return r;
}

int
wire_client_state(const char *path, uint32_t pid)
{
	struct gf_msg m;
	int fd, state = -1;

	if ((fd = wire_connect(path)) < 0)
		return -1;
	if (proto_send(fd, GF_MSG_PS_REQ, 1, NULL) < 0)
		goto out_close;
	while (wire_recv(fd, 1, &m) == 0) {
		if (m.hdr.type == GF_MSG_CLIENT && m.u.client.pid == pid)
			state = (int)m.u.client.state;
		else if (m.hdr.type != GF_MSG_CLIENT)
			break;
	}
out_close:
	close(fd);
	return state;
}
