/*
 * The logger: level filtering, a process-wide prefix, stderr or syslog.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"

static const char *log_prefix = "gpufrac";
static int log_level = LOG_LVL_ERROR;
static int log_syslog;

void
log_init(const char *prefix, int level, int use_syslog)
{
	log_prefix = prefix;
	log_level = level;
	if (use_syslog && !log_syslog)
		openlog(prefix, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	log_syslog = use_syslog;
}

void
log_setlevel(int level)
{
	log_level = level;
}

int
log_getlevel(void)
{
	return log_level;
}

int
log_level_parse(const char *s)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	int i;

	for (i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

static void
vlog(int level, int errnum, const char *fmt, va_list ap)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char buf[1024];
	int n = 0;
	ssize_t w;

	if (level > log_level)
		return;
	if (!log_syslog)
		n = snprintf(buf, sizeof(buf), "%s: ", log_prefix);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	if (n >= (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 2;
	if (errnum)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, ": %s",
		    strerror(errnum));
	if (n >= (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 2;
	if (log_syslog) {
		syslog(prio[level], "%s", buf);
		return;
	}
	buf[n++] = '\n';
	w = write(STDERR_FILENO, buf, (size_t)n);
	(void)w;	/* nowhere left to report a failed log write */
}

#define LOG_FN(name, level, with_errno)				\
void								\
name(const char *fmt, ...)					\
{								\
	int saved = errno;					\
	va_list ap;						\
								\
	va_start(ap, fmt);					\
	vlog(level, with_errno ? saved : 0, fmt, ap);		\
	va_end(ap);						\
	errno = saved;						\
}

LOG_FN(log_err, LOG_LVL_ERROR, 1)
LOG_FN(log_errx, LOG_LVL_ERROR, 0)
LOG_FN(log_warn, LOG_LVL_WARN, 1)
LOG_FN(log_warnx, LOG_LVL_WARN, 0)
LOG_FN(log_info, LOG_LVL_INFO, 0)
LOG_FN(log_debug, LOG_LVL_DEBUG, 0)

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_LVL_ERROR, 0, fmt, ap);
	va_end(ap);
	exit(1);
}
