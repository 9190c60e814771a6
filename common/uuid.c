/*
 * Formatting and parsing of NVIDIA-style device UUIDs.
 */
#include <stdio.h>
#include <string.h>

#include "uuid.h"

/* Where a dash follows a byte: the 4-2-2-2-6 grouping. */
static int
dash_after(int i)
{
	return i == 3 || i == 5 || i == 7 || i == 9;
}

char *
uuid_format(const uint8_t uuid[GF_UUID_LEN], char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	char s[UUID_STR_LEN];
	size_t n = 4;
	int i;

	memcpy(s, "GPU-", 4);
	for (i = 0; i < GF_UUID_LEN; i++) {
		s[n++] = hex[uuid[i] >> 4];
		s[n++] = hex[uuid[i] & 0xf];
		if (dash_after(i))
			s[n++] = '-';
	}
	s[n] = '\0';
	if (size > 0)
		snprintf(buf, size, "%s", s);
	return buf;
}

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
uuid_parse(const char *s, uint8_t uuid[GF_UUID_LEN])
{
	uint8_t out[GF_UUID_LEN];
	int i;

	if (s == NULL || strncmp(s, "GPU-", 4) != 0)
		return -1;
	s += 4;
	for (i = 0; i < GF_UUID_LEN; i++) {
		int hi = hex_value(s[0]), lo;

		if (hi < 0 || (lo = hex_value(s[1])) < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (dash_after(i) && *s++ != '-')
			return -1;
	}
	if (*s != '\0')
		return -1;
	memcpy(uuid, out, sizeof(out));
	return 0;
}

int
uuid_is_zero(const uint8_t uuid[GF_UUID_LEN])
{
	int i;

	for (i = 0; i < GF_UUID_LEN; i++)
		if (uuid[i] != 0)
			return 0;
	return 1;
}
