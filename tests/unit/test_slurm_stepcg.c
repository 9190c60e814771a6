/*
 * Unit tests of slurm/stepcg.c: the step's cgroup found in Slurm's own
 * hierarchy, paths compared by components, cgroup.events read, and a
 * parent directory outside the cgroup2 file system refused.
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
#include "../../slurm/stepcg.c"

static void
slurm_is(const char *self, uint32_t job, const char *step, const char *want)
{
	struct stepcg cg;
	int r;

	memset(&cg, 0, sizeof(cg));
	r = stepcg_slurm(&cg, self, job, step);
	if (want == NULL) {
		if (r != 0)
			fail_msg("'%s' (job %u step %s): found '%s'", self, job,
			    step, cg.path);
		return;
	}
	if (r != 1 || strcmp(cg.path, want) != 0 || cg.owned)
		fail_msg("'%s' (job %u step %s): got %d '%s', want '%s'", self,
		    job, step, r, cg.path, want);
}

static void
test_slurm_own(void **state)
{
	(void)state;
	/* cgroup/v2: slurmstepd in step_N/slurm, tasks in step_N/user */
	slurm_is("/system.slice/slurmstepd.scope/job_5/step_0/slurm", 5, "0",
	    "/system.slice/slurmstepd.scope/job_5/step_0");
	/* cgroup/v1 */
	slurm_is("/slurm/uid_1000/job_77/step_batch", 77, "batch",
	    "/slurm/uid_1000/job_77/step_batch");
	slurm_is("/slurm/uid_0/job_7/step_interactive/task_0", 7,
	    "interactive", "/slurm/uid_0/job_7/step_interactive");
	/* whole components only */
	slurm_is("/slurm/job_55/step_0", 5, "0", NULL);
	slurm_is("/slurm/job_5/step_01", 5, "0", NULL);
	slurm_is("/slurm/job_5/step_1", 5, "0", NULL);
	slurm_is("/", 5, "0", NULL);
	slurm_is("", 5, "0", NULL);
	/* the second of two lookalikes */
	slurm_is("/job_5/step_0x/job_5/step_0", 5, "0",
	    "/job_5/step_0x/job_5/step_0");
}

static void
test_path_under(void **state)
{
	(void)state;
	assert_true(path_under("/sys/fs/cgroup/x", "/sys/fs/cgroup"));
	assert_true(path_under("/sys/fs/cgroup", "/sys/fs/cgroup"));
	assert_true(path_under("/anything", "/"));
	assert_false(path_under("/sys/fs/cgroupx", "/sys/fs/cgroup"));
	assert_false(path_under("/sys/fs", "/sys/fs/cgroup"));
}

static int
populated_of(const char *text)
{
	char path[] = "/tmp/test_stepcg.XXXXXX";
	int fd, r;

	if ((fd = mkstemp(path)) < 0)
		fail_msg("mkstemp: %s", strerror(errno));
	unlink(path);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		fail_msg("write: %s", strerror(errno));
	r = populated(fd);
	close(fd);
	return r;
}

static void
test_events(void **state)
{
	(void)state;
	assert_int_equal(populated_of("populated 1\nfrozen 0\n"), 1);
	assert_int_equal(populated_of("populated 0\nfrozen 0\n"), 0);
	assert_int_equal(populated_of("frozen 0\npopulated 1\n"), 1);
	assert_int_equal(populated_of("frozen 0\n"), -1);
	assert_int_equal(populated_of(""), -1);
}

/* A parent outside the cgroup2 file system is refused, and not made. */
static void
test_outside(void **state)
{
	char dir[] = "/tmp/test_stepcg.XXXXXX", parent[64], err[512] = "";
	struct stepcg cg;

	(void)state;
	if (mkdtemp(dir) == NULL)
		fail_msg("mkdtemp: %s", strerror(errno));
	snprintf(parent, sizeof(parent), "%s/steps", dir);
	assert_int_equal(stepcg_create(&cg, parent, "job_1_step_0", err,
	    sizeof(err)), -1);
	if (strstr(err, parent) == NULL && strstr(err, "no cgroup2") == NULL)
		fail_msg("err '%s' names neither '%s' nor the mount", err,
		    parent);
	assert_int_equal(rmdir(dir), 0);	/* nothing made inside */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slurm_own),
		cmocka_unit_test(test_path_under),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_outside),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
