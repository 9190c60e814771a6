/*
 * gpufracctl top's screen, with ncurses: a title, the view's lines as far
 * as the terminal has room, the keys at the bottom. stderr goes into a
 * pipe while the screen is up (the queries report there, and the screen
 * must not be written over); its last line is shown when the daemon did
 * not answer.
 */
#include <curses.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_print.h"
#include "ctl_top_screen.h"
#include "log.h"

/* Bytes of s that fit in cols columns, cut between characters. */
static size_t
bytes_within(const char *s, int cols)
{
	size_t i;
	int used = 0;

	for (i = 0; s[i] != '\0'; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;	/* a UTF-8 continuation byte */
		if (used == cols)
			break;
		used++;
	}
	return i;
}

static void
line_draw(int y, int x, const char *text, attr_t attr)
{
	if (y >= LINES || x >= COLS)
		return;
	attron(attr);
	mvaddnstr(y, x, text, (int)bytes_within(text, COLS - x));
	attroff(attr);
}

/* Send stderr into a pipe (non-blocking: a full pipe drops, never waits). */
static int
said_open(struct top_screen *s)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	if ((s->stderr_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3)) < 0 ||
	    dup2(p[1], STDERR_FILENO) < 0) {
		if (s->stderr_fd >= 0)
			close(s->stderr_fd);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	s->said_fd = p[0];
	return 0;
}

/* Keep the last line said on stderr since the last call, if any. */
static void
said_collect(struct top_screen *s)
{
	static const char prefix[] = "gpufracctl: ";
	char buf[4096], *line, *save;
	ssize_t n;

	while ((n = read(s->said_fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		for (line = strtok_r(buf, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			if (strncmp(line, prefix, sizeof(prefix) - 1) == 0)
				line += sizeof(prefix) - 1;
			ctl_printable(line, strlen(line), s->said,
			    sizeof(s->said));
		}
	}
}

static int
screen_addressable(void)
{
	char cup[] = "cup";
	char *cap = tigetstr(cup);

	return cap != NULL && cap != (char *)-1;
}

int
top_screen_open(struct top_screen *s, const char *path, uint64_t interval_ms)
{
	const char *term;

	memset(s, 0, sizeof(*s));
	s->path = path;
	s->interval_ms = interval_ms;
	s->said_fd = s->stderr_fd = -1;
	s->keys = isatty(STDIN_FILENO);
	setlocale(LC_CTYPE, "");	/* device names may be UTF-8 */
	s->scr = newterm(NULL, stdout, stdin);
	/* A terminal that cannot move its cursor (dumb) gets tables. */
	if (s->scr != NULL && !screen_addressable()) {
		endwin();
		delscreen(s->scr);
		s->scr = NULL;
	}
	if (s->scr == NULL) {
		term = getenv("TERM");
		log_errx("top: cannot draw on the terminal '%s'; printing "
		    "tables instead", term ? term : "");
		return -1;
	}
	if (said_open(s) < 0) {
		endwin();
		delscreen(s->scr);
		log_err("top: cannot set stderr aside");
		return -1;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	return 0;
}

void
top_screen_close(struct top_screen *s)
{
	said_collect(s);
	dup2(s->stderr_fd, STDERR_FILENO);
	close(s->stderr_fd);
	close(s->said_fd);
	endwin();
	delscreen(s->scr);
	top_text_free(&s->text);
	s->scr = NULL;
}

/* The top line: what is shown, and when it was taken. */
static void
title_draw(const struct top_screen *s, uint64_t ms)
{
	char left[PATH_MAX + 64], clock[16];
	int x;

	attron(A_REVERSE);
	mvhline(0, 0, ' ', COLS);
	attroff(A_REVERSE);
	snprintf(left, sizeof(left), " gpufracctl top: %s", s->path);
	line_draw(0, 0, left, A_REVERSE);
	top_view_clock(ms, clock, sizeof(clock));
	x = COLS - (int)strlen(clock) - 1;
	if (x > (int)strlen(left) + 1)
		line_draw(0, x, clock, A_REVERSE);
}

/* The bottom line: the keys. */
static void
keys_draw(const struct top_screen *s)
{
	char line[128], every[32];

	snprintf(line, sizeof(line), " q quit   space look now   every %s",
	    ctl_duration_format(s->interval_ms, every, sizeof(every)));
	if (LINES > 1)
		line_draw(LINES - 1, 0, line, A_BOLD);
}

static void
unreachable_draw(const struct top_screen *s)
{
	char line[TOP_SAID_LEN + 64], every[32], clock[16];

	line_draw(2, 1, "gpufracd is not reachable:", A_BOLD);
	line_draw(3, 3, s->said[0] ? s->said : "(no reason given)", 0);
	ctl_duration_format(s->interval_ms, every, sizeof(every));
	if (s->seen_ms)
		snprintf(line, sizeof(line), "trying again every %s; it last "
		    "answered at %s", every, top_view_clock(s->seen_ms, clock,
		    sizeof(clock)));
	else
		snprintf(line, sizeof(line), "trying again every %s", every);
	line_draw(5, 1, line, 0);
}

void
top_screen_draw(struct top_screen *s, const struct top_data *d)
{
	size_t i, rows = LINES > 3 ? (size_t)LINES - 2 : 1;

	said_collect(s);
	erase();
	title_draw(s, d ? d->time_ms : top_data_now_ms());
	if (d != NULL) {
		s->seen_ms = d->time_ms;
		top_view_render(&s->text, d, rows);
		for (i = 0; i < s->text.n && i < rows; i++)
			line_draw((int)i + 1, 0, s->text.lines[i].text,
			    s->text.lines[i].head ? A_BOLD : A_NORMAL);
	} else
		unreachable_draw(s);
	keys_draw(s);
	refresh();
}

int
top_screen_key(struct top_screen *s, int64_t ms)
{
	int ch;

	if (ms < 0)
		ms = 0;
	if (ms > INT_MAX)
		ms = INT_MAX;
	if (!s->keys) {
		/* nothing to read keys from: a signal or the time ends it */
		poll(NULL, 0, (int)ms);
		return TOP_KEY_NONE;
	}
	timeout((int)ms);
	ch = getch();
	switch (ch) {
	case 'q':
	case 'Q':
		return TOP_KEY_QUIT;
	case ' ':
		return TOP_KEY_NOW;
	case KEY_RESIZE:
		return TOP_KEY_RESIZE;
	default:
		return TOP_KEY_NONE;
	}
}
