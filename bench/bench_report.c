/*
 * What `make bench` prints: the machine, an aligned table of measure,
 * value, target and whether it is met, what could not be measured, and as
 * the last line one JSON object with every value (null: not measured).
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { MET_NONE = -1, MET_NO, MET_YES };

struct row {
	const char	*key;		/* the JSON name */
	const char	*label;
	double		 value;		/* NAN: not measured */
	const char	*unit;
	const char	*target;	/* "" when there is none */
	int		 met;		/* MET_* */
};

#define ROWS_MAX	40

struct rows {
	struct row	 r[ROWS_MAX];
	int		 n;
	char		 mt_label[64];
	char		 fp_label[3][64];	/* the fast path's threads */
	char		 ir_label[3][64];
};

static void
row_add(struct rows *t, const char *key, const char *label, double value,
    const char *unit, const char *target, double limit)
{
	struct row *r;

	if (t->n == ROWS_MAX)
		return;
	r = &t->r[t->n++];
	r->key = key;
	r->label = label;
	r->value = value;
	r->unit = unit;
	r->target = target;
	if (isnan(limit))
		r->met = MET_NONE;
	else
		r->met = !isnan(value) && value <= limit ? MET_YES : MET_NO;
}

/* The fast path on several threads: bare, shim, added, into label[3]. */
static void
rows_threads(struct rows *t, char label[3][64], const char *const key[3],
    const double v[3], const char *unit, const char *target, double limit,
    int threads)
{
	static const char *const what[] = { "bare", "shim", "added" };
	int i;

	for (i = 0; i < 3; i++) {
		snprintf(label[i], 64, "  %d threads at once, %s", threads,
		    what[i]);
		row_add(t, key[i], label[i], v[i], unit, i == 2 ? target : "",
		    i == 2 ? limit : NAN);
	}
}

static void
rows_fastpath(struct rows *t, const struct results *r)
{
	static const char *const ns_keys[] = { "fastpath_bare_ns_mt",
	    "fastpath_shim_ns_mt", "fastpath_added_ns_mt" };
	static const char *const ir_keys[] = { "fastpath_bare_instr_mt",
	    "fastpath_shim_instr_mt", "fastpath_added_instr_mt" };
	const double ns[] = { r->bare_ns_mt, r->shim_ns_mt,
	    r->fastpath_added_ns_mt };
	const double ir[] = { r->bare_ir_mt, r->shim_ir_mt,
	    r->fastpath_added_ir_mt };

	row_add(t, "fastpath_bare_ns", "alloc+free pair, bare driver",
	    r->bare_ns, "ns", "", NAN);
	row_add(t, "fastpath_shim_ns", "alloc+free pair, through the shim",
	    r->shim_ns, "ns", "", NAN);
	row_add(t, "fastpath_added_ns", "  added by the shim",
	    r->fastpath_added_ns, "ns", "<= 100", 100);
	rows_threads(t, t->fp_label, ns_keys, ns, "ns", "<= 100", 100,
	    r->fastpath_threads);
	row_add(t, "fastpath_bare_instr", "the pair in instructions, bare",
	    r->bare_ir, "instr", "", NAN);
	row_add(t, "fastpath_shim_instr", "the pair in instructions, shim",
	    r->shim_ir, "instr", "", NAN);
	row_add(t, "fastpath_added_instr", "  added by the shim",
	    r->fastpath_added_ir, "instr", "<= 300", 300);
	rows_threads(t, t->ir_label, ir_keys, ir, "instr", "<= 300", 300,
	    r->fastpath_threads);
}

static void
rows_fill(struct rows *t, const struct results *r)
{
	double ratio = r->rt_p99_us / r->echo_p99_us;

	rows_fastpath(t, r);
	row_add(t, "roundtrip_idle_p50_us", "reserve round trip, no load, p50",
	    r->rt_idle_p50_us, "us", "", NAN);
	row_add(t, "roundtrip_idle_p99_us", "reserve round trip, no load, p99",
	    r->rt_idle_p99_us, "us", "", NAN);
	row_add(t, "roundtrip_p50_us", "reserve round trip, p50",
	    r->rt_p50_us, "us", "<= 15", 15);
	row_add(t, "roundtrip_p99_us", "reserve round trip, p99",
	    r->rt_p99_us, "us", "<= 50", 50);
	row_add(t, "echo_p50_us", "bare SEQPACKET echo, p50",
	    r->echo_p50_us, "us", "", NAN);
	row_add(t, "echo_p99_us", "bare SEQPACKET echo, p99",
	    r->echo_p99_us, "us", "", NAN);
	row_add(t, "roundtrip_echo_p99_ratio", "  round trip p99 / echo p99",
	    ratio, "x", "<= 2", 2);
	if (!isnan(r->base_p99_us)) {
		row_add(t, "baseline_p50_us", "BENCH_BASELINE's round trip, p50",
		    r->base_p50_us, "us", "", NAN);
		row_add(t, "baseline_p99_us", "BENCH_BASELINE's round trip, p99",
		    r->base_p99_us, "us", "", NAN);
		row_add(t, "roundtrip_baseline_p99_ratio",
		    "  round trip p99 / baseline's p99",
		    r->rt_p99_us / r->base_p99_us, "x", "<= 1.1", 1.1);
	}
	row_add(t, "roundtrip_load_rps", "  load: daemon round trips/s",
	    r->rt_load_rps, "/s", "", NAN);
	row_add(t, "echo_load_rps", "  load: echo round trips/s",
	    r->echo_load_rps, "/s", "", NAN);
	row_add(t, "wake_p50_us", "wait resolver wake-up, p50",
	    r->wake_p50_us, "us", "", NAN);
	row_add(t, "wake_p99_us", "wait resolver wake-up, p99",
	    r->wake_p99_us, "us", "<= 1000", 1000);
	row_add(t, "table_ops_ns_1k", "allocation table op, 1,000 live",
	    r->table_ns_1k, "ns", "", NAN);
	row_add(t, "table_ops_ns_100k", "allocation table op, 100,000 live",
	    r->table_ns_100k, "ns", "", NAN);
	row_add(t, "table_ops_ns_1m", "allocation table op, 1,000,000 live",
	    r->table_ns_1m, "ns", "", NAN);
	snprintf(t->mt_label, sizeof(t->mt_label), "  the same, %d threads "
	    "at once", r->table_threads);
	row_add(t, "table_ops_ns_100k_mt", t->mt_label, r->table_ns_100k_mt,
	    "ns", "", NAN);
	row_add(t, "daemon_rss_kib_0", "daemon RSS, no client",
	    r->rss_kib_0, "KiB", "", NAN);
	row_add(t, "daemon_rss_kib_1000", "daemon RSS, 1,000 clients",
	    r->rss_kib_1000, "KiB", "<= 16384", 16384);
}

/* CPUs this process may run on, and the first model name. */
static int
machine(char *model, size_t size)
{
	char line[256], *p;
	cpu_set_t set;
	int n;
	FILE *f;

	snprintf(model, size, "unknown model");
	if ((f = fopen("/proc/cpuinfo", "re")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "model name", 10) == 0 &&
			    (p = strchr(line, ':')) != NULL) {
				p += strspn(p + 1, " \t") + 1;
				p[strcspn(p, "\n")] = '\0';
				snprintf(model, size, "%s", p);
				break;
			}
		fclose(f);
	}
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	else
		n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	return n;
}

static void
table_print(const struct rows *t, int clients)
{
	static const char *const met[] = { "no", "yes" };
	char value[32];
	int i;

	printf("%-36s %14s %-5s %-18s %s\n", "measure", "value", "unit",
	    "target", "met");
	for (i = 0; i < t->n; i++) {
		const struct row *r = &t->r[i];

		if (isnan(r->value))
			snprintf(value, sizeof(value), "-");
		else
			snprintf(value, sizeof(value), "%.1f", r->value);
		printf("%-36s %14s %-5s %-18s %s\n", r->label, value, r->unit,
		    r->target, r->met == MET_NONE ? "" : met[r->met]);
	}
	printf("fast path on several threads: per pair and CPU in use (the "
	    "round's time times\nthe CPUs its threads could use, over its "
	    "pairs); instructions counted by\ncallgrind over the pairs only, "
	    "per pair\n");
	printf("round trips and echo: %d busy client processes, the server "
	    "and the measuring\nclient pinned to different CPUs; gpufracd "
	    "at log_level info (the default),\nlogging to a file; every "
	    "value a median of repetitions\n", clients);
}

static void
note_print(const char *what, const char *note)
{
	if (note[0] != '\0')
		printf("note: %s: %s\n", what, note);
}

/* s as a JSON string. */
static void
json_string(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void
json_print(const struct rows *t, const struct results *r, int cores,
    const char *model, int clients)
{
	int i, met = 0, targets = 0;

	printf("{\"cores\":%d,\"cpu_model\":", cores);
	json_string(model);
	printf(",\"clients\":%d", clients);
	for (i = 0; i < t->n; i++) {
		printf(",\"%s\":", t->r[i].key);
		if (isnan(t->r[i].value))
			printf("null");
		else
			printf("%.1f", t->r[i].value);
		if (t->r[i].met != MET_NONE) {
			targets++;
			met += t->r[i].met == MET_YES;
		}
	}
	printf(",\"roundtrip_samples\":%zu,\"echo_samples\":%zu,"
	    "\"wake_samples\":%zu,\"fastpath_threads\":%d,"
	    "\"table_threads\":%d,"
	    "\"daemon_clients_counted\":%d,\"targets\":%d,\"targets_met\":%d,"
	    "\"runtime_s\":%.1f}\n", r->rt_samples, r->echo_samples,
	    r->wake_samples, r->fastpath_threads, r->table_threads,
	    r->rss_clients, targets, met,
	    r->runtime_s);
}

void
report_print(const struct bench *b, const struct results *r)
{
	struct rows t = { .n = 0 };
	char model[128];
	int cores = machine(model, sizeof(model));

	rows_fill(&t, r);
	printf("gpufrac bench: %d cores, %s; simulated driver "
	    "(tests/simcuda), %.1f s\n", cores, model, r->runtime_s);
	table_print(&t, b->clients);
	note_print("fast path", r->fastpath_note);
	note_print("instructions", r->count_note);
	note_print("round trip", r->rt_note);
	note_print("echo", r->echo_note);
	note_print("baseline", r->base_note);
	note_print("wake-up", r->wake_note);
	note_print("daemon RSS", r->rss_note);
	json_print(&t, r, cores, model, b->clients);
	fflush(stdout);
}
