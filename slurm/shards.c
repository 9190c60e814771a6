/*
 * The node's shards from its gres.conf (gres.conf(5): one resource a line,
 * Key=Value words, '#' comments), and a step's part of a GPU from them.
 * Only what shards need is read: NodeName, Name, Count, File and
 * MultipleFiles; every other key is Slurm's business and skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "shards.h"
#include "units.h"

#define LINE_LEN	4096

/* A bracket's range "A" or "A-B"; pad: A's width where it starts with 0. */
struct range {
	uint64_t	lo, hi;
	size_t		pad;
};

/* A decimal number in [s, e): 0 or -1. */
static int
number(const char *s, const char *e, uint64_t *v)
{
	char buf[24];
	size_t n = (size_t)(e - s);

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return decimal_parse(buf, UINT32_MAX, v);
}

/* The range at *p, up to a ',' or end; *p is moved past it. */
static int
range_next(const char **p, const char *end, struct range *r)
{
	const char *s = *p, *stop, *dash;

	if ((stop = memchr(s, ',', (size_t)(end - s))) == NULL)
		stop = end;
	dash = memchr(s, '-', (size_t)(stop - s));
	if (number(s, dash != NULL ? dash : stop, &r->lo) < 0)
		return -1;
	r->hi = r->lo;
	if (dash != NULL && (number(dash + 1, stop, &r->hi) < 0 ||
	    r->hi < r->lo))
		return -1;
	r->pad = s[0] == '0' && (dash != NULL ? dash : stop) - s > 1 ?
	    (size_t)((dash != NULL ? dash : stop) - s) : 0;
	*p = stop < end ? stop + 1 : end;
	return 0;
}

/* One item "pre[ranges]post" or "name" of a list: its bracket, if any. */
static int
item_bracket(const char *s, const char *e, const char **open,
    const char **close)
{
	*open = memchr(s, '[', (size_t)(e - s));
	if (*open == NULL)
		return 0;
	*close = memchr(*open, ']', (size_t)(e - *open));
	if (*close == NULL || memchr(*close, '[', (size_t)(e - *close)))
		return -1;
	return 1;
}

/* How many names the item [s, e) stands for: >= 1, or -1. */
static int64_t
item_count(const char *s, const char *e)
{
	const char *open, *close, *p;
	struct range r;
	int64_t n = 0;
	int b;

	if ((b = item_bracket(s, e, &open, &close)) <= 0)
		return b < 0 ? -1 : 1;
	for (p = open + 1; p < close; n += (int64_t)(r.hi - r.lo + 1))
		if (range_next(&p, close, &r) < 0 || r.hi - r.lo >= 4096)
			return -1;
	return n > 0 ? n : -1;
}

/* The item [s, e) names host: 1, 0, or -1 when it is malformed. */
static int
item_match(const char *s, const char *e, const char *host)
{
	const char *open, *close, *p, *num;
	size_t hlen = strlen(host), pre, post, dn;
	struct range r;
	uint64_t v;
	int b;

	if ((b = item_bracket(s, e, &open, &close)) <= 0)
		return b < 0 ? -1 : (size_t)(e - s) == hlen &&
		    strncmp(s, host, hlen) == 0;
	pre = (size_t)(open - s);
	post = (size_t)(e - close - 1);
	if (hlen <= pre + post || strncmp(host, s, pre) != 0 ||
	    strncmp(host + hlen - post, close + 1, post) != 0)
		return 0;
	num = host + pre;
	dn = hlen - pre - post;
	if (number(num, num + dn, &v) < 0)
		return 0;
	for (p = open + 1; p < close; ) {
		if (range_next(&p, close, &r) < 0)
			return -1;
		if (v >= r.lo && v <= r.hi && (r.pad == 0 ? num[0] != '0' ||
		    dn == 1 : dn == r.pad))
			return 1;
	}
	return 0;
}

/* The next item of a comma-separated list (commas in brackets kept). */
static const char *
item_end(const char *s)
{
	int depth = 0;

	for (; *s != '\0'; s++)
		if (*s == '[')
			depth++;
		else if (*s == ']')
			depth--;
		else if (*s == ',' && depth == 0)
			break;
	return s;
}

int
shards_host_match(const char *list, const char *host)
{
	const char *s, *e;

	for (s = list; *s != '\0'; s = *e != '\0' ? e + 1 : e) {
		e = item_end(s);
		if (item_match(s, e, host) == 1)
			return 1;
	}
	return 0;
}

/* How many files a File= value names: >= 1, or -1. */
static int64_t
files_count(const char *list)
{
	const char *s, *e;
	int64_t n = 0, k;

	for (s = list; *s != '\0'; s = *e != '\0' ? e + 1 : e) {
		e = item_end(s);
		if ((k = item_count(s, e)) < 0)
			return -1;
		n += k;
	}
	return n > 0 ? n : -1;
}

/* What one line says, of what shards need. */
struct line {
	const char	*node, *name, *count, *file;
	int		 multiple;	/* MultipleFiles: one GPU's files */
};

/* Split buf (changed in place) into its words; unknown keys skipped. */
static void
line_split(char *buf, struct line *l)
{
	char *w, *eq, *save = NULL;

	memset(l, 0, sizeof(*l));
	buf[strcspn(buf, "#\n")] = '\0';
	for (w = strtok_r(buf, " \t\r", &save); w != NULL;
	    w = strtok_r(NULL, " \t\r", &save)) {
		if ((eq = strchr(w, '=')) == NULL)
			continue;
		*eq++ = '\0';
		if (strcasecmp(w, "NodeName") == 0)
			l->node = eq;
		else if (strcasecmp(w, "Name") == 0)
			l->name = eq;
		else if (strcasecmp(w, "Count") == 0)
			l->count = eq;
		else if (strcasecmp(w, "File") == 0)
			l->file = eq;
		else if (strcasecmp(w, "MultipleFiles") == 0) {
			l->file = eq;
			l->multiple = 1;
		}
	}
}

/* What the lines read so far add up to. */
struct tally {
	size_t		gpu_files;	/* Name=gpu's */
	uint64_t	spread;		/* Name=shard Count without File */
};

static int
shard_line(const struct line *l, struct shards_node *sn, struct tally *t,
    char *err, size_t errlen)
{
	uint64_t count;
	int64_t files, i;

	if (l->count == NULL || decimal_parse(l->count, UINT32_MAX,
	    &count) < 0) {
		snprintf(err, errlen, "Name=shard needs Count=N (a number "
		    "of shards), not '%s'", l->count ? l->count : "");
		return -1;
	}
	if (l->file == NULL) {
		t->spread += count;
		return 0;
	}
	files = l->multiple ? 1 : files_count(l->file);
	if (files < 0) {
		snprintf(err, errlen, "cannot read File='%s'", l->file);
		return -1;
	}
	if (sn->ngpus + (size_t)files > SHARDS_GPUS_MAX) {
		snprintf(err, errlen, "more than %d GPUs with shards",
		    SHARDS_GPUS_MAX);
		return -1;
	}
	for (i = 0; i < files; i++)
		sn->count[sn->ngpus++] = count / (uint64_t)files;
	return 0;
}

/* One line of gres.conf, for the node host. */
static int
line_read(char *buf, const char *host, struct shards_node *sn,
    struct tally *t, char *err, size_t errlen)
{
	struct line l;
	int64_t files;

	line_split(buf, &l);
	if (l.name == NULL || (l.node != NULL &&
	    !shards_host_match(l.node, host)))
		return 0;
	if (strcasecmp(l.name, "shard") == 0)
		return shard_line(&l, sn, t, err, errlen);
	if (strcasecmp(l.name, "gpu") == 0 && l.file != NULL) {
		if ((files = l.multiple ? 1 : files_count(l.file)) < 0) {
			snprintf(err, errlen, "cannot read File='%s'", l.file);
			return -1;
		}
		t->gpu_files += (size_t)files;
	}
	return 0;
}

/* Shard counts without File, evenly over the node's GPUs. */
static int
spread(struct shards_node *sn, const struct tally *t, size_t gpus_seen,
    char *err, size_t errlen)
{
	size_t n = t->gpu_files > 0 ? t->gpu_files : gpus_seen, i;

	if (t->spread == 0)
		return 0;
	if (n == 0 || sn->ngpus + n > SHARDS_GPUS_MAX) {
		snprintf(err, errlen, "Name=shard without File, and %s",
		    n == 0 ? "no GPU to spread it over" : "too many GPUs");
		return -1;
	}
	for (i = 0; i < n; i++)
		sn->count[sn->ngpus++] = t->spread / n;
	return 0;
}

int
shards_gres_parse(FILE *fp, const char *path, const char *host,
    size_t gpus_seen, struct shards_node *sn, char *err, size_t errlen)
{
	char buf[LINE_LEN], e[256];
	struct tally t = { 0, 0 };
	unsigned lineno = 0;

	memset(sn, 0, sizeof(*sn));
	while (fgets(buf, sizeof(buf), fp) != NULL) {
		lineno++;
		if (strchr(buf, '\n') == NULL && !feof(fp)) {
			snprintf(err, errlen, "%s:%u: line too long", path,
			    lineno);
			return -1;
		}
		if (line_read(buf, host, sn, &t, e, sizeof(e)) < 0) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, e);
			return -1;
		}
	}
	if (ferror(fp)) {
		snprintf(err, errlen, "cannot read '%s': %s", path,
		    strerror(errno));
		return -1;
	}
	if (spread(sn, &t, gpus_seen, e, sizeof(e)) < 0) {
		snprintf(err, errlen, "%s: %s", path, e);
		return -1;
	}
	return 0;
}

int
shards_gres_read(const char *path, const char *host, size_t gpus_seen,
    struct shards_node *sn, char *err, size_t errlen)
{
	FILE *fp;
	int r;

	if ((fp = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "cannot open '%s': %s", path,
		    strerror(errno));
		return -1;
	}
	r = shards_gres_parse(fp, path, host, gpus_seen, sn, err, errlen);
	fclose(fp);
	if (r == 0 && sn->ngpus == 0) {
		snprintf(err, errlen, "'%s' gives node '%s' no shards", path,
		    host);
		return -1;
	}
	return r;
}

uint64_t
shards_per_gpu(const struct shards_node *sn)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < sn->ngpus; i++)
		if (sn->count[i] > n)
			n = sn->count[i];
	return n;
}

uint32_t
shards_share(uint64_t k, size_t ngpus, uint64_t n)
{
	uint64_t share;

	/* k and n are at most UINT32_MAX (decimal_parse's bound) */
	if (k == 0 || n == 0 || ngpus == 0 || k > UINT32_MAX ||
	    n > UINT32_MAX)
		return 0;
	share = k * 10000 / ((uint64_t)ngpus * n);
	if (share > 10000)
		return 10000;
	return share == 0 ? 1 : (uint32_t)share;
}
