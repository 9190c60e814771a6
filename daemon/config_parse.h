/*
 * Inside the configuration reader: the state of reading one file, shared
 * by config.c (files, lines, sections, which key is whose),
 * config_daemon.c ([daemon] and [device]), config_group.c ([group]
 * sections and the checks across files), config_jobs.c ([jobs]) and
 * config_value.c (one value checked; the error reported). Not for other
 * modules.
 */
#ifndef GF_DAEMON_CONFIG_PARSE_H
#define GF_DAEMON_CONFIG_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"

#define MAX_ERRORS	20	/* per file: past this it is not a config file */
#define SECTION_LEN	256
#define PARSE_LINE_MAX	4096	/* bytes of a line kept; inih takes fewer */

enum {
	SEC_NONE = 0,		/* before the first section */
	SEC_DAEMON,
	SEC_DEVICE,
	SEC_GROUP,
	SEC_JOBS,
	SEC_BAD,		/* reported; its keys are skipped */
};

/* A key already set in this file, for duplicate detection. */
struct seen {
	char		*id;		/* "SECTION-ID\nkey" */
	unsigned	 line;
};

/* The state of reading one file. */
struct parse {
	struct config	*conf;
	const char	*file;
	FILE		*fp;
	char		*buf;		/* the line read, PARSE_LINE_MAX bytes */
	size_t		 bufsize;
	unsigned	 line;		/* the line inih is looking at */
	int		 section;	/* SEC_* */
	int		 groups_only;	/* [group] sections only */
	char		 section_id[SECTION_LEN];	/* canonical */
	char		 section_text[SECTION_LEN];	/* as written */
	size_t		 device;	/* in conf->devices, for SEC_DEVICE */
	size_t		 group;		/* in conf->groups, for SEC_GROUP */
	struct seen	*seen;
	size_t		 nseen;
	int		 nerrors;
	config_report_fn *report;
	void		*arg;
};

/* Report "FILE:LINE: message" for the line being read; counts it. */
void	parse_error(struct parse *p, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* "FILE:LINE" of the current line, malloc'd (NULL on ENOMEM). */
char	*parse_where(const struct parse *p);

/* Shared value checks: 0 with the value, or -1 (reported, naming key). */
int	parse_resolver(struct parse *p, const char *key, const char *v,
	    uint32_t *out);
int	parse_preempt(struct parse *p, const char *key, const char *v,
	    uint32_t *out);
int	parse_duration(struct parse *p, const char *key, const char *v,
	    uint64_t *out);
/* "count" or "kill" (unshimmed = ...): POLICY_UNSHIMMED_*. */
int	parse_unshimmed(struct parse *p, const char *key, const char *v,
	    uint32_t *out);
int	parse_swap_engine(struct parse *p, const char *key, const char *v,
	    uint32_t *out);
/* A limit (limit_parse): a zero however written is refused too. */
int	parse_limit(struct parse *p, const char *key, const char *v,
	    uint32_t *kind, uint64_t *value);
int	parse_yesno(struct parse *p, const char *key, const char *v,
	    int *out);

/*
 * config_daemon.c: [device X] (SEC_DEVICE, or -1 reported), and the keys
 * of [daemon] and [device].
 */
int	section_device(struct parse *p, const char *arg);
void	key_socket(struct parse *, const char *, const char *);
void	key_state_dir(struct parse *, const char *, const char *);
void	key_socket_mode(struct parse *, const char *, const char *);
void	key_admin_group(struct parse *, const char *, const char *);
void	key_log_level(struct parse *, const char *, const char *);
void	key_default_limit(struct parse *, const char *, const char *);
void	key_default_resolver(struct parse *, const char *, const char *);
void	key_wait_timeout(struct parse *, const char *, const char *);
void	key_swap_min_idle(struct parse *, const char *, const char *);
void	key_swap_engine(struct parse *, const char *, const char *);
void	key_swap_move_timeout(struct parse *, const char *, const char *);
void	key_swap_keep(struct parse *, const char *, const char *);
void	key_swap_host_limit(struct parse *, const char *, const char *);
void	key_release_timeout(struct parse *, const char *, const char *);
void	key_look_interval(struct parse *, const char *, const char *);
void	key_lease_idle(struct parse *, const char *, const char *);
void	key_lend_guarantees(struct parse *, const char *, const char *);
void	key_client_may_raise(struct parse *, const char *, const char *);
void	key_metrics_listen(struct parse *, const char *, const char *);
void	key_max_conns(struct parse *, const char *, const char *);
void	key_outq_limit(struct parse *, const char *, const char *);
void	key_reserve(struct parse *, const char *, const char *);
void	key_unshimmed(struct parse *, const char *, const char *);

/* config_group.c: [group NAME] and its keys. */
int	section_group(struct parse *p, const char *arg);	/* SEC_* */
void	key_match(struct parse *, const char *, const char *);
void	key_limit(struct parse *, const char *, const char *);
void	key_guarantee(struct parse *, const char *, const char *);
void	key_priority(struct parse *, const char *, const char *);
void	key_resolver(struct parse *, const char *, const char *);
void	key_group_wait_timeout(struct parse *, const char *, const char *);
void	key_on_preempt(struct parse *, const char *, const char *);
void	key_kill_grace(struct parse *, const char *, const char *);
void	key_group_swap_engine(struct parse *, const char *, const char *);
void	key_group_may_raise(struct parse *, const char *, const char *);
void	key_transient(struct parse *, const char *, const char *);
void	key_owner(struct parse *, const char *, const char *);
void	key_group_unshimmed(struct parse *, const char *, const char *);

/* config_jobs.c: [jobs]'s keys, and their defaults. */
void	config_jobs_init(struct config_jobs *j);
void	key_max_priority(struct parse *, const char *, const char *);
void	key_max_guarantee(struct parse *, const char *, const char *);
void	key_max_limit(struct parse *, const char *, const char *);
void	key_resolvers(struct parse *, const char *, const char *);
void	key_over_cap(struct parse *, const char *, const char *);
void	key_jobs_unshimmed(struct parse *, const char *, const char *);

/*
 * After every file was read without an error: fill in the groups' unset
 * keys from [daemon] and check what only the files together say. Returns
 * the number of errors, each passed to report.
 */
int	config_groups_finish(struct config *c, config_report_fn *report,
	    void *arg);
/* The same for groups whose defaults are not known yet: their rules. */
int	config_groups_check(const struct config *c, config_report_fn *report,
	    void *arg);

#endif
