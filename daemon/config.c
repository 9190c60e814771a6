/*
 * Reading gpufrac.conf and its drop-ins with inih. inih splits keys from
 * values and strips comments; this file feeds it lines, owns the sections
 * and finds which key is whose; config_daemon.c checks the keys and values
 * of [daemon] and [device], config_group.c those of [group], config_jobs.c
 * those of [jobs], each reporting "FILE:LINE: message" (config_value.c
 * checks the values they share and says what is wrong).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_parse.h"
#include "log.h"
#include "proto.h"

void
config_default_policy(const struct config *c, struct group_policy *p)
{
	memset(p, 0, sizeof(*p));
	proto_strlcpy(p->name, POLICY_DEFAULT_GROUP, sizeof(p->name));
	p->per_process = 1;
	p->limit_kind = c->default_limit_kind;
	p->limit_value = c->default_limit_value;
	p->guarantee_kind = GF_LIMIT_BYTES;
	p->resolver = c->default_resolver;
	p->on_preempt = GF_PREEMPT_KILL;
	p->wait_timeout_ms = c->wait_timeout_ms;
	p->kill_grace_ms = POLICY_KILL_GRACE_MS;
	p->swap_engine = c->swap_engine;
	p->client_may_raise = c->client_may_raise;
	p->unshimmed = c->unshimmed;
}

void
config_init(struct config *c)
{
	memset(c, 0, sizeof(*c));
	proto_strlcpy(c->socket, GF_SOCKET_DEFAULT, sizeof(c->socket));
	c->socket_mode = 0666;
	c->log_level = LOG_LVL_INFO;
	c->default_limit_kind = GF_LIMIT_PERCENT;
	c->default_limit_value = 10000;
	c->default_resolver = GF_RESOLVER_FAIL;
	c->wait_timeout_ms = 30000;
	c->lend_guarantees = 1;
	c->swap_min_idle_ms = 1000;
	c->swap_move_timeout_ms = 10000;
	c->swap_keep_ms = 600000;
	c->release_timeout_ms = 60000;
	c->look_interval_ms = LOOK_INTERVAL_DEFAULT_MS;
	c->lease_idle_ms = 1000;
	config_jobs_init(&c->jobs);
	c->max_conns_per_uid = CONFIG_CONNS_PER_UID;
	c->outq_limit = CONFIG_OUTQ_LIMIT;
}

void
config_free(struct config *c)
{
	size_t i;

	for (i = 0; i < c->ndevices; i++) {
		free(c->devices[i].where);
		free(c->devices[i].reserve_where);
	}
	free(c->devices);
	c->devices = NULL;
	c->ndevices = 0;
	for (i = 0; i < c->ngroups; i++)
		config_group_free(&c->groups[i]);
	free(c->groups);
	c->groups = NULL;
	c->ngroups = 0;
}

/* Not a regular file (a FIFO, a device, a socket): one line, 1 error. */
static int
config_not_regular(const char *path, config_report_fn *report, void *arg)
{
	char line[PATH_MAX + 64];

	snprintf(line, sizeof(line), "cannot read '%s': not a regular file",
	    path);
	report(line, arg);
	return 1;
}

/* A report without a line: a file that cannot be opened or read. */
static int
file_error(const char *what, const char *path, int errnum,
    config_report_fn *report, void *arg)
{
	char line[PATH_MAX + 128];

	snprintf(line, sizeof(line), "cannot %s '%s': %s", what, path,
	    strerror(errnum));
	report(line, arg);
	return 1;
}

static char *
trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* A "[...]" line: which section follows, or SEC_BAD (reported). */
static int
section_begin(struct parse *p, char *s)
{
	char *end = strchr(s, ']'), *name, *arg;
	size_t wlen;

	if (end == NULL) {
		parse_error(p, "missing ']' in section header '%s'", trim(s));
		return SEC_BAD;
	}
	*end = '\0';
	name = trim(s + 1);
	proto_strlcpy(p->section_text, name, sizeof(p->section_text));
	proto_strlcpy(p->section_id, name, sizeof(p->section_id));
	if (p->groups_only && strncmp(name, "group", 5) != 0) {
		parse_error(p, "section '[%s]' in a file of groups only",
		    p->section_text);
		return SEC_BAD;
	}
	if (strcmp(name, "daemon") == 0)
		return SEC_DAEMON;
	if (strcmp(name, "jobs") == 0)
		return SEC_JOBS;
	wlen = strcspn(name, " \t");
	arg = trim(name + wlen);
	if (wlen == 6 && strncmp(name, "device", 6) == 0) {
		int sec = section_device(p, arg);

		return sec < 0 ? SEC_BAD : sec;
	}
	if (wlen == 5 && strncmp(name, "group", 5) == 0) {
		int sec = section_group(p, arg);

		return sec < 0 ? SEC_BAD : sec;
	}
	parse_error(p, "unknown section '[%s]'", p->section_text);
	return SEC_BAD;
}

/*
 * inih's view of a key line: a name up to '=' or ':', unless an inline
 * comment (';' after white space) comes first. 1 if s is one.
 */
static int
key_line(const char *s)
{
	const char *q;

	for (q = s; *q; q++) {
		if (*q == '=' || *q == ':')
			return 1;
		if (*q == ';' && q > s && isspace((unsigned char)q[-1]))
			return 0;
	}
	return 0;
}

/*
 * Look at a line before inih does: sections are ours, and what inih would
 * call a syntax error is reported here with a reason. Returns 0 to hand
 * the line to inih, -1 to hand it a blank line instead.
 */
static int
line_check(struct parse *p, char *s)
{
	char copy[SECTION_LEN];

	switch (*s) {
	case '\0':
	case '\n':
	case '\r':
	case ';':
	case '#':
		return 0;
	case '[':
		proto_strlcpy(copy, s, sizeof(copy));
		p->section = section_begin(p, copy);
		return strchr(s, ']') ? 0 : -1;
	default:
		if (key_line(s))
			return 0;
		proto_strlcpy(copy, s, sizeof(copy));
		parse_error(p, "expected 'key = value', '[section]' or a "
		    "comment, not '%s'", trim(copy));
		return -1;
	}
}

/*
 * Read one line into p->buf, keeping at most PARSE_LINE_MAX - 1 bytes of
 * it (the rest is read and dropped: a file of one endless line costs time,
 * never memory). Returns the bytes kept, NULs included, or -1 at the end;
 * *cut tells whether some were dropped.
 */
static ssize_t
line_read(struct parse *p, int *cut)
{
	size_t n = 0;
	int ch = EOF;

	*cut = 0;
	if (p->buf == NULL) {
		if ((p->buf = malloc(PARSE_LINE_MAX)) == NULL)
			return -1;
		p->bufsize = PARSE_LINE_MAX;
	}
	while ((ch = getc_unlocked(p->fp)) != EOF) {
		if (n < p->bufsize - 1)
			p->buf[n++] = (char)ch;
		else
			*cut = 1;
		if (ch == '\n')
			break;
	}
	if (n == 0 && ch == EOF && !*cut)
		return -1;
	p->buf[n] = '\0';
	return (ssize_t)n;
}

/*
 * inih's reader: one line of the file, leading white space stripped (so
 * indented keys are keys, never continuations of the previous value).
 */
static char *
reader(char *str, int num, void *stream)
{
	struct parse *p = stream;
	ssize_t n;
	char *s;
	int cut;

	if (p->nerrors >= MAX_ERRORS)
		return NULL;
	if ((n = line_read(p, &cut)) < 0)
		return NULL;
	p->line++;
	s = p->buf;
	if (p->line == 1 && strncmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;		/* UTF-8 byte order mark */
	while (*s == ' ' || *s == '\t')
		s++;
	if (strlen(p->buf) != (size_t)n) {
		parse_error(p, "line contains a NUL byte");
		goto out_blank;
	}
	if (cut || strlen(s) >= (size_t)num) {
		parse_error(p, "line too long (at most %d characters)",
		    num - 3);
		goto out_blank;
	}
	if (line_check(p, s) < 0)
		goto out_blank;
	memcpy(str, s, strlen(s) + 1);
	return str;

out_blank:
	str[0] = '\n';
	str[1] = '\0';
	return str;
}

/* Report and return -1 if key was already set in this file's section. */
static int
seen_check(struct parse *p, const char *key)
{
	struct seen *s;
	char *id;
	size_t i;

	if (asprintf(&id, "%s\n%s", p->section_id, key) < 0) {
		parse_error(p, "out of memory");
		return -1;
	}
	for (i = 0; i < p->nseen; i++)
		if (strcmp(p->seen[i].id, id) == 0) {
			parse_error(p, "duplicate key '%s' in section '[%s]' "
			    "(first set on line %u)", key, p->section_text,
			    p->seen[i].line);
			free(id);
			return -1;
		}
	s = realloc(p->seen, (p->nseen + 1) * sizeof(*s));
	if (s == NULL) {
		free(id);
		parse_error(p, "out of memory");
		return -1;
	}
	p->seen = s;
	p->seen[p->nseen].id = id;
	p->seen[p->nseen++].line = p->line;
	return 0;
}

struct key {
	int		 section;
	const char	*name;
	void		(*set)(struct parse *, const char *, const char *);
};

static const struct key keys[] = {
	{ SEC_DAEMON, "socket", key_socket },
	{ SEC_DAEMON, "socket_mode", key_socket_mode },
	{ SEC_DAEMON, "state_dir", key_state_dir },
	{ SEC_DAEMON, "admin_group", key_admin_group },
	{ SEC_DAEMON, "log_level", key_log_level },
	{ SEC_DAEMON, "default_limit", key_default_limit },
	{ SEC_DAEMON, "default_resolver", key_default_resolver },
	{ SEC_DAEMON, "wait_timeout", key_wait_timeout },
	{ SEC_DAEMON, "client_may_raise", key_client_may_raise },
	{ SEC_DAEMON, "lend_guarantees", key_lend_guarantees },
	{ SEC_DAEMON, "swap_min_idle", key_swap_min_idle },
	{ SEC_DAEMON, "swap_engine", key_swap_engine },
	{ SEC_DAEMON, "swap_host_limit", key_swap_host_limit },
	{ SEC_DAEMON, "swap_move_timeout", key_swap_move_timeout },
	{ SEC_DAEMON, "swap_keep", key_swap_keep },
	{ SEC_DAEMON, "release_timeout", key_release_timeout },
	{ SEC_DAEMON, "look_interval", key_look_interval },
	{ SEC_DAEMON, "lease_idle", key_lease_idle },
	{ SEC_DAEMON, "max_connections_per_uid", key_max_conns },
	{ SEC_DAEMON, "output_queue_limit", key_outq_limit },
	{ SEC_DAEMON, "metrics_listen", key_metrics_listen },
	{ SEC_DAEMON, "unshimmed", key_unshimmed },
	{ SEC_JOBS, "max_priority", key_max_priority },
	{ SEC_JOBS, "max_guarantee", key_max_guarantee },
	{ SEC_JOBS, "max_limit", key_max_limit },
	{ SEC_JOBS, "resolvers", key_resolvers },
	{ SEC_JOBS, "over_cap", key_over_cap },
	{ SEC_JOBS, "unshimmed", key_jobs_unshimmed },
	{ SEC_DEVICE, "reserve", key_reserve },
	{ SEC_GROUP, "match", key_match },
	{ SEC_GROUP, "limit", key_limit },
	{ SEC_GROUP, "guarantee", key_guarantee },
	{ SEC_GROUP, "priority", key_priority },
	{ SEC_GROUP, "resolver", key_resolver },
	{ SEC_GROUP, "wait_timeout", key_group_wait_timeout },
	{ SEC_GROUP, "on_preempt", key_on_preempt },
	{ SEC_GROUP, "kill_grace", key_kill_grace },
	{ SEC_GROUP, "swap_engine", key_group_swap_engine },
	{ SEC_GROUP, "client_may_raise", key_group_may_raise },
	{ SEC_GROUP, "transient", key_transient },
	{ SEC_GROUP, "owner", key_owner },
	{ SEC_GROUP, "unshimmed", key_group_unshimmed },
};

/*
 * inih's handler. It always returns 1: errors are reported and counted
 * here, with their reason, so inih's own count stays for syntax it alone
 * noticed.
 */
static int
handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse *p = user;
	size_t i;

	(void)section;		/* ours, from line_check */
	if (p->section == SEC_BAD)
		return 1;
	if (p->section == SEC_NONE) {
		parse_error(p, "key '%s' outside of any section", name);
		return 1;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i].section == p->section &&
		    strcmp(keys[i].name, name) == 0)
			break;
	if (i == sizeof(keys) / sizeof(keys[0])) {
		parse_error(p, "unknown key '%s' in section '[%s]'", name,
		    p->section_text);
		return 1;
	}
	if (seen_check(p, name) == 0)
		keys[i].set(p, name, value);
	return 1;
}

/* Parse one open file; returns its number of errors. */
static int
file_parse(struct config *c, const char *path, FILE *fp, int groups_only,
    config_report_fn *report, void *arg)
{
	struct parse p;
	size_t i;
	int r;

	memset(&p, 0, sizeof(p));
	p.conf = c;
	p.file = path;
	p.fp = fp;
	p.report = report;
	p.arg = arg;
	p.groups_only = groups_only;
	r = ini_parse_stream(reader, &p, handler, &p);
	if (p.nerrors >= MAX_ERRORS)
		parse_error(&p, "too many errors; giving up on this file");
	else if (ferror(fp))
		p.nerrors += file_error("read", path, errno, report, arg);
	else if (r > 0 && p.nerrors == 0) {
		p.line = (unsigned)r;
		parse_error(&p, "syntax error");
	} else if (r == -2)
		parse_error(&p, "out of memory");
	for (i = 0; i < p.nseen; i++)
		free(p.seen[i].id);
	free(p.seen);
	free(p.buf);
	return p.nerrors;
}

/*
 * Open and parse path; a missing file is no error when optional. Only a
 * regular file is read: a FIFO would block the daemon (startup, -n, a
 * reload), a device such as /dev/zero never end. Opened without blocking
 * and checked on the descriptor, so what is checked is what is read.
 */
static int
file_load(struct config *c, const char *path, int optional, int groups_only,
    config_report_fn *report, void *arg)
{
	struct stat st;
	FILE *fp;
	int fd, n;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC |
	    O_NOCTTY)) < 0) {
		if (errno == ENOENT && optional)
			return 0;
		return file_error("open", path, errno, report, arg);
	}
	if (fstat(fd, &st) < 0) {
		n = errno;
		close(fd);
		return file_error("read", path, n, report, arg);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ?
		    file_error("read", path, EISDIR, report, arg) :
		    config_not_regular(path, report, arg);
	}
	if (fcntl(fd, F_SETFL, O_RDONLY) < 0 ||
	    (fp = fdopen(fd, "r")) == NULL) {
		n = errno;
		close(fd);
		return file_error("read", path, n, report, arg);
	}
	n = file_parse(c, path, fp, groups_only, report, arg);
	fclose(fp);
	return n;
}

static int
dropin_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 &&
	    strcmp(d->d_name + n - 5, ".conf") == 0;
}

/* Byte order, whatever the locale: "lexical" means the same everywhere. */
static int
dropin_compare(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Every *.conf in dir, in lexical order; a missing dir has none. */
static int
dropins_load(struct config *c, const char *dir, config_report_fn *report,
    void *arg)
{
	struct dirent **names;
	char path[PATH_MAX];
	struct stat st;
	int i, n, errors = 0;

	if ((n = scandir(dir, &names, dropin_filter, dropin_compare)) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return file_error("read directory", dir, errno, report, arg);
	}
	for (i = 0; i < n; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    names[i]->d_name) >= sizeof(path))
			errors += file_error("open", names[i]->d_name,
			    ENAMETOOLONG, report, arg);
		else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			log_warnx("ignoring '%s': not a regular file", path);
		else
			errors += file_load(c, path, 0, 0, report, arg);
		free(names[i]);
	}
	free(names);
	return errors;
}

int
config_load(struct config *c, const char *path, int optional,
    config_report_fn *report, void *arg)
{
	char dir[PATH_MAX];
	int errors;

	errors = file_load(c, path, optional, 0, report, arg);
	if ((size_t)snprintf(dir, sizeof(dir), "%s.d", path) >= sizeof(dir))
		return errors + file_error("read directory", path,
		    ENAMETOOLONG, report, arg);
	errors += dropins_load(c, dir, report, arg);
	if (errors > 0)
		return errors;
	return config_groups_finish(c, report, arg);
}

int
config_load_groups(struct config *c, const char *path,
    config_report_fn *report, void *arg)
{
	int errors = file_load(c, path, 1, 1, report, arg);

	return errors > 0 ? errors : config_groups_check(c, report, arg);
}
