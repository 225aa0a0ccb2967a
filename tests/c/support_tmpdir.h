/* A private temporary directory for tests that write files (I/O tests):
 * created with mkdtemp under $TMPDIR (or /tmp), removed with its files. */
#ifndef ROBOCACHE_TESTS_SUPPORT_TMPDIR_H
#define ROBOCACHE_TESTS_SUPPORT_TMPDIR_H

#define RCT_TMPDIR_MAX_FILES 64

typedef struct rct_tmpdir {
  char path[512];
  char files[RCT_TMPDIR_MAX_FILES][640]; /* paths written by rct_tmpdir_write */
  int n;
} rct_tmpdir;

/* Creates the directory; fails the test when it cannot. */
void rct_tmpdir_create(rct_tmpdir *d);
/* Path of name inside the directory (static buffer, valid until next call). */
const char *rct_tmpdir_path(const rct_tmpdir *d, const char *name);
/* Writes text to name inside the directory and returns its path (owned by
 * d). Fails the test when it cannot. */
const char *rct_tmpdir_write(rct_tmpdir *d, const char *name, const char *text);
/* Number of entries in the directory (without . and ..). */
int rct_tmpdir_count(const rct_tmpdir *d);
/* Removes every entry of the directory and the directory itself. */
void rct_tmpdir_remove(rct_tmpdir *d);

/* cmocka setup and teardown of a test that writes files: *state becomes a
 * created rct_tmpdir (malloc'd), which the teardown removes and frees. */
int rct_tmpdir_setup(void **state);
int rct_tmpdir_teardown(void **state);

#endif
