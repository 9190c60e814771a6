/*
 * The protocol codec: validating, sending and receiving the packets that
 * include/gpufrac/proto.h defines. Used by the shim, the daemon and the CLI.
 */
#ifndef GF_COMMON_PROTO_H
#define GF_COMMON_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpufrac/proto.h"

/* The payload size a message type requires, or -1 for an unknown type. */
ssize_t	proto_payload_size(uint16_t type);

/*
 * Validate a received packet of n bytes: version, length, known type, exact
 * payload size (the type's, or its first size: include/gpufrac/proto.h,
 * Versions), zero padding, NUL-terminated strings. A HELLO of another
 * protocol version passes with its header checked alone (only the header
 * may be read), an ERROR of another version as one of ours. Returns 0, or
 * -1 with *why pointing at a static one-line reason.
 */
int	proto_check(const struct gf_msg *m, size_t n, const char **why);

/*
 * A packet of n bytes at buf, as proto_recv takes one from a socket: into
 * m, checked (proto_check), and a payload of a type's first, shorter size
 * completed with zeros. Returns 0, or -1 with *why set. The fast fuzzer's
 * way in (fuzz/harness.c), without a socket.
 */
int	proto_decode(struct gf_msg *m, const void *buf, size_t n,
	    const char **why);

/* A message type's name for logs ("RESERVE"), "unknown" if there is none. */
const char *proto_type_name(uint16_t type);

/*
 * Build one message in *m: header and a copy of the payload, which holds
 * proto_payload_size(type) bytes; or, payload NULL, no payload at all,
 * for a type that has none or first had none (SWAP_IN: what an older
 * peer reads). Returns the packet's length, or -1 with errno EINVAL for
 * an unknown type, or a NULL payload that the type needs. For senders
 * that queue packets.
 */
ssize_t	proto_pack(struct gf_msg *m, uint16_t type, uint32_t seq,
	    const void *payload);

/*
 * Send one message; payload as proto_pack's. Never
 * raises SIGPIPE. Returns 0, or -1 with errno set.
 */
int	proto_send(int fd, uint16_t type, uint32_t seq, const void *payload);
/* The same, passing descriptor passfd (SCM_RIGHTS) with it; -1: none. */
int	proto_send_fd(int fd, uint16_t type, uint32_t seq, const void *payload,
	    int passfd);
/*
 * One sendmsg of the len bytes at pkt, as they are (packed or not), with
 * passfd as proto_send_fd; flags are sendmsg's (MSG_NOSIGNAL is added).
 * Returns what sendmsg does.
 */
ssize_t	proto_sendmsg(int fd, const void *pkt, size_t len, int passfd,
	    int flags);

/*
 * Receive one packet into *m and validate it; a payload of its type's first,
 * shorter size is completed with zeros. Returns 1 on a valid message,
 * 0 when the peer closed, -1 with errno set on a socket error, and -2 with
 * *why set when the packet is malformed (oversized packets included).
 * flags are recv(2) flags (MSG_DONTWAIT).
 */
int	proto_recv(int fd, struct gf_msg *m, int flags, const char **why);
/*
 * The same, and *passfd gets the descriptor passed with a valid message
 * (close-on-exec, the caller's to close), or -1. Descriptors passed beyond
 * the first, or with a packet that is not returned as valid, are closed.
 */
int	proto_recv_fd(int fd, struct gf_msg *m, int flags, const char **why,
	    int *passfd);

/* Copy src into a fixed-size wire string, truncating, always terminated. */
void	proto_strlcpy(char *dst, const char *src, size_t size);

/* An event's whole reason: reason, then reason_more. */
#define PROTO_REASON_MAX	(GF_REASON_LEN - 1 + GF_REASON_MORE_LEN)
void	proto_event_reason(const struct gf_event *e, char buf[PROTO_REASON_MAX]);
/* Set it from a reason of up to PROTO_REASON_MAX - 1 chars, cut beyond. */
void	proto_event_reason_set(struct gf_event *e, const char *reason);

#endif
