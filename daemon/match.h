/*
 * Group membership rules ("match = ..." of a [group] section): parsing one
 * rule word, and testing it against what the kernel says of a process (its
 * cgroup v2 path, uid and gid). Pure functions: no I/O, no allocation
 * besides a parsed rule's own copy of its argument.
 *
 * Rules:
 *   cgroup:GLOB          fnmatch(3) against the cgroup path, without
 *                        FNM_PATHNAME: '*' crosses '/'
 *   container:PREFIX     a hex prefix of the container id in the path
 *   pod:UID              the Kubernetes pod UID in a kubepods path
 *   uid:N, gid:N         the process's uid or (primary) gid
 */
#ifndef GF_DAEMON_MATCH_H
#define GF_DAEMON_MATCH_H

#include <stddef.h>
#include <stdint.h>

#define MATCH_CONTAINER_LEN	64	/* hex digits of a container id */
#define MATCH_POD_LEN		36	/* a UID: 8-4-4-4-12 */
#define MATCH_RULE_TEXT_LEN	4096	/* a rule as text, with room */

enum {
	MATCH_CGROUP = 1,
	MATCH_CONTAINER,
	MATCH_POD,
	MATCH_UID,
	MATCH_GID,
};

struct match_rule {
	int		 kind;		/* MATCH_* */
	char		*arg;		/* glob, lower-case prefix or UID */
	uint32_t	 id;		/* uid or gid */
};

/* What a rule is tested against. */
struct match_subject {
	const char	*cgroup;	/* "/system.slice/...", "" if unknown */
	uint32_t	 uid;
	uint32_t	 gid;
};

/*
 * Parse one rule word ("container:3f2a9c") into *r. Returns 0, or -1 with
 * a one-line reason in err (naming the rule) and *r untouched; ENOMEM is
 * reported as such. The caller frees r with match_rule_free.
 */
int	match_rule_parse(const char *word, struct match_rule *r, char *err,
	    size_t errlen);
void	match_rule_free(struct match_rule *r);

/* The rule as a word match_rule_parse reads back, into buf. Returns buf. */
char	*match_rule_format(const struct match_rule *r, char *buf,
	    size_t size);

/* 1 if the rule matches the subject, else 0. */
int	match_rule_test(const struct match_rule *r,
	    const struct match_subject *s);

/*
 * The literal cgroup path of a "cgroup:" rule, its escapes undone, into
 * buf (size bytes). Returns 0, or -1 when the rule is a pattern (or not a
 * cgroup rule) or the path does not fit.
 */
int	match_rule_path(const struct match_rule *r, char *buf, size_t size);

/*
 * The container id in a cgroup path: the 64-hex-digit id of the last path
 * segment that has one (Docker "/docker/ID" and "docker-ID.scope",
 * containerd "cri-containerd-ID.scope" and kubepods ".../ID", CRI-O
 * "crio-ID.scope", Podman "libpod-ID.scope"). Copies it, lower case, into
 * id (MATCH_CONTAINER_LEN + 1 bytes) and returns 0, or returns -1.
 */
int	match_container_id(const char *cgroup, char *id);

/*
 * The Kubernetes pod UID in a kubepods cgroup path, cgroupfs driver
 * ("/kubepods/burstable/podUID/...") or systemd driver
 * (".../kubepods-burstable-podUID_WITH_UNDERSCORES.slice/..."). Copies it
 * normalised (lower case, '-' separators) into uid (MATCH_POD_LEN + 1
 * bytes) and returns 0, or returns -1.
 */
int	match_pod_uid(const char *cgroup, char *uid);

#endif
