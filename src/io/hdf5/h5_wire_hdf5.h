/* A byte stream for what a read of an HDF5 file produced: the read runs in a
 * child process (h5_file_hdf5.h), which packs its result into a stream; the
 * parent unpacks it. Values go as raw bytes (the same process image on both
 * sides), strings and arrays with their length first. Unpacking checks every
 * length against the bytes left before allocating. Internal to the
 * *_hdf5.c files. */
#ifndef ROBOCACHE_IO_H5_WIRE_H
#define ROBOCACHE_IO_H5_WIRE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rc_h5_wire {
  uint8_t *data;
  size_t size, cap; /* bytes held, allocated */
  size_t at;        /* next byte to unpack */
  int bad;          /* out of memory packing, or too few bytes unpacking */
} rc_h5_wire;

/* Appends n bytes (bad on out of memory). */
void rc_h5_put(rc_h5_wire *w, const void *p, size_t n);
/* A string (NULL allowed); count strings and count elements of elem bytes,
 * each with count first (v, p may be NULL only when count is 0). */
void rc_h5_put_str(rc_h5_wire *w, const char *s);
void rc_h5_put_strs(rc_h5_wire *w, char *const *v, int64_t count);
void rc_h5_put_array(rc_h5_wire *w, const void *p, int64_t count, size_t elem);

/* Copies the next n bytes to p; -1 (and bad) when fewer are left. */
int rc_h5_get(rc_h5_wire *w, void *p, size_t n);
/* The next string (malloc'd; NULL when it was NULL or on failure, then bad). */
char *rc_h5_get_str(rc_h5_wire *w);
/* The next strings: a malloc'd array of *count + 1 (a failed string is NULL
 * and sets bad); NULL with *count 0 and bad when the count is missing or
 * the array cannot be allocated. */
char **rc_h5_get_strs(rc_h5_wire *w, int64_t *count);
/* The next array of elem-byte elements (malloc'd, one spare byte), its
 * length in *count; NULL with *count 0 and bad when the bytes are missing. */
void *rc_h5_get_array(rc_h5_wire *w, size_t elem, int64_t *count);

#endif
