/*
 * A PS_REQ on a connection of its own: the records of every client, read
 * until CLIENT_END within the reply timeout, reduced to this process's
 * group on one device.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "peers.h"
#include "proto.h"
#include "sock.h"

#define PEERS_TIMEOUT_MS	5000
#define PEERS_MAX		4096	/* records read, at most */

/* The next message within the deadline: 1, or 0 on anything else. */
static int
peers_next(int fd, struct gf_msg *m, const struct timespec *deadline)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct timespec now;
	const char *why;
	long left;

	clock_gettime(CLOCK_MONOTONIC, &now);
	left = (deadline->tv_sec - now.tv_sec) * 1000 +
	    (deadline->tv_nsec - now.tv_nsec) / 1000000;
	if (left <= 0 || poll(&p, 1, (int)left) != 1)
		return 0;
	return proto_recv(fd, m, MSG_DONTWAIT, &why) == 1;
}

long
peers_of_group(const uint8_t uuid[GF_UUID_LEN], uint32_t *pids, size_t max)
{
	struct gf_client *recs = NULL;
	struct timespec deadline;
	char err[SOCK_ERR_LEN], group[GF_GROUP_LEN] = "";
	uint32_t self = (uint32_t)getpid();
	struct gf_msg m;
	size_t n = 0, i;
	long k = -1;
	int fd;

	if ((fd = sock_connect(shim_env.socket, err, sizeof(err))) < 0)
		return -1;
	if ((recs = calloc(PEERS_MAX, sizeof(*recs))) == NULL ||
	    proto_send(fd, GF_MSG_PS_REQ, 1, NULL) < 0)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += PEERS_TIMEOUT_MS / 1000;
	memset(&m, 0, sizeof(m));
	while (peers_next(fd, &m, &deadline) && m.hdr.seq == 1 &&
	    m.hdr.type == GF_MSG_CLIENT)
		if (n < PEERS_MAX)
			recs[n++] = m.u.client;
	if (m.hdr.type != GF_MSG_CLIENT_END)
		goto out;
	for (i = 0; i < n; i++)
		if (recs[i].pid == self)
			memcpy(group, recs[i].group, sizeof(group));
	if (group[0] == '\0')
		goto out;	/* the daemon does not know us */
	k = 0;
	for (i = 0; i < n && (size_t)k < max; i++)
		if (memcmp(recs[i].uuid, uuid, GF_UUID_LEN) == 0 &&
		    (recs[i].pid == self ||
		    (strcmp(group, GF_GROUP_DEFAULT) != 0 &&
		    strncmp(recs[i].group, group, sizeof(group)) == 0)))
			pids[k++] = recs[i].pid;
out:
	free(recs);
	close(fd);
	return k;
}
