/*
 * What control.c and control_admit.c share, and no one else uses.
 */
#ifndef GF_DAEMON_CONTROL_INT_H
#define GF_DAEMON_CONTROL_INT_H

#include <sys/socket.h>

#include "control.h"

/* Say a refusal or a drop for a limit (control_admit.c). */
void	limit_say(struct control *ctl, struct control_quiet *q,
	    const char *why);

/*
 * Whether the peer of the new connection fd, cred its SO_PEERCRED, may
 * be let in under the caps: 0 with *plain set (1: it counts in
 * max_total; root and admin_group past it do not), or -1: refused, told
 * why, fd closed.
 */
int	control_admit(struct control *ctl, int fd, const struct ucred *cred,
	    int *plain);

/* Keep a spare descriptor, if one can be had, for control_refuse_spare. */
void	control_spare_open(struct control *ctl);

/*
 * Out of descriptors: the spare given up to accept one connection on the
 * listener lfd and refuse it, then taken again. 1 when one was refused
 * and the spare is back; 0 when none was waiting; -1 when there is no
 * spare (the caller pauses accepting).
 */
int	control_refuse_spare(struct control *ctl, int lfd);

#endif
