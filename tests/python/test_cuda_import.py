"""The extension module and PyTorch in one process, in either import order.

Runs everywhere; it matters where robocache._C holds the CUDA backend (the
GPU machine's pytest runs test_cuda_*.py). A module that exported the whole
static core library, CUB's STB_GNU_UNIQUE template statics among them (they
bind process-wide even under RTLD_LOCAL), made `import robocache` before
`import torch` crash PyTorch 2.11 (cu130) with a segmentation fault as it
loaded. conftest.py imports torch first, so each
order runs in a fresh interpreter here."""

import shutil
import subprocess
import sys

import pytest

import robocache

pytest.importorskip("torch")


@pytest.mark.parametrize("first", ["robocache", "robocache._C", "torch"])
def test_import_order(first):
    second = "torch" if first.startswith("robocache") else "robocache"
    code = f"import {first}; import {second}; import robocache.torch; print('ok')"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd="/")
    assert run.returncode == 0 and run.stdout.strip() == "ok", (run.returncode, run.stderr[-2000:])


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) is not installed")
def test_module_exports_only_its_init_function():
    run = subprocess.run(["nm", "-D", "--defined-only", robocache._C.__file__],
                         capture_output=True, text=True, check=True)
    assert [line.split()[-1] for line in run.stdout.splitlines()] == ["PyInit__C"]
