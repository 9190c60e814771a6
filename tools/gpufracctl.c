/*
 * gpufracctl: the operator's view of gpufracd. Command line, usage and the
 * command table; the queries live in ctl_query.c, the output in ctl_print.c
 * and ctl_json.c.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_json.h"
#include "ctl_print.h"
#include "ctl_query.h"
#include "log.h"
#include "sock.h"

enum {
	EXIT_OK = 0,
	EXIT_NO = 1,		/* the daemon said no or is not reachable */
	EXIT_USAGE = 2,
};

struct cmd {
	const char	*name;
	const char	*arg;		/* its one argument, or NULL */
	const char	*help;
	int		(*run)(const char *path, const char *arg, int json);
};

static int	cmd_status(const char *, const char *, int);
static int	cmd_ps(const char *, const char *, int);
static int	cmd_allocs(const char *, const char *, int);
static int	cmd_help(const char *, const char *, int);

static const struct cmd cmds[] = {
	{ "status", NULL, "show the daemon, its devices and their capacity",
	  cmd_status },
	{ "ps", NULL, "list the clients, one row per process and device",
	  cmd_ps },
	{ "allocs", "pid", "list the live allocations of process pid",
	  cmd_allocs },
	{ "help", NULL, "show this help", cmd_help },
};

#define NCMDS	(sizeof(cmds) / sizeof(cmds[0]))

/* Reads exactly like the SYNOPSIS of gpufracctl(1). */
static void
usage(FILE *fp)
{
	char name[32];
	size_t i;

	fputs("usage: gpufracctl [-s socket] command [--json]\n"
	    "commands:\n", fp);
	for (i = 0; i < NCMDS; i++) {
		snprintf(name, sizeof(name), "%s%s%s", cmds[i].name,
		    cmds[i].arg ? " " : "", cmds[i].arg ? cmds[i].arg : "");
		fprintf(fp, "  %-12s %s\n", name, cmds[i].help);
	}
}

static int
usage_error(void)
{
	usage(stderr);
	return EXIT_USAGE;
}

/* A pid as a positive decimal number that fits a pid_t. */
static int
pid_parse(const char *s, uint32_t *pid)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno == ERANGE || *end != '\0' || v == 0 || v > INT32_MAX)
		return -1;
	*pid = (uint32_t)v;
	return 0;
}

static int
cmd_status(const char *path, const char *arg, int json)
{
	struct ctl_status st;

	(void)arg;
	if (ctl_query_status(path, &st) < 0)
		return EXIT_NO;
	if (json)
		ctl_json_status(stdout, &st);
	else
		ctl_print_status(stdout, &st);
	free(st.devices);
	return EXIT_OK;
}

static int
cmd_ps(const char *path, const char *arg, int json)
{
	struct gf_client *clients;
	size_t n;

	(void)arg;
	if (ctl_query_ps(path, &clients, &n) < 0)
		return EXIT_NO;
	if (json)
		ctl_json_ps(stdout, clients, n);
	else
		ctl_print_ps(stdout, clients, n);
	free(clients);
	return EXIT_OK;
}

static int
cmd_allocs(const char *path, const char *arg, int json)
{
	struct gf_alloc *allocs;
	uint32_t pid;
	size_t n;

	if (pid_parse(arg, &pid) < 0) {
		log_errx("invalid pid '%s'", arg);
		return usage_error();
	}
	if (ctl_query_allocs(path, pid, &allocs, &n) < 0)
		return EXIT_NO;
	if (json)
		ctl_json_allocs(stdout, pid, allocs, n);
	else
		ctl_print_allocs(stdout, allocs, n);
	free(allocs);
	return EXIT_OK;
}

static int
cmd_help(const char *path, const char *arg, int json)
{
	(void)path;
	(void)arg;
	(void)json;
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
 * After the command, "--json" may come anywhere; every other word is an
 * argument of the command (so "allocs -1" is a bad pid, not an option).
 * Returns the number of arguments left in argv.
 */
static int
args_collect(int argc, char *argv[], int *json)
{
	int i, n = 0;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			*json = 1;
		else
			argv[n++] = argv[i];
	}
	return n;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	const struct cmd *cmd;
	int ch, json = 0, nargs, rc;

	log_init("gpufracctl", LOG_LVL_ERROR, 0);
	opterr = 0;
	/* "+": options end at the command */
	while ((ch = getopt_long(argc, argv, "+:hs:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'j':
			json = 1;
			break;
		case 's':
			path = optarg;
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
	if (optind == argc) {
		log_errx("no command given");
		return usage_error();
	}
	if ((cmd = cmd_find(argv[optind])) == NULL) {
		log_errx("unknown command '%s'", argv[optind]);
		return usage_error();
	}
	argv += optind + 1;
	argc = args_collect(argc - optind - 1, argv, &json);
	nargs = cmd->arg ? 1 : 0;
	if (argc < nargs) {
		log_errx("'%s' needs a %s", cmd->name, cmd->arg);
		return usage_error();
	}
	if (argc > nargs) {
		log_errx("too many arguments for '%s'", cmd->name);
		return usage_error();
	}
	if (path == NULL)
		path = sock_default_path();
	rc = cmd->run(path, nargs ? argv[0] : NULL, json);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		log_err("cannot write the output");
		return EXIT_NO;
	}
	return rc;
}
