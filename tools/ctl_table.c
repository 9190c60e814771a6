/*
 * gpufracctl's aligned text tables.
 */
#include <stdlib.h>
#include <string.h>

#include "ctl_print.h"
#include "ctl_table.h"
#include "log.h"

void
ctl_table_init(struct ctl_table *t, const struct ctl_column *cols,
    size_t ncols)
{
	size_t i;

	if (ncols == 0 || ncols > CTL_TABLE_MAX_COLS)
		fatalx("table with %zu columns", ncols);
	memset(t, 0, sizeof(*t));
	t->cols = cols;
	t->ncols = ncols;
	for (i = 0; i < ncols; i++)
		t->width[i] = ctl_text_width(cols[i].head);
}

void
ctl_table_add(struct ctl_table *t, const char *const *cells, size_t n)
{
	size_t i, len;
	char *cell;

	if (n != t->ncols)
		fatalx("table row of %zu cells, not %zu", n, t->ncols);
	if (t->nrows == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 16;
		char **p = reallocarray(t->cells, ncap * t->ncols,
		    sizeof(*p));

		if (p == NULL)
			fatalx("out of memory");
		t->cells = p;
		t->cap = ncap;
	}
	for (i = 0; i < n; i++) {
		len = strlen(cells[i]) + 1;
		if ((cell = malloc(len)) == NULL)
			fatalx("out of memory");
		ctl_printable(cells[i], len, cell, len);
		t->cells[t->nrows * t->ncols + i] = cell;
		if (ctl_text_width(cell) > t->width[i])
			t->width[i] = ctl_text_width(cell);
	}
	t->nrows++;
}

static void
row_print(const struct ctl_table *t, FILE *fp, const char *const *cells)
{
	size_t i, pad;

	for (i = 0; i < t->ncols; i++) {
		pad = t->width[i] - ctl_text_width(cells[i]);
		if (i > 0)
			fputs("  ", fp);
		if (t->cols[i].right)
			fprintf(fp, "%*s", (int)pad, "");
		fputs(cells[i], fp);
		if (!t->cols[i].right && i + 1 < t->ncols)
			fprintf(fp, "%*s", (int)pad, "");
	}
	fputc('\n', fp);
}

void
ctl_table_print(const struct ctl_table *t, FILE *fp)
{
	const char *head[CTL_TABLE_MAX_COLS];
	size_t i;

	for (i = 0; i < t->ncols; i++)
		head[i] = t->cols[i].head;
	row_print(t, fp, head);
	for (i = 0; i < t->nrows; i++)
		row_print(t, fp, (const char *const *)&t->cells[i * t->ncols]);
}

void
ctl_table_widen(struct ctl_table *t, size_t col, size_t width)
{
	if (col >= t->ncols)
		fatalx("widening column %zu of %zu", col, t->ncols);
	if (width > t->width[col])
		t->width[col] = width;
}

void
ctl_table_flush(struct ctl_table *t, FILE *fp)
{
	const char *head[CTL_TABLE_MAX_COLS];
	size_t i;

	if (!t->head_done) {
		for (i = 0; i < t->ncols; i++)
			head[i] = t->cols[i].head;
		row_print(t, fp, head);
		t->head_done = 1;
	}
	for (i = 0; i < t->nrows; i++)
		row_print(t, fp, (const char *const *)&t->cells[i * t->ncols]);
	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	t->nrows = 0;
}

void
ctl_table_free(struct ctl_table *t)
{
	size_t i;

	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}
