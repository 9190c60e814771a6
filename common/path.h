/*
 * File-system paths: making the directory that is to hold a file (the
 * daemon's socket, its state file).
 */
#ifndef GF_COMMON_PATH_H
#define GF_COMMON_PATH_H

/*
 * mkdir -p the directory that holds path, mode 0755 for what it creates.
 * Returns 0, or -1 with errno set.
 */
int	path_dir_make(const char *path);

#endif
