"""Bad input gets a clear error naming what is wrong, never a crash, a silent
wrong value or an empty message: output sizes past 64 bits, outputs that
overlap inputs, allocations that fail, files with bytes that are not text,
messages that repeat their operation's name, stream names that are not str,
tensors without elements."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from conftest import requires_torch, torch

import robocache

BIG = 2**60


def _huge_channels():
    """values [1, 2^60] float32: one element seen through stride-0 axes."""
    return as_strided(np.zeros(1, np.float32), shape=(1, BIG), strides=(0, 0))


@pytest.mark.parametrize("op", ["resample", "align"])
def test_output_of_more_than_2_60_elements_is_refused(op):
    v, t, x = _huge_channels(), np.zeros(1, np.int64), np.arange(16)
    call = (lambda: robocache.resample(v, t, x)) if op == "resample" else \
        (lambda: robocache.align([robocache.Stream(v, t)], x))
    with pytest.raises(ValueError, match=rf"out: shape \(16, {BIG}\) has more than 2\^60 "
                                         "elements"):
        call()


def test_output_that_cannot_be_allocated_names_its_bytes():
    v, t = _huge_channels(), np.zeros(1, np.int64)
    with pytest.raises(MemoryError, match=rf"out: out of memory allocating {4 * BIG} bytes for "
                                          rf"\(1, {BIG}\) float32"):
        robocache.resample(v, t, np.zeros(1, np.int64))


@requires_torch
def test_torch_output_of_more_than_2_60_elements_is_refused():
    v = torch.zeros(1, 1).expand(1, BIG)
    with pytest.raises(ValueError, match=r"has more than 2\^60 elements"):
        robocache.resample(v, torch.zeros(1, dtype=torch.int64), torch.arange(16))


# Allocations that fail everywhere: more than 2^57 bytes (the address space of
# 5-level paging), so that no overcommitting system maps them (a mapped one would
# be written and kill the process).


def test_huge_voxel_grid_names_bytes_and_output():
    pts = np.zeros((4, 3), np.float32)
    with pytest.raises(MemoryError, match=r"out: out of memory allocating \d{18} bytes for "
                                          r"\(1, 1, \d+, \d+, \d+\) int32"):
        robocache.voxelize(pts, 1e-3, [0, 0, 0, 1000, 1000, 100])


def test_huge_hard_capacity_names_bytes_or_size():
    pts = np.zeros((4, 3), np.float32)
    P = 2**24
    with pytest.raises(MemoryError, match=rf"voxels: out of memory allocating {(2**31 - 1) * P * 12}"
                                          rf" bytes for \(2147483647, {P}, 3\) float32"):
        robocache.voxelize_hard(pts, 0.1, [0, 0, 0, 1, 1, 1], P, 2**31 - 1)
    with pytest.raises(ValueError, match=r"voxels: shape \(2147483647, 2147483647, 3\) has more "
                                         r"than 2\^60 elements"):
        robocache.voxelize_hard(pts, 0.1, [0, 0, 0, 1, 1, 1], 2**31 - 1, 2**31 - 1)


def _stream(n=6, d=2):
    t = np.arange(n, dtype=np.int64) * 10
    v = np.arange(n * d, dtype=np.float64).reshape(n, d)
    return v, t


def test_out_aliasing_values_is_refused():
    v, t = _stream()
    with pytest.raises(ValueError, match="out: shares memory with values"):
        robocache.resample(v, t, t + 5, out=v)


def test_out_overlapping_the_bytes_of_times_is_refused():
    t = np.arange(6, dtype=np.int64) * 10
    v = np.arange(6.0)
    with pytest.raises(ValueError, match="out: shares memory with times"):
        robocache.resample(v, t, t + 5, out=t.view(np.float64))


def test_valid_overlapping_out_is_refused():
    v, t = _stream(d=1)
    out = np.empty((6, 1))
    valid = out.view(np.uint8).reshape(-1)[:6].view(np.bool_)
    with pytest.raises(ValueError, match="valid: shares memory with out"):
        robocache.resample(v, t, t + 5, out=out, valid=valid)


def test_align_out_aliasing_a_stream_names_it():
    v, t = _stream()
    out = np.zeros((6, 3), np.float32)
    streams = [robocache.Stream(v, t), robocache.Stream(out[:, 2:], t, name="imu")]
    with pytest.raises(ValueError, match=r"out: shares memory with stream 1 \(imu\): values"):
        robocache.align(streams, t + 5, out=out)


def test_broadcast_out_is_refused():
    v, t = _stream()
    out = as_strided(np.zeros(1), shape=(6, 2), strides=(0, 0))
    with pytest.raises(ValueError, match="out: axis 0 has stride 0"):
        robocache.resample(v, t, t + 5, out=out)


@requires_torch
def test_torch_out_aliasing_values_is_refused():
    v, t = (torch.from_numpy(a) for a in _stream())
    with pytest.raises(ValueError, match="out: shares memory with values"):
        robocache.resample(v, t, t + 5, out=v)


def test_separate_out_is_accepted():
    v, t = _stream()
    out = np.empty_like(v)
    robocache.resample(v, t, t + 5, out=out)
    assert np.array_equal(out, robocache.resample(v, t, t + 5))


def test_binary_garbage_point_cloud_header_is_a_value_error(tmp_path):
    path = tmp_path / "garbage.pcd"
    path.write_bytes(b"\xff\xfe\x80garbage\nFIELDS x\xff y z\n")
    with pytest.raises(ValueError, match=r"garbage.pcd:1: .*'\\xff\\xfe\\x80garbage'"):
        robocache.read_point_cloud(path)


def test_point_cloud_field_names_escape_their_bytes(tmp_path):
    path = tmp_path / "field.pcd"
    path.write_bytes(b"# .PCD v0.7\nVERSION 0.7\nFIELDS x y z \xffq\nSIZE 4 4 4 4\nTYPE F F F F\n"
                     b"COUNT 1 1 1 1\nWIDTH 1\nHEIGHT 1\nPOINTS 1\nDATA ascii\n1 2 3 4\n")
    points, info = robocache.read_point_cloud(path, return_info=True)
    assert info["names"] == ("x", "y", "z", "\\xffq")
    assert points.tolist() == [[1, 2, 3, 4]]


def test_text_table_with_garbage_bytes_is_a_value_error(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(b"#timestamp [ns],a\xff\n1,2\n")
    with pytest.raises(ValueError, match=r"unknown column 'b'; available columns: "
                                         r"'timestamp \[ns\]', 'a\\xff'"):
        robocache.read_table(path, columns=["b"])


@pytest.mark.parametrize("call,op", [
    (lambda: robocache.voxel_downsample(np.array([[0, 0, 0], [1e30, 1e30, 1e30]], np.float32),
                                        1e-30), "voxel_downsample"),
    (lambda: robocache.voxelize_hard(np.zeros((4, 3), np.float32), 0.1, [0, 0, 0, 1, 1, 1], 5,
                                     10, offsets=np.array([0, 5])), "voxelize_hard"),
    (lambda: robocache.align([robocache.Stream(np.zeros(3), np.array([0, 2, 1]))],
                             np.array([1])), "align"),
])
def test_messages_name_their_operation_once(call, op):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert message.startswith(f"{op}: ")
    assert not message.startswith(f"{op}: {op}")


def test_stream_name_must_be_a_str():
    v, t = _stream()
    with pytest.raises(TypeError, match="Stream: name must be a str, got int"):
        robocache.Stream(v, t, name=123)
    s = robocache.Stream(v, t)
    s.name = 123
    with pytest.raises(TypeError, match="stream 0: name must be a str or None, got int"):
        robocache.align([s], t)


@pytest.mark.parametrize("torch_tensors", [False, pytest.param(True, marks=requires_torch)])
def test_tensors_without_elements(torch_tensors):
    t = np.arange(9)[None].repeat(2, 0)
    x = np.zeros((2, 5), np.int64)
    v = np.zeros((2, 9, 0), np.float32)
    out = np.empty((2, 5, 0), np.float32)
    if torch_tensors:
        t, x, v, out = (torch.from_numpy(a) for a in (t, x, v, out))
        v = torch.empty(2, 9, 0)  # no storage: data pointer NULL
    assert tuple(robocache.resample(v, t, x).shape) == (2, 5, 0)
    assert robocache.resample(v, t, x, out=out) is out
    out, valid = robocache.align([robocache.Stream(v, t), robocache.Stream(v, t)], x)
    assert tuple(out.shape) == (2, 5, 0) and tuple(valid.shape) == (2, 5, 2)
