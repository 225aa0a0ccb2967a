"""robocache.voxelize_hard against the NumPy implementation of mmcv's
deterministic hard voxelization in tests/oracles/voxel_oracle.py (voxels in
order of their first point, first P points in input order, voxels past M
dropped) on the real clouds with the three presets and on random clouds;
the batched layout (concatenated, and padded=True) == each cloud alone;
torch in/out; presets."""

import numpy as np
import pytest

from conftest import torch
from voxel_oracle import KITTI, KITTI1, KITTI_OBJ, NUS, PRESETS, hard_oracle, load_bin, random_cloud

import robocache

CLOUDS = {"second-kitti": (KITTI, 4), "pointpillars-kitti": (KITTI_OBJ, 4),
          "centerpoint-nus": (NUS, 5)}


def assert_hard_equal(got, want):
    voxels, coords, num_points = want[:3]
    np.testing.assert_array_equal(np.asarray(got[0]), voxels)
    np.testing.assert_array_equal(np.asarray(got[1]), coords)
    np.testing.assert_array_equal(np.asarray(got[2]), num_points)


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("preset", list(CLOUDS))
def test_presets_on_real_clouds(preset, training):
    path, cols = CLOUDS[preset]
    pts = load_bin(path, cols)
    settings = robocache.voxel_preset(preset)
    size, rng, P, _ = PRESETS[preset]
    M = settings["max_voxels"][0 if training else 1]
    voxels, coords, num_points, num_voxels = robocache.voxelize_hard(pts, **settings,
                                                                     training=training)
    want = hard_oracle(pts, size, rng, P, M)
    assert_hard_equal((voxels, coords, num_points), want)
    assert num_voxels.dtype == np.int32 and num_voxels.tolist() == [min(want[3], M)]


def test_max_voxels_cap_drops_voxels():
    """The full KITTI scan with the training cap of second-kitti: more
    non-empty voxels than M, so which voxels survive matters."""
    pts = load_bin(KITTI, 4)
    size, rng, P, _ = PRESETS["second-kitti"]
    *got, stats = robocache.voxelize_hard(pts, size, rng, P, 16000, return_stats=True)
    want = hard_oracle(pts, size, rng, P, 16000)
    assert want[3] > 16000
    assert_hard_equal(got, want)
    assert stats["voxels_nonempty"] == want[3]
    assert stats["voxels_dropped_max_voxels"] == want[3] - 16000


@pytest.mark.parametrize("P,M", [(1, 50), (3, 2000), (7, 100000)])
@pytest.mark.parametrize("cols", [3, 5])
def test_random_clouds(P, M, cols):
    pts = random_cloud(P * 31 + cols, 30000, cols)
    size, rng = (0.5, 0.5, 0.5), (0, 0, 0, 10, 10, 10)
    got = robocache.voxelize_hard(pts, size, rng, P, M)
    assert_hard_equal(got, hard_oracle(pts, size, rng, P, M))


def _batch():
    clouds = [load_bin(KITTI, 4), np.zeros((0, 4), np.float32), load_bin(KITTI1, 4),
              load_bin(KITTI_OBJ, 4)]
    offsets = np.cumsum([0] + [len(c) for c in clouds]).astype(np.int64)
    return clouds, offsets


@pytest.mark.parametrize("M", [6000, 12000])
def test_batch_concatenated_layout(M):
    """Batched outputs are each cloud's voxels in batch order with the batch
    index in coords[:, 0] (mmdet3d's layout), views of the first V rows of
    outputs of B*M rows whose other rows are padding. M = 6000 drops voxels
    of the two raw KITTI scans (about 10,000 each), 12000 none."""
    clouds, offsets = _batch()
    size, rng, P, _ = PRESETS["pointpillars-kitti"]
    outs = robocache.voxelize_hard(np.concatenate(clouds), size, rng, P, M, offsets=offsets,
                                   return_stats=True)
    voxels, coords, num_points, num_voxels, stats = outs
    wants = [hard_oracle(c, size, rng, P, M) for c in clouds]
    for b, w in enumerate(wants):
        w[1][:, 0] = b
    assert num_voxels.tolist() == [len(w[0]) for w in wants]
    assert (stats["voxels_dropped_max_voxels"] > 0) == (M == 6000)
    np.testing.assert_array_equal(voxels, np.concatenate([w[0] for w in wants]))
    np.testing.assert_array_equal(coords, np.concatenate([w[1] for w in wants]))
    np.testing.assert_array_equal(num_points, np.concatenate([w[2] for w in wants]))
    V, rows = len(voxels), len(clouds) * M
    for x, pad in zip(outs[:3], (0, -1, 0)):
        assert x.base is not None and x.base.shape[0] == rows
        assert (x.base[V:] == pad).all()


def test_batch_padded_layout():
    """padded=True: B*M rows, cloud b in rows b*M .. b*M+num_voxels[b]-1, the
    rest 0 (coords -1); equal to each cloud alone."""
    clouds, offsets = _batch()
    size, rng, P, _ = PRESETS["second-kitti"]
    M = 16000
    voxels, coords, num_points, num_voxels = robocache.voxelize_hard(
        np.concatenate(clouds), size, rng, P, M, offsets=offsets, padded=True)
    assert voxels.shape == (len(clouds) * M, P, 4)
    for b, c in enumerate(clouds):
        single = robocache.voxelize_hard(c, size, rng, P, M)
        n = num_voxels[b]
        assert n == len(single[0])
        rows = slice(b * M, b * M + n)
        np.testing.assert_array_equal(voxels[rows], single[0])
        np.testing.assert_array_equal(coords[rows, 1:], single[1][:, 1:])
        assert (coords[rows, 0] == b).all()
        np.testing.assert_array_equal(num_points[rows], single[2])
        pad = slice(b * M + n, (b + 1) * M)
        assert not voxels[pad].any() and (coords[pad] == -1).all() and not num_points[pad].any()


def test_one_cloud_outputs_are_views_of_the_padded_rows():
    """Without offsets, voxels / coords / num_points are the first V rows of
    the M-row padded outputs (views, as mmcv's), with the padded values."""
    pts = load_bin(KITTI_OBJ, 4)
    args = (pts, 0.16, (0, -40, -3, 70.4, 40, 1), 4, 40000)
    outs = robocache.voxelize_hard(*args)
    padded = robocache.voxelize_hard(*args, padded=True)
    V = int(outs[3][0])
    assert 0 < V < 40000
    for x, p in zip(outs[:3], padded[:3]):
        assert x.base is not None and x.base.shape == p.shape
        np.testing.assert_array_equal(x, p[:V])


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("padded", [False, True])
def test_torch_in_torch_out(padded):
    clouds, offsets = _batch()
    size, rng, P, M = PRESETS["centerpoint-nus"]
    pts = np.concatenate(clouds)
    got = robocache.voxelize_hard(torch.from_numpy(pts), size, rng, P, M,
                                  offsets=torch.from_numpy(offsets), padded=padded)
    want = robocache.voxelize_hard(pts, size, rng, P, M, offsets=offsets, padded=padded)
    assert all(isinstance(x, torch.Tensor) for x in got)
    assert [x.dtype for x in got] == [torch.float32] + [torch.int32] * 3
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_torch_points_requiring_grad():
    """No gradient (as mmcv): points that require grad are read, outputs do not."""
    pts = torch.from_numpy(load_bin(KITTI_OBJ, 4)).requires_grad_()
    size, rng, P, M = PRESETS["pointpillars-kitti"]
    voxels = robocache.voxelize_hard(pts, size, rng, P, M)[0]
    assert not voxels.requires_grad
    np.testing.assert_array_equal(voxels.numpy(), hard_oracle(pts.detach().numpy(), size, rng,
                                                              P, M)[0])


def test_presets_match_design_table():
    assert robocache.voxel_preset_names() == tuple(PRESETS)
    for name, (size, rng, P, m_test) in PRESETS.items():
        p = robocache.voxel_preset(name)
        assert p["voxel_size"] == tuple(map(float, size))
        assert p["point_cloud_range"] == tuple(map(float, rng))
        assert p["max_points_per_voxel"] == P and p["max_voxels"][1] == m_test
    assert robocache.voxel_preset("second-kitti")["max_voxels"] == (16000, 40000)
    assert robocache.voxel_preset("centerpoint-nus")["max_voxels"] == (90000, 120000)
    with pytest.raises(ValueError, match="unknown preset 'second'.*second-kitti"):
        robocache.voxel_preset("second")
