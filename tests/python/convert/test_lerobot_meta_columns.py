"""meta/episodes columns built from NumPy (_lerobot_writer._column) are the
columns pyarrow infers from the same Python values (Table.from_pylist)."""

import math

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

from robocache.convert._lerobot_writer import _column  # noqa: E402

RNG = np.random.default_rng(7)

CASES = {
    "vector stats": [RNG.random(6).tolist() for _ in range(5)],
    "count": [[11858], [3], [40]],
    "image stats [C][1][1]": [RNG.random((3, 1, 1)).tolist() for _ in range(4)],
    "ints and floats mixed": [[0, 1.5], [2, 3]],
    "nan and inf": [[math.nan, 1.0], [math.inf, -math.inf]],
    "ragged": [[1.0, 2.0], [3.0]],
    "with None": [[1.0, None], [2.0, 3.0]],
    "empty lists": [[], []],
    "bools": [[True], [False]],
    "strings": [["pick"], ["place"]],
    "scalars": [1, 2, 3],
    "int64 bounds": [[2 ** 63 - 1], [-(2 ** 63)]],
}


@pytest.mark.parametrize("name", list(CASES))
def test_column_matches_pyarrow_inference(name):
    values = CASES[name]
    want = pa.Table.from_pylist([{"c": v} for v in values]).column("c").combine_chunks()
    got = _column(pa, values)
    assert got.type == want.type
    assert got.null_count == want.null_count
    assert repr(got.to_pylist()) == repr(want.to_pylist())  # (repr: NaN equals NaN)
