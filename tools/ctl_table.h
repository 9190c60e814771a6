/*
 * Aligned text tables for gpufracctl: a header row, columns as wide as
 * their widest cell, two spaces between them, no trailing blanks. A table
 * is printed whole, or streamed: rows printed as they come, as wide as the
 * widest cell so far.
 */
#ifndef GF_CTL_TABLE_H
#define GF_CTL_TABLE_H

#include <stddef.h>
#include <stdio.h>

#define CTL_TABLE_MAX_COLS	16

struct ctl_column {
	const char	*head;		/* "PID" */
	int		 right;		/* right-align (numbers, sizes) */
};

struct ctl_table {
	const struct ctl_column	*cols;
	size_t			 ncols;
	size_t			 width[CTL_TABLE_MAX_COLS];
	char			**cells;	/* nrows * ncols, owned */
	size_t			 nrows;
	size_t			 cap;
	int			 head_done;	/* streamed: header printed */
};

/* cols must outlive the table. */
void	ctl_table_init(struct ctl_table *t, const struct ctl_column *cols,
	    size_t ncols);
/*
 * Append a row of ncols cells (n must equal the table's ncols). Cells are
 * copied, control characters shown as '?'. Exits on a broken invariant or
 * when memory runs out.
 */
void	ctl_table_add(struct ctl_table *t, const char *const *cells, size_t n);
void	ctl_table_print(const struct ctl_table *t, FILE *fp);
/* Column col is at least width columns wide, whatever its cells. */
void	ctl_table_widen(struct ctl_table *t, size_t col, size_t width);
/*
 * Print the rows added since the last call, the header first on the first
 * call, and forget them. Columns keep the widths they reached: a later
 * wider cell shifts only its own row.
 */
void	ctl_table_flush(struct ctl_table *t, FILE *fp);
void	ctl_table_free(struct ctl_table *t);

#endif
