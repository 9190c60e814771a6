/*
 * The fuzz target without libFuzzer: replay [-v] [-r N [-s SEED]] PATH...
 * runs N inputs made up from SEED (default 1), then every input file
 * named, and every file in each directory named (in name order), once
 * each through LLVMFuzzerTestOneInput. A finding aborts, naming the file.
 * make check runs it over fuzz/corpus and fuzz/regress (built with gcc and
 * whatever sanitizer the build has).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#define INPUT_MAX	(1u << 20)

static int verbose;
static unsigned replayed;

static void
replay_file(const char *path)
{
	static uint8_t buf[INPUT_MAX];
	size_t n;
	FILE *fp;

	if ((fp = fopen(path, "rb")) == NULL) {
		fprintf(stderr, "replay: cannot open '%s': %s\n", path,
		    strerror(errno));
		exit(1);
	}
	n = fread(buf, 1, sizeof(buf), fp);
	if (ferror(fp) || !feof(fp)) {
		fprintf(stderr, "replay: cannot read '%s' (at most %u "
		    "bytes)\n", path, INPUT_MAX);
		exit(1);
	}
	fclose(fp);
	if (verbose)
		fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
	fz.input_name = path;
	(void)LLVMFuzzerTestOneInput(buf, n);
	fz.input_name = NULL;
	replayed++;
}

static int
name_compare(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void
replay_dir(const char *dir)
{
	struct dirent **names;
	char path[4096];
	int i, n;

	if ((n = scandir(dir, &names, NULL, name_compare)) < 0) {
		fprintf(stderr, "replay: cannot list '%s': %s\n", dir,
		    strerror(errno));
		exit(1);
	}
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    names[i]->d_name) < sizeof(path))
			replay_file(path);
		free(names[i]);
	}
	free(names);
}

/*
 * n inputs made up from seed (xorshift64), each of 16 to 271 bytes: the
 * liar target's ops are well-formed whatever their bytes, so that even
 * blind inputs reach its checks (make check runs a few hundred).
 */
static void
replay_random(unsigned long n, uint64_t seed)
{
	static uint8_t buf[272];
	uint64_t x = seed | 1;
	unsigned long i;
	size_t len, k;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		len = 16 + (size_t)(x % 256);
		for (k = 0; k < len; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[k] = (uint8_t)(x >> 24);
		}
		if (verbose)
			fprintf(stderr, "replay: random input %lu of seed %llu "
			    "(%zu bytes)\n", i, (unsigned long long)seed, len);
		(void)LLVMFuzzerTestOneInput(buf, len);
		replayed++;
	}
}

/* A number of an option: its whole, or exit 2. */
static unsigned long long
number(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0') {
		fprintf(stderr, "replay: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int
main(int argc, char *argv[])
{
	unsigned long long nrandom = 0, seed = 1;
	struct stat st;
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-v") == 0)
			verbose = 1;
		else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
			nrandom = number(argv[++i]);
		else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			seed = number(argv[++i]);
		else
			break;
	}
	if (i == argc && nrandom == 0) {
		fprintf(stderr, "usage: replay [-v] [-r N [-s SEED]] "
		    "[file|directory ...]\n");
		return 2;
	}
	replay_random((unsigned long)nrandom, seed);
	for (; i < argc; i++) {
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: cannot find '%s': %s\n",
			    argv[i], strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode))
			replay_dir(argv[i]);
		else
			replay_file(argv[i]);
	}
	printf("replayed %u inputs\n", replayed);
	return 0;
}
