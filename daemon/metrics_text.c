/*
 * The exposition format's lines, appended to one buffer that doubles as it
 * fills.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_text.h"

void
metrics_text_init(struct metrics_text *t)
{
	memset(t, 0, sizeof(*t));
}

void
metrics_text_free(struct metrics_text *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

/* Room for n more bytes and a NUL; 0, or -1 (t->failed set). */
static int
text_reserve(struct metrics_text *t, size_t n)
{
	size_t cap = t->cap ? t->cap : 4096;
	char *b;

	if (t->failed)
		return -1;
	if (t->len + n + 1 <= t->cap)
		return 0;
	while (cap < t->len + n + 1)
		cap *= 2;
	if ((b = realloc(t->buf, cap)) == NULL) {
		t->failed = 1;
		return -1;
	}
	t->buf = b;
	t->cap = cap;
	return 0;
}

static void
text_put(struct metrics_text *t, const char *s, size_t n)
{
	if (text_reserve(t, n) < 0)
		return;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

static void __attribute__((format(printf, 2, 3)))
text_printf(struct metrics_text *t, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* Our own names and numbers: a longer line is a bug, not input. */
	if (n < 0 || (size_t)n >= sizeof(line)) {
		t->failed = 1;
		return;
	}
	text_put(t, line, (size_t)n);
}

void
metrics_text_family(struct metrics_text *t, const char *name,
    const char *type, const char *help)
{
	text_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value, escaped as the format asks. */
static void
text_escaped(struct metrics_text *t, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '\\':
			text_put(t, "\\\\", 2);
			break;
		case '"':
			text_put(t, "\\\"", 2);
			break;
		case '\n':
			text_put(t, "\\n", 2);
			break;
		default:
			text_put(t, s, 1);
		}
	}
}

/* name{a="x",b="y"} (no braces without labels) and the space after it. */
static void
text_series(struct metrics_text *t, const char *name,
    const struct metrics_label *labels, size_t n)
{
	size_t i;

	text_put(t, name, strlen(name));
	for (i = 0; i < n; i++) {
		text_put(t, i ? "," : "{", 1);
		text_put(t, labels[i].name, strlen(labels[i].name));
		text_put(t, "=\"", 2);
		text_escaped(t, labels[i].value);
		text_put(t, "\"", 1);
	}
	text_put(t, n ? "} " : " ", n ? 2 : 1);
}

void
metrics_text_u64(struct metrics_text *t, const char *name,
    const struct metrics_label *labels, size_t n, uint64_t v)
{
	text_series(t, name, labels, n);
	text_printf(t, "%" PRIu64 "\n", v);
}

char *
metrics_seconds_format(uint64_t ms, char *buf, size_t size)
{
	char frac[8];
	size_t n;

	if (ms % 1000 == 0) {
		snprintf(buf, size, "%" PRIu64, ms / 1000);
		return buf;
	}
	snprintf(frac, sizeof(frac), "%03u", (unsigned)(ms % 1000));
	for (n = strlen(frac); n > 0 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	snprintf(buf, size, "%" PRIu64 ".%s", ms / 1000, frac);
	return buf;
}

void
metrics_text_ms(struct metrics_text *t, const char *name,
    const struct metrics_label *labels, size_t n, uint64_t ms)
{
	char s[32];

	text_series(t, name, labels, n);
	text_printf(t, "%s\n", metrics_seconds_format(ms, s, sizeof(s)));
}

char *
metrics_text_take(struct metrics_text *t, size_t *len)
{
	char *s;

	if (text_reserve(t, 0) < 0) {
		metrics_text_free(t);
		return NULL;
	}
	s = t->buf;
	s[t->len] = '\0';
	*len = t->len;
	memset(t, 0, sizeof(*t));
	return s;
}
