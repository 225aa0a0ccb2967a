"""examples/torch_dataloader.py runs end to end (DataLoader workers, collate,
one align call per batch) and reports every batch."""

import pathlib
import subprocess
import sys

from conftest import requires_torch

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "torch_dataloader.py"


@requires_torch
def test_torch_dataloader_example_runs():
    done = subprocess.run([sys.executable, str(EXAMPLE), "--device", "cpu", "--batch-size", "8",
                           "--workers", "2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("batch ")]
    assert len(lines) == 4  # 32 episodes / 8
    assert all("(8, " in ln and ", 13) torch.float32 on cpu" in ln for ln in lines), lines
