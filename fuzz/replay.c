/*
 * The fuzz target without libFuzzer: replay [-v] PATH... runs every input
 * file named, and every file in each directory named (in name order), once
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

int
main(int argc, char *argv[])
{
	struct stat st;
	int i = 1;

	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		verbose = 1;
		i++;
	}
	if (i == argc) {
		fprintf(stderr, "usage: replay [-v] file|directory ...\n");
		return 2;
	}
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
