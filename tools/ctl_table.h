/*
 * Aligned text tables for gpufracctl: a header row, columns as wide as
 * their widest cell, two spaces between them, no trailing blanks.
 */
#ifndef GF_CTL_TABLE_H
#define GF_CTL_TABLE_H

#include <stddef.h>
#include <stdio.h>

#define CTL_TABLE_MAX_COLS	10

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
void	ctl_table_free(struct ctl_table *t);

#endif
