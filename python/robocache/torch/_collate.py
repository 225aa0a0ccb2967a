"""robocache.torch.collate_ragged: ragged episodes into padded batches with lengths.

    loader = DataLoader(episodes, batch_size=8, collate_fn=robocache.torch.collate_ragged)
    for batch in loader:
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        out, valid = robocache.align(
            [robocache.Stream(batch["imu"], batch["imu_times"], lengths=batch["imu_lengths"])],
            batch["camera_times"], target_lengths=batch["camera_times_lengths"])

Alignment runs in the main process after .to(device): workers only read and
pad, the GPU (or all CPU cores) does the resampling in one call per batch.
"""

import torch


def _pad(items, key, pad_value):
    tensors = [torch.as_tensor(item[key]) for item in items]
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.dim() == 0 or t.shape[1:] != first.shape[1:] or t.dtype != first.dtype:
            raise ValueError(
                f"collate_ragged: '{key}' of item {i} has shape {tuple(t.shape)} and dtype "
                f"{t.dtype}; every item needs [length, ...] with the trailing shape "
                f"{tuple(first.shape[1:])} and dtype {first.dtype} of item 0")
    lengths = torch.tensor([t.shape[0] for t in tensors], dtype=torch.int64)
    longest = int(lengths.max()) if len(tensors) else 0
    out = first.new_empty((len(tensors), longest) + tuple(first.shape[1:]))
    for b, t in enumerate(tensors):
        n = t.shape[0]
        out[b, :n] = t
        if n < longest:
            # edge padding keeps padded times non-decreasing; robocache never
            # reads past lengths anyway
            out[b, n:] = t[n - 1] if pad_value is None and n > 0 else (pad_value or 0)
    return out, lengths


def collate_ragged(items, *, pad_value=None):
    """Collates a list of episodes (dicts of arrays [length_i, ...], any
    framework with __array__ or torch tensors) into one dict:

      key            -> [B, max length_i, ...] tensor, padded
      key_lengths    -> [B] int64: length_i of every item (robocache's lengths /
                        target_lengths)

    Keys whose values are not arrays (str, int, ...) are gathered into lists.
    Padding repeats each item's last row (pad_value=None, the default: times stay
    non-decreasing) or writes pad_value. Raises ValueError when items disagree on
    the trailing shape or dtype of a key, or an item has length 0 with edge
    padding.
    """
    if not items:
        raise ValueError("collate_ragged: empty batch")
    batch = {}
    for key in items[0]:
        value = items[0][key]
        if isinstance(value, (str, bytes, int, float)) or value is None:
            batch[key] = [item[key] for item in items]
            continue
        if pad_value is None and any(len(item[key]) == 0 for item in items):
            raise ValueError(f"collate_ragged: '{key}' is empty in an item; edge padding "
                             "needs at least one row (or pass pad_value)")
        batch[key], batch[f"{key}_lengths"] = _pad(items, key, pad_value)
    return batch
