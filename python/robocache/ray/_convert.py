"""robocache.ray.convert: `robocache convert --ray` (read_recordings ->
Align actors -> write_lerobot) on a local Ray or a cluster."""

from ..convert import _output
from ..convert._convert import _file_sizes
from ._align import Align
from ._deps import ray_data
from ._read import check_inputs, dataset, recording_rows
from ._write import write_lerobot

TASKS_PER_WORKER = 50  # recordings_per_task=None: about this many tasks per worker
LAST_SINGLES_PER_WORKER = 2  # the last 2 x workers recordings go one per task


def default_per_task(recordings, workers):
    """recordings_per_task=None: recordings // (50 x workers), at least 1."""
    return max(1, recordings // (TASKS_PER_WORKER * max(1, workers)))


def convert(inputs, output, *, streams, fps=None, reference=None, span="overlap",
            invalid="trim", split_gap=None, split_by=None, task=None, robot_type=None,
            overwrite=False, order="error", address=None, num_workers=None,
            num_gpus_per_worker=0, recordings_per_task=None, data_files_size_in_mb=None,
            log=None):
    """robocache.convert.convert(..., to="lerobot") on Ray: the same dataset.

    inputs               paths every Ray node reads at the same path, or URLs
                         pyarrow.fs opens (s3://bucket/run.mcap, a folder
                         s3://bucket/run1/, a glob in the last component
                         s3://bucket/bags/*.bag; docs/ray.md), in any mix
    address              ray.init address when Ray is not initialised yet
                         (None: a local Ray on all cores; "ray://head:10001")
    num_workers          Align actors, recordings converted at once (default:
                         the cluster's CPUs, or its GPUs / num_gpus_per_worker
                         when that is > 0)
    num_gpus_per_worker  GPUs per Align actor (e.g. 0.25), each keeping its CUDA
                         context; 0 runs the CPU backend
    recordings_per_task  recordings a worker converts per Ray Data task (each
                         still its own shard): more amortises Ray Data's cost
                         per task over short recordings, fewer balances the
                         workers' load; None (default): recordings to convert
                         // (50 x workers), at least 1. When it is > 1 the last
                         2 x num_workers recordings go one per task, after the
                         others, so that the workers run out of work within
                         a recording or two of each other
    data_files_size_in_mb  MiB of Parquet after which a data file takes no
                         more episodes (write_lerobot; default LeRobot's 100)
    A rerun after an interruption skips the recordings whose shards are
    complete. Errors as robocache.convert.convert (FileNotFoundError naming
    an input that is not a file or folder here or a URL with nothing there,
    before Ray is started), ValueError for a URL pyarrow.fs does not open and
    for recordings_per_task < 1, OSError with pyarrow's text for a URL it
    cannot read (credentials, network), and ImportError naming robocache[ray]
    when ray is missing.
    """
    if recordings_per_task is not None and int(recordings_per_task) < 1:
        raise ValueError(f"recordings_per_task must be >= 1, got {recordings_per_task}")
    _file_sizes("lerobot", data_files_size_in_mb, None)
    data = ray_data()
    import ray
    _output.check_target(output, overwrite)
    inputs = check_inputs(inputs)  # before a local Ray is started; URLs expanded
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)
    if num_workers is None:
        res = ray.cluster_resources()
        num_workers = (int(res.get("GPU", 0) / num_gpus_per_worker) if num_gpus_per_worker
                       else int(res.get("CPU", 1)))
    rows = recording_rows(inputs, streams=streams, fps=fps, reference=reference, span=span,
                          invalid=invalid, split_gap=split_gap, split_by=split_by, task=task,
                          order=order, output=output)
    size = max(1, num_workers)
    per_task = int(recordings_per_task or default_per_task(len(rows), size))
    singles = LAST_SINGLES_PER_WORKER * size if per_task > 1 else 0
    ds = dataset(rows, per_task, singles).map_batches(
        Align, fn_constructor_kwargs={"device": "auto"}, batch_size=1, batch_format="numpy",
        num_gpus=num_gpus_per_worker or None, compute=data.ActorPoolStrategy(size=size))
    return write_lerobot(ds, output, overwrite=overwrite, robot_type=robot_type,
                         data_files_size_in_mb=data_files_size_in_mb, log=log)
