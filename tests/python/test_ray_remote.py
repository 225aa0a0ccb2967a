"""robocache.ray with inputs given as URLs, read through pyarrow.fs from an S3
server (moto's, on 127.0.0.1): the Husky recording as a ROS 1 bag (one
object) and as a rosbag2 MCAP folder (a prefix of objects), named by
s3://recordings/...?endpoint_override=127.0.0.1:PORT&scheme=http, credentials
in the environment as a user gives them (the local Ray's workers inherit it).
Converted on a local Ray (2 CPUs) they give the dataset the serial converter
writes from the same files on disk, byte for byte, the URLs named where it
names the paths; a URL with nothing there is a FileNotFoundError naming it
before Ray starts; a rerun reuses the shards and a re-uploaded object gets a
new shard key; a glob in the last component expands to the matching entries,
in sorted order; the workers' and the driver's local copies are removed."""

import os
import pickle
import socket
import sys
import tempfile
import time

import pytest

ray = pytest.importorskip("ray")
rr = pytest.importorskip("robocache.ray")
pytest.importorskip("moto", minversion="5.2.5")  # (requirements-test.txt says why)
moto_server = pytest.importorskip("moto.server")
pafs = pytest.importorskip("pyarrow.fs")
from robocache.convert import convert  # noqa: E402

from ray_support import (FPS, HUSKY_BAG, HUSKY_MCAP, ODOM, STREAMS,  # noqa: E402
                         assert_same_dataset, cli, local_ray)

BUCKET = "recordings"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """(S3FileSystem of the server, URL query naming it, the workers' TMPDIR),
    the Husky bag and MCAP folder under husky/; a local Ray started with the
    credentials in the environment and that TMPDIR."""
    port = free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    worker_tmp = tmp_path_factory.mktemp("worker-tmp")
    with pytest.MonkeyPatch.context() as mp:
        for k, v in {**CREDENTIALS, "TMPDIR": str(worker_tmp), "RAY_TMPDIR": "/tmp"}.items():
            mp.setenv(k, v)
        fs = pafs.S3FileSystem(endpoint_override=f"127.0.0.1:{port}", scheme="http",
                               allow_bucket_creation=True)
        fs.create_dir(BUCKET)
        for src in (HUSKY_BAG, HUSKY_MCAP):
            upload(fs, src, f"husky/{src.name}")
        local_ray(sys.modules[__name__])
        try:
            yield fs, f"?endpoint_override=127.0.0.1:{port}&scheme=http", worker_tmp
        finally:
            ray.shutdown()
            server.stop()


def upload(fs, src, key):
    """Copies the local file or folder `src` to BUCKET/key."""
    pafs.copy_files(str(src), f"{BUCKET}/{key}", source_filesystem=pafs.LocalFileSystem(),
                    destination_filesystem=fs)


def url(s3, key):
    return f"s3://{BUCKET}/{key}{s3[1]}"


def test_urls_equal_serial(s3, tmp_path):
    urls = [url(s3, f"husky/{HUSKY_MCAP.name}"), url(s3, f"husky/{HUSKY_BAG.name}")]
    local = [str(HUSKY_MCAP), str(HUSKY_BAG)]
    convert(local, str(tmp_path / "serial"), to="lerobot", fps=FPS, streams=STREAMS)
    out = tmp_path / "ray"
    rr.convert(urls, str(out), streams=STREAMS, fps=FPS, num_workers=2)
    assert_same_dataset(tmp_path / "serial", out, renamed=dict(zip(urls, local)))
    assert os.listdir(s3[2]) == []  # the workers' copies removed


def test_missing_url_fails_before_ray_starts(s3, tmp_path):
    missing = url(s3, "husky/no-such.bag")
    with pytest.raises(FileNotFoundError, match=f"^{missing.replace('?', '[?]')}: no such file"):
        rr.read_recordings([url(s3, f"husky/{HUSKY_BAG.name}"), missing], streams=STREAMS,
                           fps=FPS, output=str(tmp_path / "out"))
    p = cli("-o", str(tmp_path / "out"), "--ray", inputs=(str(HUSKY_BAG), missing))
    assert p.returncode == 3, p.stderr[-3000:]
    assert f"robocache convert: {missing}: no such file or directory\n" in p.stderr
    assert "Started a local Ray instance" not in p.stderr
    assert os.listdir(tmp_path) == []


def test_url_pyarrow_does_not_open(tmp_path):
    with pytest.raises(ValueError, match="^foo://b/r.mcap: pyarrow.fs does not open this URL"):
        rr.read_recordings(["foo://b/r.mcap"], streams=STREAMS, fps=FPS,
                           output=str(tmp_path / "out"))
    p = cli("-o", str(tmp_path / "out"), "--ray", inputs=("foo://b/r.mcap",))
    assert p.returncode == 1 and "robocache convert: foo://b/r.mcap: pyarrow.fs" in p.stderr
    assert os.listdir(tmp_path) == []


def test_unreachable_server_is_an_oserror_naming_the_url(s3, tmp_path):
    closed = f"s3://{BUCKET}/run.bag?endpoint_override=127.0.0.1:{free_port()}&scheme=http"
    with pytest.raises(OSError, match=f"^{closed.replace('?', '[?]')}: .*AWS Error"):
        rr.read_recordings([closed], streams=STREAMS, fps=FPS, output=str(tmp_path / "out"))
    assert os.listdir(tmp_path) == []


def test_rerun_reuses_shards_and_a_changed_object_gets_a_new_key(s3, tmp_path):
    fs = s3[0]
    upload(fs, HUSKY_BAG, "rerun/run.bag")
    upload(fs, HUSKY_MCAP, "rerun/run_mcap")
    urls = [url(s3, "rerun/run.bag"), url(s3, "rerun/run_mcap")]
    out = str(tmp_path / "out")

    def rows():
        ds = rr.read_recordings(urls, streams=STREAMS, fps=FPS, output=out)
        return {r["path"]: r["key"] for r in ds.take_all()}

    first = rows()
    assert list(first) == urls
    ds = rr.read_recordings(urls, streams=STREAMS, fps=FPS, output=out)
    ds.map_batches(rr.Align, batch_size=1, batch_format="numpy",
                   compute=ray.data.ActorPoolStrategy(size=2)).take_all()
    assert rows() == {}  # both shards complete: nothing to convert again
    # other bytes of the same size, uploaded a second later (S3 mtimes are whole seconds)
    data = bytearray(HUSKY_BAG.read_bytes())
    data[-1] ^= 0xFF
    time.sleep(1.1)
    with fs.open_output_stream(f"{BUCKET}/rerun/run.bag") as f:
        f.write(bytes(data))
    again = rows()
    assert list(again) == [urls[0]] and again[urls[0]] != first[urls[0]]


def test_glob_expands_to_matching_entries(s3, tmp_path):
    out = str(tmp_path / "out")

    def paths(pattern):
        ds = rr.read_recordings([url(s3, pattern)], streams=STREAMS, fps=FPS, output=out)
        return [r["path"] for r in ds.take_all()]

    # a file and a folder, in sorted order (".bag" < "_mcap"), the query kept
    assert paths("husky/robot_localization_test1*") == [
        url(s3, f"husky/{HUSKY_BAG.name}"), url(s3, f"husky/{HUSKY_MCAP.name}")]
    assert paths("husky/*[.]bag") == [url(s3, f"husky/{HUSKY_BAG.name}")]
    with pytest.raises(FileNotFoundError, match="husky/[*].ulg[?].*: no file or folder matches$"):
        paths("husky/*.ulg")
    with pytest.raises(FileNotFoundError, match="/[*]/.*: no such file or directory$"):
        paths("*/robot_localization_test1.bag")  # a glob before the last component is a name


def test_reference_rate_read_from_a_local_copy(s3, tmp_path, monkeypatch):
    # --reference without --fps: the driver reads the first recording's reference stream
    # from a copy in its temporary folder, removed afterwards; the rate is the serial one
    from robocache.convert._convert import plan
    driver_tmp = tmp_path / "driver-tmp"
    driver_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(driver_tmp))
    reference = f"{ODOM}/pose/position"
    ds = rr.read_recordings([url(s3, f"husky/{HUSKY_BAG.name}")], streams=STREAMS,
                            reference=reference, output=str(tmp_path / "out"))
    _, fps, _ = pickle.loads(ds.take_all()[0]["plan"])
    assert os.listdir(driver_tmp) == []
    assert fps == plan([str(HUSKY_BAG)], to="lerobot", streams=STREAMS, reference=reference)[1]
