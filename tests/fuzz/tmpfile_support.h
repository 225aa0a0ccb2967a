/* The fuzz targets hand their input to the readers as a file, as the command
 * line does: one temporary file per name suffix, rewritten for every input
 * and removed at exit. */
#ifndef ROBOCACHE_FUZZ_TMPFILE_SUPPORT_H
#define ROBOCACHE_FUZZ_TMPFILE_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/* Writes data[0..size) to this process's temporary file whose name ends in
 * suffix (".csv", ".pcd", ".h5", ...) and returns its path; aborts when the
 * file cannot be written (a broken fuzzing setup, not a finding). */
const char *rcf_write_temp(const uint8_t *data, size_t size, const char *suffix);

/* Aborts with a message naming the input's failed property (a finding). */
#define RCF_CHECK(cond)                                                                            \
  do {                                                                                             \
    if (!(cond)) rcf_fail(#cond, __FILE__, __LINE__);                                              \
  } while (0)
void rcf_fail(const char *what, const char *file, int line);

#endif
