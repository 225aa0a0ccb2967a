/* Readers of timestamped sensor recordings: EuRoC ASL CSV, TUM trajectory
 * text, plain timestamp lists and generic CSV. Every reader yields the same
 * table: int64 ns times [rows] and float64 values [rows, cols].
 *
 * Formats (all: blank lines skipped, "\r\n" accepted, columns are counted
 * from 0 over the fields of a line, the time column included):
 *   euroc       EuRoC / ASL CSV: the first line is a '#' header naming the
 *               comma-separated columns ("#timestamp [ns],w_RS_S_x [rad s^-1],
 *               ..."); column 0 is the time in ns (time-unit may override).
 *   tum         TUM RGB-D trajectory: "timestamp tx ty tz qx qy qz qw",
 *               separated by spaces/tabs, time in decimal seconds, '#' lines
 *               are comments. Column names: timestamp tx ty tz qx qy qz qw.
 *   timestamps  one time per line (ns integers or decimal seconds, see
 *               time-unit auto); extra whitespace-separated fields are allowed
 *               and time_column picks the field (e.g. column 2 = depth time of
 *               a TUM associations file). No value columns.
 *   csv         generic CSV: the first non-blank line is the header (a leading
 *               '#' is dropped); time_column names the time column (default
 *               column 0); time_unit gives its unit.
 * A '#' line after the header is a comment in every format.
 *
 * Time units: ns, us, ms, s, or auto (csv and timestamps default): the whole
 * time column decides — if any of its values has '.', 'e' or 'E' every value
 * is seconds, else every value is nanoseconds. Times are parsed exactly
 * (decimal.h), never through a double; in unit ns a value with a fraction
 * ("0.0333") is an error that names the time-unit fix. A UTF-8 byte order
 * mark at the start of the file is skipped.
 *
 * Values: NaN or infinite values ("nan", "inf", "1e999") in a selected value
 * column are an error naming file and line (nonfinite ERROR), or drop their
 * row, counted in dropped_nonfinite (nonfinite DROP).
 *
 * Files are read once (read_file.h): a FIFO or pipe works, auto-detection
 * included, and is never opened a second time.
 *
 * Column names match exactly, or without a trailing " [unit]" part
 * ("w_RS_S_x" selects "w_RS_S_x [rad s^-1]"); digits select by index.
 *
 * Errors (message "path:line: what"):
 *   IO_ERROR          the file cannot be opened or read
 *   INVALID_ARGUMENT  malformed line (wrong number of fields, bad number,
 *                     bad or NaN timestamp, a fraction of a ns, a non-finite
 *                     value), unknown column (the message lists the available
 *                     names), no data rows, NUL bytes, and with
 *                     require_increasing a time not after the previous one. */
#ifndef ROBOCACHE_IO_READER_H
#define ROBOCACHE_IO_READER_H

#include "decimal.h"
#include "io_error.h"

#include <stdint.h>

typedef enum rc_io_format {
  RC_IO_FORMAT_AUTO = 0,
  RC_IO_FORMAT_EUROC = 1,
  RC_IO_FORMAT_TUM = 2,
  RC_IO_FORMAT_TIMESTAMPS = 3,
  RC_IO_FORMAT_CSV = 4,
  RC_IO_FORMAT_HDF5 = 5 /* only from detection: a robocache output file */
} rc_io_format;

typedef enum rc_io_nonfinite {
  RC_IO_NONFINITE_ERROR = 0, /* a NaN or infinite value is an error (file:line) */
  RC_IO_NONFINITE_DROP = 1   /* its row is left out and counted */
} rc_io_nonfinite;

typedef struct rc_io_read_spec {
  const char *path;
  int format;              /* rc_io_format; AUTO detects (rc_io_detect_format) */
  const char *columns;     /* "a:b:c" names or indices; NULL = every column but
                              the time column */
  const char *time_column; /* name or index; NULL = the format's default */
  int time_unit;           /* rc_io_time_unit; AUTO = the format's default */
  int require_increasing;  /* 1: a time <= the previous one is an error */
  int nonfinite;           /* rc_io_nonfinite, for the value columns */
} rc_io_read_spec;

typedef struct rc_io_table {
  int format;                /* the format read (never AUTO) */
  int time_unit;             /* the unit the times were read in (never AUTO) */
  int64_t rows;              /* >= 1 */
  int32_t cols;              /* selected value columns (0 for timestamps) */
  int64_t *times_ns;         /* [rows] */
  double *values;            /* [rows * cols], row-major */
  int64_t *lines;            /* [rows] 1-based line number of each row in the file */
  char **names;              /* [cols] names of the selected columns */
  char *time_name;           /* name of the time column */
  int64_t dropped_nonfinite; /* rows left out by RC_IO_NONFINITE_DROP */
} rc_io_table;

/* Reads spec->path into *out (zeroed first; free with rc_io_table_free even
 * after an error). */
robocache_status rc_io_read(const rc_io_read_spec *spec, rc_io_table *out, rc_io_err *err);
void rc_io_table_free(rc_io_table *t);

/* Format of a file from its first bytes and extension (reads the file once):
 * HDF5 signature or
 * .h5/.hdf5 -> HDF5; first line "#...,..." -> euroc; '#' comments and 8
 * numeric whitespace-separated fields -> tum; first field numeric -> timestamps;
 * a comma-separated non-numeric first line -> csv. IO_ERROR when unreadable,
 * INVALID_ARGUMENT when nothing matches. */
robocache_status rc_io_detect_format(const char *path, int *format, rc_io_err *err);

/* 1 when path is named *.h5 / *.hdf5, or is a regular file that starts with
 * the HDF5 signature (reads 8 bytes of a regular file; anything else is
 * not even opened, so a FIFO and its writer are left alone). */
int rc_io_is_hdf5(const char *path);

/* "euroc" | "tum" | "timestamps" | "csv" | "hdf5" | "auto" <-> rc_io_format;
 * from_name returns -1 for an unknown name. */
int rc_io_format_from_name(const char *name);
const char *rc_io_format_name(int format);

#endif
