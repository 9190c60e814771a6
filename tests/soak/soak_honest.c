/*
 * The honest soak (SOAK_MODE=honest): clients that do nothing wrong, in
 * one group near its limit, with nothing going wrong around them. Every
 * decision the daemon takes is followed (gpufracctl events --follow,
 * into the work directory) and judged at the end, with its log: no
 * client's word refused, none believed past a limit, no connection
 * closed, no driver out-of-memory on a grant, and every out-of-memory a
 * client saw is one the daemon's ledger denied (DESIGN.md section 4: no
 * honest path sends a charge that no reserve covers).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "log.h"
#include "soak.h"

#define FOLLOWER_MS	10000	/* to read the last events, once the
				   daemon has gone */

int
honest_follow(struct soak *s)
{
	char prog[PATH_MAX], log[PATH_MAX];
	int fd;

	if (harness_path(prog, sizeof(prog), s->build, "tools/gpufracctl") <
	    0 || harness_path(s->events, sizeof(s->events), s->dir,
	    "events.json") < 0 || harness_path(log, sizeof(log), s->dir,
	    "gpufracctl.log") < 0)
		return -1;
	if ((s->follower = harness_fork()) < 0) {
		s->follower = 0;
		return -1;
	}
	if (s->follower == 0) {
		/* It says on stderr that the daemon went, at the end. */
		if ((fd = open(s->events, O_WRONLY | O_CREAT | O_TRUNC,
		    0644)) < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
		    (fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644)) < 0 ||
		    dup2(fd, STDERR_FILENO) < 0)
			_exit(127);
		execl(prog, "gpufracctl", "-s", s->sock, "events", "--follow",
		    "--json", (char *)NULL);
		_exit(127);
	}
	return 0;
}

int
honest_exited(struct soak *s, pid_t pid)
{
	if (pid != s->follower || pid <= 0)
		return 0;
	s->follower = 0;
	if (s->daemon > 0)
		soak_fail(s, "gpufracctl events --follow ended while gpufracd "
		    "ran: the decisions are not all counted");
	return 1;
}

/* How many lines of path hold needle. */
static uint64_t
lines_with(const char *path, const char *needle, const char *also)
{
	char line[2048];
	uint64_t n = 0;
	FILE *f;

	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, needle) != NULL &&
		    (also == NULL || strstr(line, also) != NULL))
			n++;
	fclose(f);
	return n;
}

static uint64_t
events_of(const struct soak *s, const char *kind)
{
	char needle[64];

	snprintf(needle, sizeof(needle), "\"event\":\"%s\"", kind);
	return lines_with(s->events, needle, NULL);
}

/* After the daemon stopped: what it decided, against the clients. */
void
honest_verdict(struct soak *s)
{
	struct soak_counts *n = &s->n;
	int status;

	if (s->follower > 0) {
		status = harness_reap(s->follower, FOLLOWER_MS);
		s->follower = 0;
		if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) > 1)
			soak_fail(s, "gpufracctl events --follow ended with wait "
			    "status %#x", status);
	}
	n->refusals = events_of(s, "refused");
	n->past_limits = events_of(s, "past-limit");
	n->driver_ooms = events_of(s, "driver-oom");
	n->daemon_denies = events_of(s, "deny") + events_of(s, "timeout");
	/* One line per departure; a client's own exit is not a warning. */
	n->disconnections = lines_with(s->log, "closing the connection of "
	    "pid", NULL);
	if (n->refusals > 0)
		soak_fail(s, "gpufracd refused %llu charge(s) of honest clients; "
		    "see %s", (unsigned long long)n->refusals, s->events);
	if (n->past_limits > 0)
		soak_fail(s, "gpufracd believed %llu charge(s) past a limit; see "
		    "%s", (unsigned long long)n->past_limits, s->events);
	if (n->disconnections > 0)
		soak_fail(s, "gpufracd closed %llu connection(s); see %s",
		    (unsigned long long)n->disconnections, s->log);
	if (n->driver_ooms > 0)
		soak_fail(s, "the driver refused %llu grant(s): the ledger did "
		    "not know what it holds", (unsigned long long)n->driver_ooms);
	if (n->denied != n->daemon_denies)
		soak_fail(s, "the clients saw %llu out-of-memory error(s), the "
		    "ledger denied %llu", (unsigned long long)n->denied,
		    (unsigned long long)n->daemon_denies);
}
