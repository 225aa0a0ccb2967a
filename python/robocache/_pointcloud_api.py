"""robocache.read_point_cloud: the library's point-cloud readers (src/io,
docs/voxelize.md "Point-cloud readers") from Python."""

import os

from . import _C


def read_point_cloud(path, *, bin_columns=None, return_info=False):
    """Reads a point cloud into a NumPy float32 array [n, cols]: x, y, z
    first, then the file's other fields in order.

    path         .bin (KITTI / nuScenes: headerless little-endian float32
                 rows), .pcd (PCL: DATA ascii, binary, binary_compressed) or
                 .ply (ascii, binary_little_endian; the vertex element)
    bin_columns  float32 columns per point of a .bin file; None: 5 for
                 "*.pcd.bin" (nuScenes x y z intensity ring), else 4 (KITTI
                 x y z intensity). A file with another extension is read as
                 a .bin only when bin_columns is given (else ValueError).
    Points whose x, y or z is NaN or infinite (the invalid pixels of an
    organized PCD) are dropped. A field with COUNT k > 1 gives k columns
    (name_0 ..), PCL's packed "rgb" / "rgba" give columns r, g, b (0-255),
    integer and float64 fields become float32.
    With return_info=True, returns (points, info): info = dict(names=column
    names, format ("bin", "pcd binary_compressed", "ply ascii", ...),
    points_in_file, dropped_nonfinite, width, height (PCD WIDTH / HEIGHT;
    else points_in_file, 1)).
    Raises OSError (the file cannot be opened or read), ValueError (a
    malformed, truncated or unsupported file, naming the file and what is
    wrong; bin_columns out of range).
    """
    import numpy as np

    cols = 0 if bin_columns is None else int(bin_columns)
    buf, names, fmt, in_file, dropped, width, height = _C.read_point_cloud(
        os.fspath(path), bin_columns=cols)
    points = np.from_dlpack(buf)
    if not return_info:
        return points
    return points, {"names": names, "format": fmt, "points_in_file": in_file,
                    "dropped_nonfinite": dropped, "width": width, "height": height}
