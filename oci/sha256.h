/*
 * SHA-256 (FIPS 180-4) of a string, for names that must not collide by
 * choice: a container's group name derived from its id (group.c).
 */
#ifndef GF_OCI_SHA256_H
#define GF_OCI_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN	32

/* The digest of the len bytes at p, into out. */
void	sha256(const void *p, size_t len, uint8_t out[SHA256_LEN]);

#endif
