/*
 * One logger for the shim, the daemon and the CLI. A line is formatted into
 * one buffer and written with one write(2), so lines from threads and
 * processes never interleave. Messages are lower case and name what failed.
 */
#ifndef GF_COMMON_LOG_H
#define GF_COMMON_LOG_H

#include <stdarg.h>

enum {
	LOG_LVL_ERROR = 0,
	LOG_LVL_WARN,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
};

/*
 * prefix starts every line ("gpufrac", "gpufracd"); it is not copied and
 * must outlive the logger. With use_syslog, lines go to syslog instead of
 * stderr. Safe to call again to change the destination or level.
 */
void	log_init(const char *prefix, int level, int use_syslog);
void	log_setlevel(int level);
int	log_getlevel(void);

/* "error", "warn", "info", "debug" -> LOG_LVL_*, or -1. */
int	log_level_parse(const char *s);

/* log_warn and log_err append ": strerror(errno)". */
void	log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_errx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A broken invariant in a daemon or tool: log and exit(1). Never used in
 * the shim, which must not exit the program it lives in.
 */
void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
