"""A PCD reader written with NumPy only (DATA ascii, binary and
binary_compressed, with a pure-Python LZF decoder), independent of
robocache: the oracle of robocache.read_point_cloud's PCD tests. Columns as
robocache documents them: x, y, z first, then the other fields in file
order; COUNT k > 1 gives k columns; packed "rgb" / "rgba" give r, g, b;
"_" fields are skipped; points with a non-finite x, y or z are dropped."""
import numpy as np

_TYPES = {("F", 4): "<f4", ("F", 8): "<f8", ("I", 1): "<i1", ("I", 2): "<i2", ("I", 4): "<i4",
          ("I", 8): "<i8", ("U", 1): "<u1", ("U", 2): "<u2", ("U", 4): "<u4", ("U", 8): "<u8"}


def lzf_decompress(data, size):
    """LZF (liblzf's format): a control byte < 32 starts a run of ctrl + 1
    literal bytes; otherwise a back reference of (ctrl >> 5) + 2 bytes (7:
    plus the next byte) at distance ((ctrl & 31) << 8) + next byte + 1."""
    out, i = bytearray(), 0
    while i < len(data):
        ctrl = data[i]
        i += 1
        if ctrl < 32:
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
            continue
        length = ctrl >> 5
        if length == 7:
            length += data[i]
            i += 1
        ref = len(out) - ((ctrl & 31) << 8) - data[i] - 1
        i += 1
        length += 2
        if ref + length <= len(out):
            out += out[ref:ref + length]
        else:  # the copy overlaps what it writes
            for k in range(length):
                out.append(out[ref + k])
    assert len(out) == size, (len(out), size)
    return bytes(out)


def _header(raw):
    fields, pos = {}, 0
    while True:
        end = raw.index(b"\n", pos)
        line = raw[pos:end].decode().strip()
        pos = end + 1
        if not line or line.startswith("#"):
            continue
        key, *values = line.split()
        fields[key] = values
        if key == "DATA":
            return fields, pos


def read_pcd(path):
    """(points float32 [n, cols], column names) of a PCD file."""
    raw = open(path, "rb").read()
    h, pos = _header(raw)
    names, sizes, types = h["FIELDS"], [int(s) for s in h["SIZE"]], h["TYPE"]
    counts = [int(c) for c in h.get("COUNT", ["1"] * len(names))]
    n = int(h["POINTS"][0])
    dtypes = [np.dtype(_TYPES[(t, s)]) for t, s in zip(types, sizes)]
    data = h["DATA"][0]
    if data == "ascii":
        table = np.loadtxt(raw[pos:].decode().splitlines(), dtype=np.float64, ndmin=2)
        cols, c0 = {}, 0
        for name, dt, k in zip(names, dtypes, counts):
            block = table[:, c0:c0 + k]
            if name in ("rgb", "rgba"):  # the packed colour written as a float or an integer
                packed = block[:, 0].astype(dt).view(np.uint32) if dt.kind == "f" else \
                    block[:, 0].astype(np.uint32)
                block = packed[:, None]
            cols[name] = block
            c0 += k
    else:
        rec = np.dtype([(f"f{j}", dt, (k,)) for j, (dt, k) in enumerate(zip(dtypes, counts))])
        if data == "binary":
            arr = np.frombuffer(raw, dtype=rec, count=n, offset=pos)
            cols = {name: arr[f"f{j}"] for j, name in enumerate(names)}
        else:  # binary_compressed: field after field
            csize, usize = np.frombuffer(raw, dtype="<u4", count=2, offset=pos)
            body = lzf_decompress(raw[pos + 8:pos + 8 + int(csize)], int(usize))
            cols, off = {}, 0
            for name, dt, k in zip(names, dtypes, counts):
                cols[name] = np.frombuffer(body, dtype=dt, count=n * k, offset=off).reshape(n, k)
                off += n * k * dt.itemsize
    out, out_names = [], []
    order = ["x", "y", "z"] + [f for f in names if f not in ("x", "y", "z", "_")]
    for name in order:
        block = cols[name]
        if name in ("rgb", "rgba"):
            packed = np.ascontiguousarray(block[:, 0]).view(np.uint32)
            for shift, c in ((16, "r"), (8, "g"), (0, "b")):
                out.append(((packed >> shift) & 255).astype(np.float32))
                out_names.append(c)
            continue
        k = block.shape[1]
        for j in range(k):
            out.append(block[:, j].astype(np.float32))
            out_names.append(name if k == 1 else f"{name}_{j}")
    pts = np.stack(out, axis=1)
    return pts[np.isfinite(pts[:, :3]).all(axis=1)], tuple(out_names)
