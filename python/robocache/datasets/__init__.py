"""Readers of robot recordings and datasets: every recording becomes episodes
of timestamped streams that robocache.align takes directly.

    import robocache.datasets as rd
    rec = rd.open("data/robot/ros2/robot_localization_test1_mcap")
    ep = rec.episodes[0]
    s = ep.streams["/imu/data/angular_velocity"]
    s.times, s.values, s.fields, s.kind, s.clock   # int64 ns [S], [S, D], ...
    stream = robocache.Stream.from_series(s)      # for robocache.align

Formats (robocache.datasets.FORMATS): rosbag2 (MCAP, sqlite3), rosbag1, lerobot
(v2.1, v3.0), rlds (TFDS TFRecord, no TensorFlow), robomimic and aloha (HDF5),
ulog (PX4), and the text formats euroc, tum, csv, timestamps. See docs/datasets.md.
"""

from ._registry import FORMATS, detect, open
from ._series import DatasetError, Episode, Recording, Series
from ._summary import describe, summarize

__all__ = ["DatasetError", "Episode", "FORMATS", "Recording", "Series", "describe", "detect",
           "open", "summarize"]
