/* robocache._C.mcap_scan and gather_rows: the MCAP chunk record scan of
 * src/io/mcap (mcap_records.h) for robocache.datasets' rosbag2 reader. */
#include "binding.h"
#include "mcap_records.h"

/* mcap_scan(records) -> bytes of int64 [n, 4] in native order: channel id,
 * log_time ns, data offset, data length of each Message record. */
RCPY_SIG(mcap_scan, 1, 1, KW(records));

static PyObject *py_mcap_scan(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  PyObject *a[RCPY_KW_COUNT];
  if (rcpy_parse(rcpy_state_of(self), &mcap_scan_sig, args, nargs, kwnames, a) < 0) return NULL;
  Py_buffer in;
  if (PyObject_GetBuffer(A(records), &in, PyBUF_SIMPLE) < 0) return NULL;
  const uint8_t *buf = in.buf;
  const size_t len = (size_t)in.len;
  rc_mcap_error err = {0};
  PyObject *out = NULL;
  int64_t n;
  Py_BEGIN_ALLOW_THREADS;
  n = rc_mcap_scan_messages(buf, len, NULL, 0, &err);
  Py_END_ALLOW_THREADS;
  if (n >= 0 && (uint64_t)n > (uint64_t)PY_SSIZE_T_MAX / (RC_MCAP_COLS * sizeof(int64_t))) {
    PyErr_NoMemory();
    goto done;
  }
  if (n >= 0) {
    out =
        PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * RC_MCAP_COLS * (int64_t)sizeof(int64_t)));
    if (!out) goto done;
    int64_t *table = (int64_t *)(void *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS;
    n = rc_mcap_scan_messages(buf, len, table, n, &err);
    Py_END_ALLOW_THREADS;
  }
  if (n < 0) {
    Py_CLEAR(out);
    PyErr_Format(PyExc_ValueError, "record %lld at byte %llu: %s", (long long)err.record,
                 (unsigned long long)err.offset, err.what);
  }
done:
  PyBuffer_Release(&in);
  return out;
}

/* gather_rows(src, offsets, row_len, dst): dst (writable, n * row_len bytes)
 * row i = src[offsets[i], offsets[i] + row_len), offsets int64 [n]. */
RCPY_SIG(gather_rows, 4, 4, KW(src), KW(offsets), KW(row_len), KW(dst));

static PyObject *py_gather_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  PyObject *a[RCPY_KW_COUNT];
  if (rcpy_parse(rcpy_state_of(self), &gather_rows_sig, args, nargs, kwnames, a) < 0) return NULL;
  const Py_ssize_t row_len = PyLong_AsSsize_t(A(row_len));
  if (row_len == -1 && PyErr_Occurred()) return NULL;
  Py_buffer src, offsets, dst;
  if (PyObject_GetBuffer(A(src), &src, PyBUF_SIMPLE) < 0) return NULL;
  if (PyObject_GetBuffer(A(offsets), &offsets, PyBUF_SIMPLE) < 0) {
    PyBuffer_Release(&src);
    return NULL;
  }
  if (PyObject_GetBuffer(A(dst), &dst, PyBUF_WRITABLE) < 0) {
    PyBuffer_Release(&src);
    PyBuffer_Release(&offsets);
    return NULL;
  }
  PyObject *result = NULL;
  const int64_t n = offsets.len / (Py_ssize_t)sizeof(int64_t);
  int64_t bad = -1;
  int rc;
  if (offsets.len % (Py_ssize_t)sizeof(int64_t) || row_len < 0 ||
      (n && row_len > PY_SSIZE_T_MAX / n) || dst.len != n * row_len) {
    PyErr_Format(PyExc_ValueError,
                 "gather_rows: offsets must be int64 and dst hold offsets x row_len bytes "
                 "(%zd offset bytes, row_len %zd, dst %zd bytes)",
                 offsets.len, row_len, dst.len);
    goto done;
  }
  Py_BEGIN_ALLOW_THREADS;
  rc = rc_gather_rows(src.buf, (size_t)src.len, offsets.buf, n, (size_t)row_len, dst.buf, &bad);
  Py_END_ALLOW_THREADS;
  if (rc < 0) {
    PyErr_Format(PyExc_ValueError,
                 "gather_rows: row %lld (offset %lld, %zd bytes) past the %zd "
                 "source bytes",
                 (long long)bad, (long long)((const int64_t *)offsets.buf)[bad], row_len, src.len);
    goto done;
  }
  result = Py_NewRef(Py_None);
done:
  PyBuffer_Release(&src);
  PyBuffer_Release(&offsets);
  PyBuffer_Release(&dst);
  return result;
}

PyMethodDef rcpy_mcap_methods[] = {
    {"mcap_scan", RCPY_FASTCALL(py_mcap_scan),
     "mcap_scan($module, records)\n--\n\n"
     "bytes of int64 [n, 4] (channel id, log_time ns, data offset, data length) of the Message "
     "records in a decompressed MCAP chunk's records; ValueError naming the record index and "
     "byte offset for a damaged one."},
    {"gather_rows", RCPY_FASTCALL(py_gather_rows),
     "gather_rows($module, src, offsets, row_len, dst)\n--\n\n"
     "Copies src[offsets[i]:offsets[i] + row_len] to row i of dst (n * row_len writable bytes); "
     "ValueError for a row past the end of src."},
    {NULL, NULL, 0, NULL}};
