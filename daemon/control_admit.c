/*
 * Who a new connection may be (issue 38 G): a uid past max_per_uid, or
 * anyone but root and admin_group past max_total, is refused with one
 * ERROR and closed, so that the descriptors left are root's and
 * admin_group's; and a connection the daemon has no descriptor to take
 * is refused as well, through a spare one kept for that, never left in
 * the backlog, where its shim would wait and fail open. How a limit's
 * refusal, or control.c's drop of an output queue, is said.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control.h"
#include "control_int.h"
#include "event.h"
#include "log.h"
#include "proto.h"

#define LIMIT_QUIET_MS	60000	/* a refusal is a warning once a minute */

/*
 * Say a refusal or a drop for a limit: always to the layer above (an
 * event), as a warning at most once a minute (a neighbour may knock a
 * thousand times a second), else at debug level.
 */
void
limit_say(struct control *ctl, struct control_quiet *q, const char *why)
{
	uint64_t now = event_now_ms();

	if (q->until != 0 && now < q->until) {
		q->quieted++;
		log_debug("%s", why);
		return;
	}
	log_warnx("%s%s", why, q->quieted ? " (with others since the last "
	    "warning)" : "");
	q->until = now + LIMIT_QUIET_MS;
	q->quieted = 0;
	if (ctl->ops->limited != NULL)
		ctl->ops->limited(ctl->ops->arg, why);
}

/* Whether uid has max_per_uid connections already (root never has). */
static int
uid_full(const struct control *ctl, uint32_t uid)
{
	const struct conn *c;
	uint32_t n = 0;

	if (uid == 0 || ctl->max_per_uid == 0)
		return 0;
	TAILQ_FOREACH(c, &ctl->conns, entry)
		if (c->uid == uid && ++n >= ctl->max_per_uid)
			return 1;
	return 0;
}

/*
 * Refuse the connection fd of pid: one ERROR saying msg, then closed;
 * said as q allows (a kind of refusal each), counted in *count if not
 * NULL.
 */
static void
admit_refuse(struct control *ctl, int fd, int pid, struct control_quiet *q,
    const char *msg, uint64_t *count)
{
	char why[GF_ERRMSG_LEN + 64];
	struct gf_msg m;
	struct gf_error e;
	ssize_t len;

	memset(&e, 0, sizeof(e));
	e.code = GF_ERR_PERMISSION;
	proto_strlcpy(e.msg, msg, sizeof(e.msg));
	if ((len = proto_pack(&m, GF_MSG_ERROR, 0, &e)) > 0)
		(void)send(fd, &m, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
	if (count != NULL)
		(*count)++;
	if (pid > 0)
		snprintf(why, sizeof(why), "refused a connection of pid %d: "
		    "%s", pid, e.msg);
	else
		snprintf(why, sizeof(why), "refused a connection: %s", e.msg);
	limit_say(ctl, q, why);
}

int
control_admit(struct control *ctl, int fd, const struct ucred *cred,
    int *plain)
{
	char msg[GF_ERRMSG_LEN];

	*plain = 0;
	if (cred->uid == 0)
		return 0;
	if (uid_full(ctl, (uint32_t)cred->uid)) {
		snprintf(msg, sizeof(msg), "uid %u has %u connections to "
		    "gpufracd, its max_connections_per_uid",
		    (unsigned)cred->uid, ctl->max_per_uid);
		admit_refuse(ctl, fd, (int)cred->pid, &ctl->quiet_refused, msg,
		    &ctl->refused);
		return -1;
	}
	if (ctl->nplain < ctl->max_total) {
		*plain = 1;
		return 0;
	}
	/* Only now, past the cap: admin_group is asked of the kernel. */
	if (ctl->ops->privileged != NULL && ctl->ops->privileged(ctl->ops->arg,
	    fd, cred))
		return 0;
	snprintf(msg, sizeof(msg), "gpufracd has %u connections of users "
	    "other than root and admin_group, all its descriptors allow",
	    ctl->max_total);
	admit_refuse(ctl, fd, (int)cred->pid, &ctl->quiet_total, msg, NULL);
	return -1;
}

void
control_spare_open(struct control *ctl)
{
	if (ctl->spare < 0)
		ctl->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

int
control_refuse_spare(struct control *ctl, int lfd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd, err;

	if (ctl->spare < 0)
		return -1;
	close(ctl->spare);
	ctl->spare = -1;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	err = errno;
	if (fd >= 0) {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
			cred.pid = 0;
		admit_refuse(ctl, fd, (int)cred.pid, &ctl->quiet_nofd,
		    "gpufracd has no file descriptor left for this "
		    "connection", NULL);
	}
	control_spare_open(ctl);
	if (ctl->spare < 0)
		return -1;
	if (fd >= 0)
		return 1;
	/* accept(2) says EMFILE before it looks at the queue. */
	return err == EAGAIN || err == EWOULDBLOCK ? 0 : -1;
}
