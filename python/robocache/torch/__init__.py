"""PyTorch integration of robocache.

WindowLoader feeds a training loop from the device: the low-dimensional
streams of all episodes live in device memory, and each batch is one sampler
draw plus ONE robocache.align call for all keys (image keys are decoded ahead
in background threads). collate_ragged pads ragged episodes for a
torch.utils.data.DataLoader.

    import robocache.datasets as rd, robocache.torch as rt
    loader = rt.WindowLoader(rd.open(path), windows={"action": [k / 30 for k in range(50)]},
                             batch_size=256, device="cuda")
    for batch in loader:
        batch["action"], batch["action_is_pad"]     # [256, 50, D], [256, 50]

See docs/loader.md and docs/python.md.
"""

from ._collate import collate_ragged
from ._loader import WindowLoader

__all__ = ["WindowLoader", "collate_ragged"]
