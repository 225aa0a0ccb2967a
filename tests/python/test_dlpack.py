"""DLPack lifecycle: versioned and legacy capsules, consumed capsules renamed,
each deleter called exactly once, refcounts back to their start, no leak over
10,000 calls, robocache Buffers exported once."""

import ctypes as C
import gc
import sys
import tracemalloc

import numpy as np
import pytest

import robocache
from robocache import _C

# ---- a producer whose deleter we can observe (DLPack ABI through ctypes) -----------


class _Device(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class _DType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class _Tensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", _Device), ("ndim", C.c_int32),
                ("dtype", _DType), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


_DELETER = C.CFUNCTYPE(None, C.c_void_p)


class _Managed(C.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", C.c_void_p), ("deleter", _DELETER)]


class _Version(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class _ManagedVersioned(C.Structure):
    _fields_ = [("version", _Version), ("manager_ctx", C.c_void_p), ("deleter", _DELETER),
                ("flags", C.c_uint64), ("dl_tensor", _Tensor)]


_capsule_new = C.pythonapi.PyCapsule_New
_capsule_new.restype = C.py_object
_capsule_new.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
_capsule_name = C.pythonapi.PyCapsule_GetName
_capsule_name.restype = C.c_char_p
_capsule_name.argtypes = [C.py_object]

_CODES = {"f": 2, "i": 0, "u": 1, "b": 6}


class Producer:
    """Exports a NumPy array through hand-made capsules; counts deleter calls."""

    def __init__(self, arr, *, legacy=False, read_only=False, version=(1, 0)):
        self.arr, self.legacy, self.read_only, self.version = arr, legacy, read_only, version
        self.exports = 0
        self.deleted = 0
        self.capsules = []
        self._keep = []

    def _on_delete(self, _ptr):
        self.deleted += 1

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self.legacy and max_version is not None:
            raise TypeError("this producer predates DLPack 1.0")
        a = self.arr
        shape = (C.c_int64 * a.ndim)(*a.shape)
        strides = (C.c_int64 * a.ndim)(*(s // a.itemsize for s in a.strides))
        t = _Tensor(C.c_void_p(a.ctypes.data), _Device(1, 0), a.ndim,
                    _DType(_CODES[a.dtype.kind], a.itemsize * 8, 1), shape, strides, 0)
        deleter = _DELETER(self._on_delete)
        if self.legacy:
            m, name = _Managed(t, None, deleter), b"dltensor"
        else:
            m = _ManagedVersioned(_Version(*self.version), None, deleter,
                                  1 if self.read_only else 0, t)
            name = b"dltensor_versioned"
        self._keep += [shape, strides, deleter, m]
        cap = _capsule_new(C.addressof(m), name, None)
        self.capsules.append(cap)
        self.exports += 1
        return cap


def _problem(rng):
    t = np.cumsum(rng.integers(1, 100, size=(2, 30)), axis=1)
    v = rng.standard_normal((2, 30, 3))
    x = rng.integers(0, 3000, size=(2, 17))
    return v, t, x


@pytest.mark.parametrize("legacy", [False, True])
def test_each_deleter_called_exactly_once(rng, legacy):
    v, t, x = _problem(rng)
    producers = [Producer(a, legacy=legacy) for a in (v, t, x)]
    out = robocache.resample(*producers)
    for p in producers:
        assert p.exports == 1 and p.deleted == 1
        name = b"used_dltensor" if legacy else b"used_dltensor_versioned"
        assert _capsule_name(p.capsules[0]) == name
    np.testing.assert_array_equal(out, robocache.resample(v, t, x))


def test_deleters_called_once_on_error_paths(rng):
    v, t, x = _problem(rng)
    bad = np.array([[0.0, 1.0]])  # wrong batch size: the library rejects it
    producers = [Producer(a) for a in (v, t, bad)]
    with pytest.raises(ValueError):
        robocache.resample(*producers)
    assert [p.deleted for p in producers] == [1, 1, 1]
    # a producer failing after others were consumed
    p_v, p_t = Producer(v), Producer(t)
    with pytest.raises(TypeError, match="target_times"):
        robocache.resample(p_v, p_t, [1, 2, 3])
    assert (p_v.deleted, p_t.deleted) == (1, 1)


def test_unsupported_dlpack_major_version_is_buffer_error(rng):
    v, t, x = _problem(rng)
    p = Producer(v, version=(2, 0))
    with pytest.raises(BufferError, match="values: DLPack version 2.0"):
        robocache.resample(p, t, x)
    assert p.deleted == 1


def test_read_only_flag_accepted_for_inputs_rejected_for_out(rng):
    v, t, x = _problem(rng)
    ro = Producer(v, read_only=True)
    robocache.resample(ro, t, x)
    assert ro.deleted == 1
    out = Producer(np.zeros((2, 17, 3)), read_only=True)
    with pytest.raises(BufferError, match="out: tensor is read-only"):
        robocache.resample(v, t, x, out=out)
    assert out.deleted == 1


def test_consumed_capsule_cannot_be_used_twice(rng):
    v, t, x = _problem(rng)
    cap = v.__dlpack__(max_version=(1, 0))
    robocache.resample(cap, t, x)  # capsules are accepted directly
    with pytest.raises(BufferError, match="values: expected a DLPack capsule"):
        robocache.resample(cap, t, x)


def test_refcounts_return_to_start(rng):
    v, t, x = _problem(rng)
    out = np.empty((2, 17, 3))
    valid = np.empty((2, 17), dtype=bool)
    before = [sys.getrefcount(a) for a in (v, t, x, out, valid)]
    for _ in range(100):
        robocache.resample(v, t, x, out=out, valid=valid)
        robocache.align([robocache.Stream(v, t)], x, out=out, valid=valid[..., None])
        with pytest.raises(ValueError):
            robocache.resample(v, t, x[:1])
    gc.collect()
    assert [sys.getrefcount(a) for a in (v, t, x, out, valid)] == before


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_no_leak_over_10000_calls(rng):
    t = np.arange(64, dtype=np.int64)
    v = rng.standard_normal((64, 16))
    x = np.linspace(0, 63, 64)
    x = x.astype(np.int64)

    def call():
        a = robocache.resample(v, t, x, return_valid=True)  # 8 KB + 64 B allocated
        b = robocache.align([robocache.Stream(v, t, name="s")], x)
        try:
            robocache.resample(v, t, x, method="cubic")
        except ValueError:
            pass
        return a, b

    for _ in range(500):
        call()
    gc.collect()
    tracemalloc.start()
    rss0 = _rss_bytes()
    snap0 = tracemalloc.take_snapshot()
    for _ in range(10000):
        call()
    gc.collect()
    grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap0, "filename"))
    tracemalloc.stop()
    rss_grown = _rss_bytes() - rss0
    # a leaked output would be >= 10,000 x 8 KB = 80 MB
    assert grown < 256 * 1024, grown
    assert rss_grown < 16 * 2**20, rss_grown


def test_buffer_exports_once_and_honours_max_version(rng):
    v, t, x = _problem(rng)
    out, valid = _C.resample(v, t, x, fill_value=0.0, return_valid=True)
    assert type(out) is _C.Buffer and out.__dlpack_device__() == (1, 0)
    cap = out.__dlpack__()
    assert _capsule_name(cap) == b"dltensor"
    with pytest.raises(BufferError, match="already exported"):
        out.__dlpack__(max_version=(1, 0))
    arr = np.from_dlpack(valid)
    assert arr.dtype == np.bool_ and arr.shape == (2, 17)
    del cap  # never consumed: its destructor frees the buffer
    with pytest.raises(BufferError, match="stream must be None"):
        _C.resample(v, t, x, fill_value=0.0)[0].__dlpack__(stream=1)
