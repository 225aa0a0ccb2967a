"""Frames of sensor_msgs/Image and sensor_msgs/CompressedImage messages as
uint8 [H, W, C] arrays.

Image (raw): the 8-bit encodings of ROS' sensor_msgs/image_encodings through
NumPy: rgb8, rgba8 (as stored), bgr8, bgra8 (channels reversed to RGB / RGBA),
mono8 (C = 1), 8UC1, 8UC3, 8UC4 (as stored); rows of `step` bytes with any
padding after width * C dropped. CompressedImage: JPEG or PNG data (found by
the data's leading bytes, whatever `format` says) decoded with PyAV (the
'datasets' extra): grey images C = 1, others RGB C = 3 (an alpha channel is
dropped). Anything else: DatasetError naming the encoding or format.
"""

import numpy as np

from ._deps import require
from ._series import DatasetError

# encoding -> (channels, reverse the channel order to RGB(A))
RAW_ENCODINGS = {"rgb8": (3, False), "rgba8": (4, False), "bgr8": (3, True), "bgra8": (4, True),
                 "mono8": (1, False), "8UC1": (1, False), "8UC3": (3, False),
                 "8UC4": (4, False)}

# leading bytes -> FFmpeg decoder
COMPRESSED = ((b"\xff\xd8\xff", "mjpeg"), (b"\x89PNG\r\n\x1a\n", "png"))


def raw(msg):
    """uint8 [H, W, C] of a sensor_msgs/Image."""
    if msg.encoding not in RAW_ENCODINGS:
        raise DatasetError(f"image encoding {msg.encoding!r} is not an 8-bit one this reader "
                           f"decodes ({', '.join(RAW_ENCODINGS)})")
    channels, reverse = RAW_ENCODINGS[msg.encoding]
    h, w, step = int(msg.height), int(msg.width), int(msg.step)
    data = np.frombuffer(msg.data, dtype=np.uint8)
    if step < w * channels or data.shape[0] < h * step:
        raise DatasetError(f"{msg.encoding} image {w}x{h}: {data.shape[0]} data bytes with step "
                           f"{step} (need step >= {w * channels} and {h * step} bytes)")
    img = data[:h * step].reshape(h, step)[:, :w * channels].reshape(h, w, channels)
    return np.ascontiguousarray(img[..., ::-1] if reverse else img)


def compressed(msg):
    """uint8 [H, W, C] of a sensor_msgs/CompressedImage (JPEG or PNG)."""
    av = require("av", purpose="decode CompressedImage frames")
    data = bytes(msg.data)
    codec = next((c for magic, c in COMPRESSED if data.startswith(magic)), None)
    if codec is None:
        raise DatasetError(f"compressed image of format {msg.format!r} is neither JPEG nor PNG "
                           f"(leading bytes {data[:8].hex()})")
    try:
        ctx = av.CodecContext.create(codec, "r")
        frames = ctx.decode(av.Packet(data)) or ctx.decode(None)
    except av.FFmpegError as e:
        raise DatasetError(f"{codec} data of {len(data)} bytes does not decode: {e}") from None
    if not frames:
        raise DatasetError(f"{codec} data of {len(data)} bytes gives no frame")
    frame = frames[0]
    if frame.format.name.startswith(("gray", "ya")):
        return frame.to_ndarray(format="gray")[..., None]
    return frame.to_ndarray(format="rgb24")


def decode(msg, msgtype):
    """uint8 [H, W, C] of an Image or CompressedImage message."""
    return compressed(msg) if msgtype.endswith("CompressedImage") else raw(msg)
