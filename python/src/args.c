/* Keyword arguments of the _C functions (METH_FASTCALL | METH_KEYWORDS):
 * the names are interned once per module, so a keyword passed from Python
 * source (interned by the compiler) is found by pointer comparison. */
#include "binding.h"

static const char *const k_names[RCPY_KW_COUNT] = {
#define RCPY_KW_NAME(name) #name,
    RCPY_KEYWORDS(RCPY_KW_NAME)
#undef RCPY_KW_NAME
};

int rcpy_args_init(rcpy_state *st) {
  for (int i = 0; i < RCPY_KW_COUNT; i++)
    if (!(st->kw[i] = PyUnicode_InternFromString(k_names[i]))) return -1;
  return 0;
}

/* Position of the keyword `key` in sig's parameters, or -1 (-2 with an
 * exception). `hint` is tried first: keywords usually come in signature
 * order. */
static int find_param(const rcpy_state *st, const rcpy_sig *sig, PyObject *key, int hint) {
  for (int k = 0; k < sig->n; k++) {
    int i = (hint + k) % sig->n;
    if (st->kw[sig->params[i]] == key) return i;
  }
  for (int i = 0; i < sig->n; i++) {
    int eq = PyUnicode_Compare(st->kw[sig->params[i]], key);
    if (eq == 0) return i;
    if (eq == -1 && PyErr_Occurred()) return -2;
  }
  return -1;
}

int rcpy_parse(const rcpy_state *st, const rcpy_sig *sig, PyObject *const *args, Py_ssize_t nargs,
               PyObject *kwnames, PyObject **a) {
  for (int i = 0; i < sig->n; i++) a[sig->params[i]] = NULL;
  if (nargs > sig->positional) {
    PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)",
                 sig->name, sig->positional, nargs);
    return -1;
  }
  for (Py_ssize_t i = 0; i < nargs; i++) a[sig->params[i]] = args[i];
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  int hint = (int)nargs;
  for (Py_ssize_t j = 0; j < nkw; j++) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, j);
    int i = find_param(st, sig, key, hint);
    if (i == -2) return -1;
    if (i < 0) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", sig->name, key);
      return -1;
    }
    if (a[sig->params[i]]) {
      PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%U'", sig->name, key);
      return -1;
    }
    a[sig->params[i]] = args[nargs + j];
    hint = i + 1;
  }
  for (int i = 0; i < sig->required; i++)
    if (!a[sig->params[i]]) {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", sig->name,
                   k_names[sig->params[i]]);
      return -1;
    }
  return 0;
}
