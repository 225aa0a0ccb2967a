"""Decoding of encoded still images (JPEG, PNG) through Pillow, only the frames asked for."""

import io

import numpy as np

from ._deps import require
from ._series import DatasetError


def decode(blobs, indices, where):
    """uint8 [n, H, W, 3] (RGB) of the n encoded images `blobs` (bytes-like;
    Pillow decodes JPEG with libjpeg-turbo, as TensorFlow's decode_jpeg does).
    `indices` are their frame numbers, for errors: DatasetError naming
    `where` and the frame for an image that does not decode or whose size
    differs from the first one."""
    image = require("PIL.Image", purpose="decode image frames")
    frames = []
    for k, blob in zip(indices, blobs):
        try:
            with image.open(io.BytesIO(blob)) as im:
                frame = np.asarray(im.convert("RGB"))
        except (OSError, ValueError, SyntaxError) as e:
            raise DatasetError(f"{where}: frame {k} does not decode: {e}") from e
        if frames and frame.shape != frames[0].shape:
            raise DatasetError(f"{where}: frame {k} is {frame.shape}, frame {indices[0]} "
                               f"{frames[0].shape}")
        frames.append(frame)
    if not frames:
        return np.empty((0, 0, 0, 3), dtype=np.uint8)
    return np.stack(frames)
