"""robocache.ray: robocache convert on Ray Data (optional extra robocache[ray]).

    import robocache.ray as rr
    ds = rr.read_recordings(paths, streams=[...], fps=30, output="/data/out")
    ds = ds.map_batches(rr.Align, fn_constructor_kwargs={"device": "auto"}, batch_size=4,
                        num_gpus=1, compute=ray.data.ActorPoolStrategy(size=4))
    rr.write_lerobot(ds, "/data/out")                   # (CPU: leave num_gpus out)

One recording is one unit of work (a shard): Align actors read and align it
(robocache.convert's own code, on the GPU Ray gives them or the CPU backend),
compute its episodes' columns, statistics and MP4 video (image features) and
write its shard (checksummed) beside the output; write_lerobot runs the
dataset and, on the driver, writes the LeRobot v3.0 dataset from the shards in
input order as they complete, with robocache.convert's writer, placing the
shards' MP4 files: the same dataset as a serial `robocache convert`. See
docs/ray.md.
"""

from ._align import Align
from ._convert import convert
from ._read import read_recordings
from ._write import write_lerobot

__all__ = ["Align", "convert", "read_recordings", "write_lerobot"]
