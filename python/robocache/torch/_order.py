"""Which samples each rank draws in each epoch, and in which order.

The whole epoch's sequence comes from a local torch.Generator seeded with
seed + epoch (never the global RNG), so every rank computes the same
sequence and takes its own strided shard of it, as
torch.utils.data.DistributedSampler does: disjoint shards that together
cover the epoch once.
"""

import torch


class EpochOrder:
    """The sample sequence of one rank.

    num_samples      N samples in all
    group_of_sample  None, or int64 [N] torch: the device page (episode
                     group) of each sample; the sequence then visits the
                     groups one after the other, in an order drawn per epoch
    weights          None, or float64 [N] torch: each sample's relative
                     probability; an epoch then draws N samples with
                     replacement (torch.multinomial)
    shuffle          False: samples in order (weights need shuffle)
    rank, world_size this process's shard
    batch_size, drop_last
                     as torch.utils.data.DataLoader; drop_last also drops the
                     last N mod world_size samples of the sequence before it
                     is sharded (else the sequence wraps around to give every
                     rank the same count, as DistributedSampler)
    """

    def __init__(self, num_samples, *, group_of_sample, weights, shuffle, seed, rank,
                 world_size, batch_size, drop_last):
        if weights is not None and not shuffle:
            raise ValueError("episode weights draw samples at random: they need shuffle=True")
        self.num_samples = int(num_samples)
        self.group_of_sample = group_of_sample
        self.weights = weights
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        self.rank = int(rank)
        self.world_size = int(world_size)
        self.batch_size = int(batch_size)
        self.drop_last = bool(drop_last)
        if self.drop_last:
            self.per_rank = self.num_samples // self.world_size
        else:
            self.per_rank = -(-self.num_samples // self.world_size)
        if self.per_rank == 0:
            raise ValueError(f"{self.num_samples} samples cannot give each of {self.world_size} "
                             "ranks one")

    def __len__(self):
        """Batches per epoch on this rank."""
        if self.drop_last:
            return self.per_rank // self.batch_size
        return -(-self.per_rank // self.batch_size)

    def sequence(self, epoch):
        """int64 [N] torch (CPU): the epoch's samples for all ranks, before sharding."""
        g = torch.Generator()
        g.manual_seed(self.seed + int(epoch))
        if self.weights is not None:
            seq = torch.multinomial(self.weights, self.num_samples, replacement=True, generator=g)
        elif self.shuffle:
            seq = torch.randperm(self.num_samples, generator=g)
        else:
            seq = torch.arange(self.num_samples)
        if self.group_of_sample is not None:
            groups = int(self.group_of_sample.max()) + 1
            rank_of_group = torch.randperm(groups, generator=g) if self.shuffle else \
                torch.arange(groups)
            seq = seq[torch.argsort(rank_of_group[self.group_of_sample[seq]], stable=True)]
        return seq

    def indices(self, epoch):
        """int64 [per_rank] torch (CPU): this rank's samples of the epoch, in order."""
        seq = self.sequence(epoch)
        total = self.per_rank * self.world_size
        if total > seq.numel():
            seq = seq.repeat(-(-total // seq.numel()))
        return seq[self.rank:total:self.world_size]

    def batch(self, indices, i):
        """Batch i of a rank's indices: a slice [B] (the last may be shorter)."""
        return indices[i * self.batch_size:(i + 1) * self.batch_size]
