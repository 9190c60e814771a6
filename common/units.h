/*
 * Parsing and printing of the quantities users write: sizes in Kubernetes
 * notation, percentages and durations. Shared by the shim, daemon and CLI.
 */
#ifndef GF_COMMON_UNITS_H
#define GF_COMMON_UNITS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A size: a decimal number (fraction allowed: "1.5G") and an optional unit,
 * Ki Mi Gi Ti (powers of 1024, also KiB MiB GiB TiB) or k K M G T (powers of
 * 1000), or none for bytes. Fractions are truncated to whole bytes.
 * Returns 0, or -1 for garbage, an empty string, a negative number or
 * overflow of 64 bits.
 */
int	size_parse(const char *s, uint64_t *bytes);

/*
 * A limit: a size, or a percentage "N%" / "N.NN%" (0 < N <= 100) stored in
 * hundredths of a percent. *kind is GF_LIMIT_BYTES or GF_LIMIT_PERCENT.
 * Returns 0, -1 for garbage, or LIMIT_ZERO for a zero however written
 * ("0", "0Gi", "0%", "0.001%"): a limit that lets nothing be held is never
 * what is meant, so each caller refuses it, saying a limit must be
 * positive.
 */
#define LIMIT_ZERO	(-2)
int	limit_parse(const char *s, uint32_t *kind, uint64_t *value);

/*
 * A guarantee: as a limit, but a zero however written is no guarantee
 * (GF_LIMIT_BYTES, 0). Returns 0 or -1.
 */
int	guarantee_parse(const char *s, uint32_t *kind, uint64_t *value);

/*
 * Whether a limit as sent on the wire is one limit_parse gives: a
 * positive size, or 0.01% to 100%.
 */
int	limit_valid(uint32_t kind, uint64_t value);

/* Resolve a limit against a capacity: bytes as given, or the share of it. */
uint64_t limit_resolve(uint32_t kind, uint64_t value, uint64_t capacity);

/*
 * A decimal number written with digits only (no sign, no space), at most
 * max. Returns 0 with the value in *out, or -1.
 */
int	decimal_parse(const char *s, uint64_t max, uint64_t *out);

/* A signed decimal integer that fits 32 bits ("-5", "10"): 0 or -1. */
int	int32_parse(const char *s, int32_t *out);

/*
 * A duration: a decimal number with unit ms, s, m or h ("30s", "1.5s",
 * "250ms"); a bare number is seconds. Returns 0 with milliseconds, or -1.
 */
int	duration_parse(const char *s, uint64_t *ms);

/*
 * Print bytes with an IEC unit for humans: "0B", "512B", "1.0KiB",
 * "3.5GiB". Returns buf.
 */
char	*size_format(uint64_t bytes, char *buf, size_t size);

#endif
