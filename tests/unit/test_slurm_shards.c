/*
 * Unit tests of slurm/shards.c: Slurm host lists, the node's shards per
 * GPU from gres.conf (File ranges, NodeName, Count without File, bad
 * lines with PATH:LINE), and a step's part of a GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* The Makefile links unit tests with common/ only: build the file here. */
#include "../../slurm/shards.c"

/* gres.conf text for host, with gpus_seen: the counts as "8,8" or err. */
static void
gres_is(const char *text, const char *host, size_t gpus_seen,
    const char *want)
{
	struct shards_node sn;
	char got[256], err[256];
	size_t i, n = 0;
	FILE *fp;

	fp = fmemopen((void *)text, strlen(text), "r");
	assert_non_null(fp);
	if (shards_gres_parse(fp, "gres.conf", host, gpus_seen, &sn, err,
	    sizeof(err)) < 0)
		snprintf(got, sizeof(got), "%s", err);
	else
		for (got[0] = '\0', i = 0; i < sn.ngpus; i++)
			n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%llu",
			    i ? "," : "", (unsigned long long)sn.count[i]);
	fclose(fp);
	if (strcmp(got, want) != 0)
		fail_msg("'%s' on %s: got '%s', want '%s'", text, host, got,
		    want);
}

static void
test_host_list(void **state)
{
	(void)state;
	assert_true(shards_host_match("n1", "n1"));
	assert_false(shards_host_match("n1", "n12"));
	assert_true(shards_host_match("login,gpu[1-4,7]", "gpu3"));
	assert_true(shards_host_match("login,gpu[1-4,7]", "gpu7"));
	assert_false(shards_host_match("login,gpu[1-4,7]", "gpu5"));
	assert_true(shards_host_match("login,gpu[1-4,7]", "login"));
	/* a padded range names padded hosts only */
	assert_true(shards_host_match("gpu[01-10]", "gpu09"));
	assert_false(shards_host_match("gpu[01-10]", "gpu9"));
	assert_false(shards_host_match("gpu[1-10]", "gpu09"));
	assert_true(shards_host_match("gpu[1-4]-ib", "gpu2-ib"));
	assert_false(shards_host_match("gpu[1-4]-ib", "gpu2"));
	assert_false(shards_host_match("gpu[1-", "gpu1"));
	assert_false(shards_host_match("gpu[x]", "gpu1"));
}

static void
test_gres(void **state)
{
	(void)state;
	gres_is("AutoDetect=off\nName=gpu File=/dev/nvidia0\n"
	    "Name=shard Count=8 File=/dev/nvidia0\n", "n1", 0, "8");
	/* Count spread evenly over the files of its line */
	gres_is("Name=shard Count=16 File=/dev/nvidia[0-1]\n"
	    "name=SHARD count=4 file=/dev/nvidia2 # small one\n", "n1", 0,
	    "8,8,4");
	gres_is("Name=shard Count=6 File=/dev/nvidia0,/dev/nvidia[2-3]\n",
	    "n1", 0, "2,2,2");
	/* another node's lines are not this one's */
	gres_is("NodeName=gpu[1-2] Name=shard Count=8 File=/dev/nvidia0\n"
	    "NodeName=gpu3 Name=shard Count=4 File=/dev/nvidia0\n", "gpu3",
	    0, "4");
	gres_is("NodeName=other Name=shard Count=8 File=/dev/nvidia0\n",
	    "n1", 0, "");
	/* no File: over the Name=gpu files, else over what the daemon sees */
	gres_is("Name=gpu File=/dev/nvidia[0-3]\nName=shard Count=32\n",
	    "n1", 1, "8,8,8,8");
	gres_is("AutoDetect=nvml\nName=shard Count=32\n", "n1", 2, "16,16");
	gres_is("AutoDetect=nvml\nName=shard Count=32\n", "n1", 0,
	    "gres.conf: Name=shard without File, and no GPU to spread it "
	    "over");
	gres_is("Name=gpu File=/dev/nvidia0\n\nName=shard Count=eight "
	    "File=/dev/nvidia0\n", "n1", 0, "gres.conf:3: Name=shard needs "
	    "Count=N (a number of shards), not 'eight'");
	gres_is("Name=shard Count=8 File=/dev/nvidia[3-1]\n", "n1", 0,
	    "gres.conf:1: cannot read File='/dev/nvidia[3-1]'");
	/* MultipleFiles: one GPU (MIG) */
	gres_is("Name=shard Count=8 MultipleFiles=/dev/nvidia0,/dev/nvidia-caps"
	    "/nvidia-cap21\n", "n1", 0, "8");
}

static void
test_per_gpu(void **state)
{
	struct shards_node sn = { { 4, 8, 2 }, 3 };

	(void)state;
	/* where they differ, the most: the least memory a shard can be */
	assert_int_equal(shards_per_gpu(&sn), 8);
	sn.ngpus = 0;
	assert_int_equal(shards_per_gpu(&sn), 0);
}

static void
test_share(void **state)
{
	(void)state;
	assert_int_equal(shards_share(2, 1, 8), 2500);
	assert_int_equal(shards_share(6, 1, 8), 7500);
	assert_int_equal(shards_share(8, 1, 8), 10000);
	assert_int_equal(shards_share(1, 1, 3), 3333);
	/* spread evenly over two GPUs: half of each GPU's part */
	assert_int_equal(shards_share(4, 2, 8), 2500);
	/* more than the GPU has: all of it; less than 0.01%: 0.01% */
	assert_int_equal(shards_share(12, 1, 8), 10000);
	assert_int_equal(shards_share(1, 1, 1000000), 1);
	assert_int_equal(shards_share(0, 1, 8), 0);
	assert_int_equal(shards_share(2, 1, 0), 0);
	assert_int_equal(shards_share(2, 0, 8), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_list),
		cmocka_unit_test(test_gres),
		cmocka_unit_test(test_per_gpu),
		cmocka_unit_test(test_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
