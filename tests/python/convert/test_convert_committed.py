"""convert's write(committed=...): called once the output is in place and
before its sync report, never when the write fails."""

import os

import pytest

from robocache.convert._convert import episodes, plan, write
from robocache.convert._errors import ConvertError

from convert_support import HUSKY_MCAP, HUSKY_STREAMS


def _write(out, items, calls):
    specs, fps, options = plan([str(HUSKY_MCAP)], to="lerobot", streams=HUSKY_STREAMS, fps=30)

    def committed():
        calls.append((os.path.exists(f"{out}/meta/info.json"), os.path.exists(f"{out}.sync.json")))
    return write(items(specs, fps, options), str(out), to="lerobot", inputs=[str(HUSKY_MCAP)],
                 fps=fps, options=options, committed=committed)


def test_committed_after_the_output_and_before_the_report(tmp_path):
    calls = []
    _write(tmp_path / "out", lambda *a: episodes([str(HUSKY_MCAP)], *a), calls)
    assert calls == [(True, False)]
    assert os.path.exists(tmp_path / "out.sync.json")


def test_committed_not_called_when_nothing_is_written(tmp_path):
    calls = []
    with pytest.raises(ConvertError, match="no episode was converted"):
        _write(tmp_path / "out", lambda *a: iter([]), calls)
    assert calls == [] and not os.path.exists(tmp_path / "out")
