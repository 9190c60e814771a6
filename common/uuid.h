/*
 * Device UUIDs as NVIDIA prints them (nvidia-smi -L, CUDA_VISIBLE_DEVICES):
 * "GPU-" and 16 bytes in 4-2-2-2-6 groups of lower-case hex. The one place
 * that formats or parses them, for the daemon, the shim and the CLI.
 */
#ifndef GF_COMMON_UUID_H
#define GF_COMMON_UUID_H

#include <stddef.h>
#include <stdint.h>

#include "gpufrac/proto.h"

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" and its NUL. */
#define UUID_STR_LEN	(4 + 2 * GF_UUID_LEN + 4 + 1)

/*
 * Format uuid into buf (UUID_STR_LEN bytes make it fit; a shorter buffer
 * gets a truncated, terminated string). Returns buf.
 */
char	*uuid_format(const uint8_t uuid[GF_UUID_LEN], char *buf, size_t size);

/*
 * Parse exactly "GPU-" and 32 hex digits in the 8-4-4-4-12 grouping, either
 * case. Returns 0 with the bytes in uuid, or -1 (uuid untouched).
 */
int	uuid_parse(const char *s, uint8_t uuid[GF_UUID_LEN]);

/* 1 when all 16 bytes are zero: the "no device" uuid on the wire. */
int	uuid_is_zero(const uint8_t uuid[GF_UUID_LEN]);

#endif
