/*
 * On a real GPU: does shim/stall.c tell a thread that waits in the real
 * driver's checkpoint lock from the driver's own threads? The program
 * takes a context and memory, notes its threads, has a second process
 * (itself, "lock PID") lock it with cuCheckpointProcessLock, then calls
 * the driver from its main thread, which blocks; a looking thread reports
 * which thread it finds and when. Run as root: cc -I../../shim
 * stall_probe.c -ldl -lpthread; ./a.out
 */
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../shim/stall.c"

typedef int (*fn_i)(unsigned);
static void *cu;
static pid_t main_tid;
static volatile int locked_done;

static void *
sym(const char *n)
{
	void *p = dlsym(cu, n);

	if (p == NULL) {
		printf("no %s\n", n);
		exit(1);
	}
	return p;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *
looker(void *arg)
{
	struct stall *s = arg;
	double t0 = now();
	size_t i;
	int k, indrv = 0;
	pid_t tid;

	s->self[0] = (pid_t)syscall(SYS_gettid);
	stall_snapshot(s);
	for (i = 0; i < s->n; i++)
		if (s->t[i].snap.blocked && stall_in_driver(s, &s->t[i].snap))
			indrv++;
	printf("snapshot: %zu threads, %d blocked in the driver\n", s->n,
	    indrv);
	for (i = 0; i < s->n; i++) {
		char path[64], name[32] = "?";
		FILE *fp;

		snprintf(path, sizeof(path), "/proc/self/task/%d/comm",
		    (int)s->t[i].tid);
		if ((fp = fopen(path, "r")) != NULL) {
			if (fgets(name, sizeof(name), fp) != NULL)
				name[strcspn(name, "\n")] = '\0';
			fclose(fp);
		}
		printf("  thread %d '%s'%s%s\n", (int)s->t[i].tid, name,
		    s->t[i].driver_own ? ", the driver's own" : "",
		    s->t[i].tid == main_tid ? ", main" : "");
	}
	fflush(stdout);
	for (k = 0; k < 60; k++) {
		poll(NULL, 0, 100);
		if ((tid = stall_look(s)) != 0) {
			printf("look %d (%.2f s): thread %d waits in the driver "
			    "(main is %d)\n", k, now() - t0, (int)tid,
			    (int)main_tid);
			fflush(stdout);
			return NULL;
		}
	}
	printf("nothing found in 6 s\n");
	return NULL;
}

int
main(int argc, char **argv)
{
	int (*init)(unsigned), (*retain)(void **, int), (*setcur)(void *);
	int (*alloc)(unsigned long long *, size_t);
	int (*lock)(int, void *), (*unlock)(int, void *);
	unsigned long long p;
	void *ctx;
	struct stall s;
	pthread_t t;
	pid_t child;
	int r;

	cu = dlopen("libcuda.so.1", RTLD_NOW);
	if (cu == NULL) {
		printf("no libcuda\n");
		return 1;
	}
	init = sym("cuInit");
	if ((r = init(0)) != 0) {
		printf("cuInit %d\n", r);
		return 1;
	}
	if (argc == 3 && strcmp(argv[1], "lock") == 0) {
		lock = sym("cuCheckpointProcessLock");
		unlock = sym("cuCheckpointProcessUnlock");
		r = lock(atoi(argv[2]), NULL);
		printf("lock: %d\n", r);
		fflush(stdout);
		sleep(3);
		r = unlock(atoi(argv[2]), NULL);
		printf("unlock: %d\n", r);
		return 0;
	}
	retain = sym("cuDevicePrimaryCtxRetain");
	setcur = sym("cuCtxSetCurrent");
	alloc = sym("cuMemAlloc_v2");
	if (retain(&ctx, 0) || setcur(ctx) || alloc(&p, 1 << 20)) {
		printf("context or alloc failed\n");
		return 1;
	}
	main_tid = (pid_t)syscall(SYS_gettid);
	if (stall_init(&s, (void *)alloc) < 0) {
		printf("stall_init failed\n");
		return 1;
	}
	printf("driver text: %zu segments, first %#lx-%#lx\n", s.ntext,
	    (unsigned long)s.text[0][0], (unsigned long)s.text[0][1]);
	sleep(1);	/* let the driver's threads settle */
	pthread_create(&t, NULL, looker, &s);
	sleep(1);
	if ((child = fork()) == 0) {
		char pid[16];

		snprintf(pid, sizeof(pid), "%d", (int)getppid());
		execl("/proc/self/exe", argv[0], "lock", pid, (char *)NULL);
		_exit(1);
	}
	sleep(1);
	printf("main calls the driver (locked)\n");
	fflush(stdout);
	r = alloc(&p, 1 << 20);
	printf("main's call returned %d\n", r);
	fflush(stdout);
	pthread_join(t, NULL);
	waitpid(child, NULL, 0);
	return 0;
}
