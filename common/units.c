/*
 * Sizes, percentages and durations as users write them. Numbers are parsed
 * as an integer part and up to nine fractional digits with checked
 * arithmetic, never through floating point, so "1.5Gi" is exact.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "gpufrac/proto.h"
#include "units.h"

#define FRAC_DIGITS	9
#define FRAC_ONE	1000000000ull

/*
 * Parse "123" or "123.456" at *sp into an integer part and a fraction in
 * units of 1e-9. Advances *sp past the number. Returns 0 or -1.
 */
static int
number_parse(const char **sp, uint64_t *whole, uint64_t *frac)
{
	const char *s = *sp;
	uint64_t w = 0, f = 0, scale = FRAC_ONE;
	int digits = 0;

	while (isdigit((unsigned char)*s)) {
		unsigned d = (unsigned)(*s++ - '0');

		if (__builtin_mul_overflow(w, 10, &w) ||
		    __builtin_add_overflow(w, d, &w))
			return -1;
		digits++;
	}
	if (*s == '.') {
		s++;
		while (isdigit((unsigned char)*s)) {
			scale /= 10;
			f += (uint64_t)(*s++ - '0') * scale;
			digits++;
			if (scale == 0)
				return -1;	/* more than nine decimals */
		}
	}
	if (digits == 0)
		return -1;
	*sp = s;
	*whole = w;
	*frac = f;
	return 0;
}

/* whole.frac * mult, checked; the fractional part rounds down. */
static int
scale_checked(uint64_t whole, uint64_t frac, uint64_t mult, uint64_t *out)
{
	unsigned __int128 r = (unsigned __int128)whole * mult +
	    (unsigned __int128)frac * mult / FRAC_ONE;

	if (r > UINT64_MAX)
		return -1;
	*out = (uint64_t)r;
	return 0;
}

struct unit {
	const char	*name;
	uint64_t	mult;
};

static const struct unit size_units[] = {
	{ "", 1 },
	{ "k", 1000ull }, { "K", 1000ull },
	{ "M", 1000000ull }, { "G", 1000000000ull }, { "T", 1000000000000ull },
	{ "Ki", 1ull << 10 }, { "Mi", 1ull << 20 },
	{ "Gi", 1ull << 30 }, { "Ti", 1ull << 40 },
	{ "KiB", 1ull << 10 }, { "MiB", 1ull << 20 },
	{ "GiB", 1ull << 30 }, { "TiB", 1ull << 40 },
	{ "B", 1 },
};

static const struct unit duration_units[] = {
	{ "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 },
	{ "h", 3600000 },
};

static int
quantity_parse(const char *s, const struct unit *units, size_t n,
    uint64_t *out)
{
	uint64_t whole, frac;
	size_t i;

	if (s == NULL || number_parse(&s, &whole, &frac) < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (strcmp(s, units[i].name) == 0)
			return scale_checked(whole, frac, units[i].mult, out);
	return -1;
}

int
size_parse(const char *s, uint64_t *bytes)
{
	return quantity_parse(s, size_units,
	    sizeof(size_units) / sizeof(size_units[0]), bytes);
}

int
duration_parse(const char *s, uint64_t *ms)
{
	return quantity_parse(s, duration_units,
	    sizeof(duration_units) / sizeof(duration_units[0]), ms);
}

/* A size or a share, zero in any spelling included: 0 or -1. */
static int
amount_parse(const char *s, uint32_t *kind, uint64_t *value)
{
	static const struct unit percent[] = { { "%", 100 } };
	size_t len;

	if (s == NULL)
		return -1;
	len = strlen(s);
	if (len > 0 && s[len - 1] == '%') {
		uint64_t v;

		if (quantity_parse(s, percent, 1, &v) < 0 || v > 10000)
			return -1;
		*kind = GF_LIMIT_PERCENT;
		*value = v;
		return 0;
	}
	if (size_parse(s, value) < 0)
		return -1;
	*kind = GF_LIMIT_BYTES;
	return 0;
}

int
limit_parse(const char *s, uint32_t *kind, uint64_t *value)
{
	uint32_t k;
	uint64_t v;

	if (amount_parse(s, &k, &v) < 0)
		return -1;
	if (v == 0)
		return LIMIT_ZERO;
	*kind = k;
	*value = v;
	return 0;
}

int
limit_valid(uint32_t kind, uint64_t value)
{
	return (kind == GF_LIMIT_BYTES && value > 0) ||
	    (kind == GF_LIMIT_PERCENT && value > 0 && value <= 10000);
}

int
guarantee_parse(const char *s, uint32_t *kind, uint64_t *value)
{
	if (amount_parse(s, kind, value) < 0)
		return -1;
	if (*value == 0)
		*kind = GF_LIMIT_BYTES;
	return 0;
}

uint64_t
limit_resolve(uint32_t kind, uint64_t value, uint64_t capacity)
{
	switch (kind) {
	case GF_LIMIT_BYTES:
		return value;
	case GF_LIMIT_PERCENT:
		return (uint64_t)((unsigned __int128)capacity * value / 10000);
	default:
		return capacity;
	}
}

char *
size_format(uint64_t bytes, char *buf, size_t size)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB",
	    "TiB", "PiB", "EiB" };
	unsigned i = 0;
	uint64_t div = 1;

	while (i + 1 < sizeof(names) / sizeof(names[0]) && bytes / div >= 1024) {
		div *= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, size, "%lluB", (unsigned long long)bytes);
	else {
		/* one decimal, rounded down so a full quota never shows more */
		uint64_t tenths = (uint64_t)((unsigned __int128)bytes * 10 / div);

		snprintf(buf, size, "%llu.%llu%s",
		    (unsigned long long)(tenths / 10),
		    (unsigned long long)(tenths % 10), names[i]);
	}
	return buf;
}

int
decimal_parse(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

int
int32_parse(const char *s, int32_t *out)
{
	long long v;
	char *end;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s == '\0' || isspace((unsigned char)*s) || *end != '\0' ||
	    errno != 0 || v < INT32_MIN || v > INT32_MAX)
		return -1;
	*out = (int32_t)v;
	return 0;
}
