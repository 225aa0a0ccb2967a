"""The extension module's calling convention and state: every _C function
takes the keyword arguments its signature names (and no others), the shape
queries give the shapes the ops return, and each module object (PEP 489
multi-phase init) has its own exception and Buffer types."""

import importlib.util
import inspect

import numpy as np
import pytest

import robocache
from robocache import _C

FUNCTIONS = [name for name in dir(_C)
             if not name.startswith("_") and callable(getattr(_C, name))
             and not isinstance(getattr(_C, name), type)]


class _Unusable:
    """An argument no _C function accepts (not a tensor, str or number)."""


def test_every_function_has_a_signature():
    assert {"resample", "align", "voxelize", "read_table", "resample_shapes"} <= set(FUNCTIONS)
    for name in FUNCTIONS:
        inspect.signature(getattr(_C, name))  # raises for a missing or bad text signature


@pytest.mark.parametrize("name", FUNCTIONS)
def test_keywords_are_the_signature_parameters(name):
    f = getattr(_C, name)
    params = inspect.signature(f).parameters
    unknown = f"{name}\\(\\) got an unexpected keyword argument 'no_such_argument'" if params \
        else "takes no keyword arguments"
    with pytest.raises(TypeError, match=unknown):
        f(no_such_argument=1)
    for p in params:
        # the parser takes every documented name: what fails is a missing
        # argument or the value, never the keyword
        try:
            f(**{p: _Unusable()})
        except Exception as e:  # noqa: BLE001 - any error but an unknown keyword
            assert "unexpected keyword" not in str(e), (name, p, e)


def test_required_and_repeated_arguments_are_named():
    v, t, x = np.zeros((4, 2), np.float32), np.arange(4), np.array([1, 2])
    with pytest.raises(TypeError, match=r"resample\(\) missing required argument 'target_times'"):
        _C.resample(v, t)
    with pytest.raises(TypeError, match=r"resample\(\) got multiple values for argument 'times'"):
        _C.resample(v, t, x, times=t)
    with pytest.raises(TypeError, match=r"resample\(\) takes at most 3 positional arguments"):
        _C.resample(v, t, x, None)


def test_unset_options_are_the_library_defaults(rng):
    v = rng.standard_normal((2, 9, 3)).astype(np.float32)
    t = np.cumsum(rng.integers(1, 50, size=(2, 9)), axis=1)
    x = rng.integers(-20, int(t.max()) + 20, size=(2, 5))
    bare = np.from_dlpack(_C.resample(v, t, x)[0])
    spelled = robocache.resample(v, t, x, method="linear", extrapolate="clamp")
    assert np.array_equal(bare, spelled)


@pytest.mark.parametrize("values,times,targets", [
    ((2, 9, 3), (2, 9), (2, 5)), ((2, 9), (2, 9), (2, 5)), ((9, 3), (9,), (5,)),
    ((9,), (9,), (5,)), ((1, 9, 0), (1, 9), (1, 5))])
def test_resample_shapes_are_the_outputs(values, times, targets):
    v = np.zeros(values, np.float32)
    t = np.broadcast_to(np.arange(9), times).copy()
    x = np.zeros(targets, np.int64)
    out, valid = robocache.resample(v, t, x, return_valid=True)
    assert _C.resample_shapes(values, times, targets) == (out.shape, valid.shape)


def test_align_shapes_are_the_outputs():
    t = np.arange(9)[None].repeat(2, 0)
    streams = [robocache.Stream(np.zeros((2, 9, 3), np.float32), t),
               robocache.Stream(np.zeros((2, 9), np.float32), t)]
    x = np.zeros((2, 4), np.int64)
    out, valid = robocache.align(streams, x)
    query = _C.align_shapes([s.values.shape for s in streams], [s.times.shape for s in streams],
                            x.shape)
    assert query == (out.shape, valid.shape) == ((2, 4, 4), (2, 4, 2))


def test_shape_queries_raise_the_ops_errors():
    with pytest.raises(ValueError, match="target_times: expected"):
        _C.resample_shapes((9, 3), (9,), (1, 2, 5))
    with pytest.raises(ValueError, match=r"stream 1 \(imu\): times: expected \[B,S\]"):
        _C.align_shapes([(2, 9, 3), (2, 9, 3)], [(2, 9), (9,)], (2, 5), names=[None, "imu"])


def test_voxel_shape_queries_are_the_outputs(rng):
    pts = rng.uniform(0, 1, size=(50, 4)).astype(np.float32)
    offsets = np.array([0, 20, 50])
    size, rng_ = [0.25, 0.25, 0.5], [0, 0, 0, 1, 1, 1]
    for mode in ("count", "sum"):
        out = robocache.voxelize(pts, size, rng_, mode=mode, offsets=offsets)
        assert _C.voxelize_shape(pts.shape, size, rng_, mode=mode,
                                 offsets=offsets.shape) == out.shape
    padded = robocache.voxelize_hard(pts, size, rng_, 3, 7, offsets=offsets, padded=True)
    assert _C.voxelize_hard_shapes(pts.shape, 3, 7, offsets=offsets.shape) == \
        tuple(o.shape for o in padded)
    assert _C.voxel_downsample_shapes(pts.shape, offsets=offsets.shape) == ((50, 4), (3,))


def test_each_module_object_has_its_own_state():
    spec = importlib.util.find_spec("robocache._C")
    other = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(other)
    assert other is not _C
    assert other.RobocacheError is not _C.RobocacheError
    assert other.Buffer is not _C.Buffer
    assert issubclass(other.RobocacheError, RuntimeError)
    out, _ = other.resample(np.arange(4.0), np.arange(4), np.array([1, 2]), fill_value=0.0)
    assert type(out) is other.Buffer
    assert np.array_equal(np.from_dlpack(out), [1.0, 2.0])
    with pytest.raises(TypeError, match="cannot create"):
        other.Buffer()


def test_no_timing_function_in_the_module():
    assert not [name for name in FUNCTIONS if "time_direct" in name or "bench" in name]
