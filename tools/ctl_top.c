/*
 * gpufracctl top: its options, and the loops that look at the daemon every
 * interval, on the screen (keys, signals, resizes) or as plain tables.
 * A daemon that does not answer is shown so, and asked again next time.
 */
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl_print.h"
#include "ctl_top.h"
#include "ctl_top_data.h"
#include "ctl_top_screen.h"
#include "ctl_top_view.h"
#include "log.h"
#include "units.h"

enum { EXIT_OK = 0, EXIT_NO = 1, EXIT_USAGE = 2 };

#define TOP_INTERVAL_MS		1000
#define TOP_INTERVAL_MIN_MS	100
#define TOP_COUNT_MAX		1000000000u

struct top_opts {
	const char	*path;
	uint64_t	 interval_ms;	/* -d */
	uint64_t	 count;		/* -n; 0: until stopped */
	int		 batch;		/* -b: plain tables even on a terminal */
};

/* SIGINT, SIGTERM or SIGHUP came while the screen was up. */
static volatile sig_atomic_t top_stopped;

static int
usage_says(void)
{
	log_errx("usage: gpufracctl top %s", CTL_TOP_SYNOPSIS);
	return EXIT_USAGE;
}

/* The value of option argv[*i] ("-n 5" or "-n5"), or NULL (said). */
static const char *
option_value(int argc, char *argv[], int *i)
{
	if (argv[*i][2] != '\0')
		return argv[*i] + 2;
	if (*i + 1 < argc)
		return argv[++*i];
	log_errx("top: option '%s' needs a value", argv[*i]);
	return NULL;
}

/* -n's or -d's value into o: 0, or -1 (said). */
static int
option_set(struct top_opts *o, char opt, const char *v)
{
	if (opt == 'n') {
		if (decimal_parse(v, TOP_COUNT_MAX, &o->count) == 0 &&
		    o->count > 0)
			return 0;
		log_errx("top: bad count '%s' (a number of looks, 1 or more)",
		    v);
		return -1;
	}
	if (duration_parse(v, &o->interval_ms) == 0 &&
	    o->interval_ms >= TOP_INTERVAL_MIN_MS)
		return 0;
	log_errx("top: bad interval '%s' (a duration such as 2s or 500ms, "
	    "at least %ums)", v, TOP_INTERVAL_MIN_MS);
	return -1;
}

static int
options_parse(struct top_opts *o, int argc, char *argv[])
{
	const char *w, *v;
	int i;

	for (i = 0; i < argc; i++) {
		w = argv[i];
		if (strcmp(w, "-b") == 0) {
			o->batch = 1;
			continue;
		}
		if (w[0] != '-' || (w[1] != 'd' && w[1] != 'n')) {
			log_errx("top: unexpected '%s'", w);
			return -1;
		}
		if ((v = option_value(argc, argv, &i)) == NULL ||
		    option_set(o, w[1], v) < 0)
			return -1;
	}
	return 0;
}

/* Milliseconds on the monotonic clock: the looks' schedule. */
static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One look as plain text: a title line, the tables, a blank line. */
static void
batch_print(const struct top_opts *o, const struct top_data *d, int up,
    struct top_text *t)
{
	char clock[16], every[32];

	printf("gpufracctl top: %s, %s\n", o->path,
	    top_view_clock(d->time_ms, clock, sizeof(clock)));
	if (!up) {
		/* the query said why on stderr */
		printf("gpufracd is not reachable; trying again in %s\n\n",
		    ctl_duration_format(o->interval_ms, every,
		    sizeof(every)));
		return;
	}
	top_view_render(t, d, 0);
	top_view_print(stdout, t);
	putchar('\n');
}

/* Like top -b: a look, then the next one an interval after it began. */
static int
batch_loop(const struct top_opts *o)
{
	struct top_text t = { NULL, 0, 0 };
	struct top_data d;
	int64_t next = mono_ms(), left;
	uint64_t looks;
	int up = 0;

	for (looks = 0; o->count == 0 || looks < o->count; looks++) {
		if (looks > 0) {
			next += (int64_t)o->interval_ms;
			while (!top_stopped && (left = next - mono_ms()) > 0)
				poll(NULL, 0, (int)left);
		}
		if (top_stopped)
			return EXIT_OK;	/* caught: the screen failed */
		up = top_data_gather(o->path, &d) == 0;
		batch_print(o, &d, up, &t);
		top_data_free(&d);
		if (fflush(stdout) == EOF || ferror(stdout))
			break;		/* gpufracctl says so */
	}
	top_text_free(&t);
	return up ? EXIT_OK : EXIT_NO;
}

static void
on_stop(int sig)
{
	(void)sig;
	top_stopped = 1;
}

/*
 * Before ncurses starts: it leaves handlers it finds in place, and these
 * interrupt the wait for a key (no SA_RESTART), so the screen goes at once.
 */
static void
stop_signals_catch(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			log_err("top: cannot catch signal %d", sigs[i]);
}

/* Look, draw, wait for the next look or a key, until q or a signal. */
static int
screen_loop(const struct top_opts *o, struct top_screen *s)
{
	struct top_data d;
	int64_t next = mono_ms();
	uint64_t looks = 0;
	int up = 0, key;

	memset(&d, 0, sizeof(d));
	while (!top_stopped) {
		if (mono_ms() >= next) {
			top_data_free(&d);
			up = top_data_gather(o->path, &d) == 0;
			top_screen_draw(s, up ? &d : NULL);
			if (o->count > 0 && ++looks >= o->count)
				break;
			next = mono_ms() + (int64_t)o->interval_ms;
		}
		key = top_screen_key(s, next - mono_ms());
		if (key == TOP_KEY_QUIT)
			break;
		if (key == TOP_KEY_NOW)
			next = 0;
		else if (key == TOP_KEY_RESIZE)
			top_screen_draw(s, up ? &d : NULL);
	}
	top_data_free(&d);
	/* Stopped by hand: all is well. After count looks: the last says. */
	return o->count > 0 && looks >= o->count && !up ? EXIT_NO : EXIT_OK;
}

int
ctl_top(const char *path, int argc, char *argv[])
{
	struct top_opts o = { path, TOP_INTERVAL_MS, 0, 0 };
	struct top_screen s;
	int rc;

	if (options_parse(&o, argc, argv) < 0)
		return usage_says();
	if (o.batch || !isatty(STDOUT_FILENO))
		return batch_loop(&o);
	stop_signals_catch();
	if (top_screen_open(&s, o.path, o.interval_ms) < 0)
		return batch_loop(&o);
	rc = screen_loop(&o, &s);
	top_screen_close(&s);
	return rc;
}
