/*
 * Prometheus's text exposition format (version 0.0.4), written into a
 * growing buffer: a family's HELP and TYPE lines, then its samples, each
 * "name{label="value",...} value". Label values are escaped (\\, \", \n);
 * names are the caller's and must be valid.
 */
#ifndef GF_DAEMON_METRICS_TEXT_H
#define GF_DAEMON_METRICS_TEXT_H

#include <stddef.h>
#include <stdint.h>

#define METRICS_CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

struct metrics_text {
	char		*buf;
	size_t		 len;
	size_t		 cap;
	int		 failed;	/* out of memory: the text is cut */
};

struct metrics_label {
	const char	*name;
	const char	*value;
};

void	metrics_text_init(struct metrics_text *t);
void	metrics_text_free(struct metrics_text *t);

/* "# HELP name help" and "# TYPE name type" (gauge, counter, histogram). */
void	metrics_text_family(struct metrics_text *t, const char *name,
	    const char *type, const char *help);

/* A sample of n labels whose value is v. */
void	metrics_text_u64(struct metrics_text *t, const char *name,
	    const struct metrics_label *labels, size_t n, uint64_t v);

/* A sample whose value is ms milliseconds, in seconds. */
void	metrics_text_ms(struct metrics_text *t, const char *name,
	    const struct metrics_label *labels, size_t n, uint64_t ms);

/* ms as seconds, shortest exact form ("0.005", "1", "300"), into buf. */
char	*metrics_seconds_format(uint64_t ms, char *buf, size_t size);

/*
 * The text (NUL-terminated, malloc'd: the caller frees it) and its length
 * without the NUL; t is empty afterwards. NULL when memory ran out.
 */
char	*metrics_text_take(struct metrics_text *t, size_t *len);

#endif
