/*
 * gpufracctl: the operator's view of gpufracd. Command line, usage and the
 * command table; the queries live in ctl_query.c, the output in ctl_print.c
 * and ctl_json.c.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_cdi.h"
#include "ctl_group.h"
#include "ctl_json.h"
#include "ctl_print.h"
#include "ctl_query.h"
#include "ctl_table.h"
#include "ctl_top.h"
#include "log.h"
#include "sock.h"

#ifndef GPUFRAC_VERSION
#define GPUFRAC_VERSION	"unknown"	/* the Makefile defines it */
#endif

enum {
	EXIT_OK = 0,
	EXIT_NO = 1,		/* the daemon said no or is not reachable */
	EXIT_USAGE = 2,
};

/* The command line, past the options. */
struct args {
	const char	*path;		/* the daemon's socket */
	const char	*arg;		/* the command's first argument, or NULL */
	const char	*arg2;		/* its second, or NULL */
	int		 json;		/* --json */
	int		 follow;	/* --follow */
	int		 argc;		/* CMD_REST: the words after the */
	char		**argv;		/* command's name */
};

/* What a command accepts besides --json. */
#define CMD_ARG		0x1		/* one argument */
#define CMD_FOLLOW	0x2		/* --follow */
#define CMD_ARG2	0x4		/* two arguments */
#define CMD_REST	0x8		/* its own words, in argc and argv */

struct cmd {
	const char	*name;
	const char	*synopsis;	/* what follows the name in usage */
	unsigned	 takes;		/* CMD_* */
	const char	*help;
	int		(*run)(const struct args *);
};

static int	cmd_status(const struct args *);
static int	cmd_ps(const struct args *);
static int	cmd_allocs(const struct args *);
static int	cmd_events(const struct args *);
static int	cmd_top(const struct args *);
static int	cmd_reload(const struct args *);
static int	cmd_swap(const struct args *);
static int	cmd_group(const struct args *);
static int	cmd_limit(const struct args *);
static int	cmd_disconnect(const struct args *);
static int	cmd_cdi(const struct args *);
static int	cmd_help(const struct args *);

static const struct cmd cmds[] = {
	{ "status", "", 0,
	  "show the daemon, its devices and groups and their memory",
	  cmd_status },
	{ "ps", "", 0, "list the clients, one row per process and device",
	  cmd_ps },
	{ "allocs", "pid", CMD_ARG,
	  "list the live allocations of process pid", cmd_allocs },
	{ "events", "[--follow]", CMD_FOLLOW,
	  "show recent decisions; with --follow, also new ones",
	  cmd_events },
	{ "top", CTL_TOP_SYNOPSIS, CMD_REST,
	  "a live view of devices, groups, processes and decisions",
	  cmd_top },
	{ "reload", "", 0, "make the daemon re-read its configuration",
	  cmd_reload },
	{ "swap", "out|in pid", CMD_ARG2,
	  "move process pid's GPU memory to host memory, or back",
	  cmd_swap },
	{ "group", "set name --match rule... | --cgroup path [--limit size] "
	  "[--guarantee size] [--priority n] [--resolver r] [--on-preempt a] "
	  "[--wait-timeout d] [--unshimmed count|kill]", CMD_REST,
	  "create or change a run-time group", cmd_group },
	{ "group", "rm name", CMD_REST, "remove a run-time group", cmd_group },
	{ "limit", "pid size [--device uuid|index]", CMD_REST,
	  "set one process's limit", cmd_limit },
	{ "disconnect", "pid", CMD_REST,
	  "close process pid's connections; it reconnects", cmd_disconnect },
	{ "cdi", CTL_CDI_SYNOPSIS, CMD_REST,
	  "print a CDI spec that puts containers under gpufrac", cmd_cdi },
	{ "help", "", 0, "show this help", cmd_help },
};

#define NCMDS	(sizeof(cmds) / sizeof(cmds[0]))

/* Reads exactly like the SYNOPSIS of gpufracctl(1). */
static void
usage(FILE *fp)
{
	char name[256];
	size_t i;

	fputs("usage: gpufracctl [-V] [-s socket] command [--json]\n"
	    "commands:\n", fp);
	for (i = 0; i < NCMDS; i++) {
		snprintf(name, sizeof(name), "%s%s%s", cmds[i].name,
		    cmds[i].synopsis[0] ? " " : "", cmds[i].synopsis);
		if (strlen(name) > 18)
			fprintf(fp, "  %s\n  %-18s %s\n", name, "",
			    cmds[i].help);
		else
			fprintf(fp, "  %-18s %s\n", name, cmds[i].help);
	}
}

static int
usage_error(void)
{
	usage(stderr);
	return EXIT_USAGE;
}

static int
cmd_status(const struct args *a)
{
	struct ctl_status st;

	if (ctl_query_status(a->path, &st) < 0) {
		ctl_status_free(&st);
		return EXIT_NO;
	}
	if (a->json)
		ctl_json_status(stdout, &st);
	else
		ctl_print_status(stdout, &st);
	ctl_status_free(&st);
	return EXIT_OK;
}

static int
cmd_ps(const struct args *a)
{
	struct gf_client *clients;
	size_t n;

	if (ctl_query_ps(a->path, &clients, &n) < 0)
		return EXIT_NO;
	if (a->json)
		ctl_json_ps(stdout, clients, n);
	else
		ctl_print_ps(stdout, clients, n);
	free(clients);
	return EXIT_OK;
}

static int
cmd_allocs(const struct args *a)
{
	struct gf_alloc *allocs;
	uint32_t pid;
	size_t n;

	if (ctl_pid_parse(a->arg, &pid) < 0) {
		log_errx("invalid pid '%s'", a->arg);
		return usage_error();
	}
	if (ctl_query_allocs(a->path, pid, &allocs, &n) < 0)
		return EXIT_NO;
	if (a->json)
		ctl_json_allocs(stdout, pid, allocs, n);
	else
		ctl_print_allocs(stdout, allocs, n);
	free(allocs);
	return EXIT_OK;
}

/* Following events: each line leaves at once, whoever reads it. */
struct follow_out {
	int		 json;
	struct ctl_table t;		/* without json */
};

/* -1 when stdout is gone (main says so). */
static int
follow_flush(struct follow_out *o)
{
	if (!o->json)
		ctl_table_flush(&o->t, stdout);
	if (fflush(stdout) == EOF || ferror(stdout))
		return -1;
	return 0;
}

static int
follow_backlog(const struct gf_event *events, size_t n, void *arg)
{
	struct follow_out *o = arg;
	size_t i;

	for (i = 0; i < n; i++)
		if (o->json)
			ctl_json_event(stdout, &events[i]);
		else
			ctl_print_event(&o->t, &events[i]);
	return follow_flush(o);
}

static int
follow_event(const struct gf_event *ev, void *arg)
{
	struct follow_out *o = arg;

	if (o->json)
		ctl_json_event(stdout, ev);
	else
		ctl_print_event(&o->t, ev);
	return follow_flush(o);
}

static int
cmd_events_follow(const struct args *a)
{
	struct follow_out o = { .json = a->json };
	const struct ctl_events_cb cb = { follow_backlog, follow_event, &o };
	int rc;

	if (!o.json)
		ctl_print_events_init(&o.t, 1);
	rc = ctl_query_events_follow(a->path, &cb);
	if (!o.json)
		ctl_table_free(&o.t);
	return rc < 0 ? EXIT_NO : EXIT_OK;
}

static int
cmd_events(const struct args *a)
{
	struct gf_event *events;
	size_t i, n;

	if (a->follow)
		return cmd_events_follow(a);
	if (ctl_query_events(a->path, &events, &n) < 0)
		return EXIT_NO;
	if (a->json)
		for (i = 0; i < n; i++)
			ctl_json_event(stdout, &events[i]);
	else
		ctl_print_events(stdout, events, n);
	free(events);
	return EXIT_OK;
}

static int
cmd_top(const struct args *a)
{
	if (a->json) {
		log_errx("'top' has no option '--json'");
		return usage_error();
	}
	return ctl_top(a->path, a->argc, a->argv);
}

static int
cmd_reload(const struct args *a)
{
	if (ctl_query_reload(a->path) < 0)
		return EXIT_NO;
	if (a->json)
		ctl_json_reload(stdout);
	return EXIT_OK;
}

static int
cmd_swap(const struct args *a)
{
	uint32_t pid;
	int out;

	if (strcmp(a->arg, "out") == 0)
		out = 1;
	else if (strcmp(a->arg, "in") == 0)
		out = 0;
	else {
		log_errx("swap: '%s' is neither 'out' nor 'in'", a->arg);
		return usage_error();
	}
	if (ctl_pid_parse(a->arg2, &pid) < 0) {
		log_errx("bad pid '%s'", a->arg2);
		return usage_error();
	}
	if (ctl_query_swap(a->path, pid, out) < 0)
		return EXIT_NO;
	if (a->json)
		ctl_json_swap(stdout, pid, out);
	return EXIT_OK;
}

static int
cmd_group(const struct args *a)
{
	return ctl_group(a->path, a->json, a->argc, a->argv);
}

static int
cmd_limit(const struct args *a)
{
	return ctl_limit(a->path, a->json, a->argc, a->argv);
}

static int
cmd_disconnect(const struct args *a)
{
	return ctl_disconnect(a->path, a->json, a->argc, a->argv);
}

static int
cmd_cdi(const struct args *a)
{
	return ctl_cdi(a->path, a->argc, a->argv);
}

static int
cmd_help(const struct args *a)
{
	(void)a;
	usage(stdout);
	return EXIT_OK;
}

static const struct cmd *
cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

/*
 * After the command, "--json" and "--follow" may come anywhere; every other
 * word is an argument of the command (so "allocs -1" is a bad pid, not an
 * option). Returns the number of arguments left in argv.
 */
static int
args_collect(int argc, char *argv[], struct args *a)
{
	int i, n = 0;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			a->json = 1;
		else if (strcmp(argv[i], "--follow") == 0)
			a->follow = 1;
		else
			argv[n++] = argv[i];
	}
	return n;
}

/*
 * A closed standard descriptor would be reused by the daemon's socket, and
 * the output written into the conversation: hold 0, 1 and 2 open. Output
 * to a closed stdout then still fails, as writing to it would have.
 */
static int
stdfds_hold(void)
{
	int fd, closed_out = 0;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		if (fd == STDOUT_FILENO)
			closed_out = 1;
		if (open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
			return -1;
	}
	if (closed_out) {
		errno = EBADF;
		return -1;
	}
	return 0;
}

/* A command's exit status, unless its output could not be written. */
static int
finish(int rc)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		log_err("cannot write the output");
		return EXIT_NO;
	}
	return rc;
}

/* The options before the command: -1 to go on, or the exit status. */
static int
options_parse(int argc, char *argv[], struct args *a)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	opterr = 0;
	/* "+": options end at the command */
	while ((ch = getopt_long(argc, argv, "+:hs:V", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("gpufracctl %s\n", GPUFRAC_VERSION);
			return finish(EXIT_OK);
		case 'j':
			a->json = 1;
			break;
		case 's':
			a->path = optarg;
			break;
		case ':':
			log_errx("option '-%c' needs an argument", optopt);
			return usage_error();
		default:
			if (optopt != 0)
				log_errx("unknown option '-%c'", optopt);
			else
				log_errx("unknown option '%s'",
				    argv[optind - 1]);
			return usage_error();
		}
	}
	return -1;
}

int
main(int argc, char *argv[])
{
	struct args a = { NULL, NULL, NULL, 0, 0, 0, NULL };
	const struct cmd *cmd;
	int nargs, rc;

	log_init("gpufracctl", LOG_LVL_ERROR, 0);
	if (stdfds_hold() < 0) {
		log_err("cannot write the output");
		return EXIT_NO;
	}
	if ((rc = options_parse(argc, argv, &a)) >= 0)
		return rc;
	if (optind == argc) {
		log_errx("no command given");
		return usage_error();
	}
	if ((cmd = cmd_find(argv[optind])) == NULL) {
		log_errx("unknown command '%s'", argv[optind]);
		return usage_error();
	}
	argv += optind + 1;
	argc = args_collect(argc - optind - 1, argv, &a);
	if (a.follow && !(cmd->takes & CMD_FOLLOW)) {
		log_errx("'%s' has no option '--follow'", cmd->name);
		return usage_error();
	}
	if (a.path == NULL)
		a.path = sock_default_path();
	if (cmd->takes & CMD_REST) {
		a.argc = argc;
		a.argv = argv;
		return finish(cmd->run(&a));
	}
	nargs = cmd->takes & CMD_ARG2 ? 2 : cmd->takes & CMD_ARG ? 1 : 0;
	if (argc < nargs) {
		log_errx("'%s' is missing arguments: gpufracctl %s %s",
		    cmd->name, cmd->name, cmd->synopsis);
		return usage_error();
	}
	if (argc > nargs) {
		log_errx("too many arguments for '%s'", cmd->name);
		return usage_error();
	}
	a.arg = nargs > 0 ? argv[0] : NULL;
	a.arg2 = nargs > 1 ? argv[1] : NULL;
	return finish(cmd->run(&a));
}
