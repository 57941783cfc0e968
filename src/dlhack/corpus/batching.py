"""Length-bucketed, shuffled batches that keep data-parallel ranks in step.

A recurrent model's time per batch follows the longest sentence in it. Batches drawn at random
mix short and long sentences (so most of the work is padding), and in data-parallel training
every rank waits, at each allreduce, for the rank that drew the longest batch.

``BucketIterator`` sorts each epoch's (shuffled) samples by length, cuts them into batches of
similar length, and visits the batches in an order drawn from ``seed + epoch``. Ranks that hold
random shards of one corpus and use the same seed therefore work on batches of about the same
length at the same iteration: nobody waits long, and little is padding.
"""
import chainer
import numpy as np


class BucketIterator(chainer.dataset.Iterator):
    """Iterator over batches of (src, tgt) pairs of similar total length.

    Args:
        dataset: sequence of (src_ids, tgt_ids) pairs.
        batchsize: sentences per batch (per rank, in data-parallel training).
        seed: seed of the per-epoch shuffles; give every rank the same one.
        shuffle: if False, batches follow the dataset order (used by evaluation).
        repeat: loop over epochs (training) or stop after one (evaluation).
    """

    def __init__(self, dataset, batchsize, seed=0, shuffle=True, repeat=True):
        if len(dataset) == 0:
            raise ValueError("BucketIterator needs a non-empty dataset")
        self.dataset, self.batchsize = dataset, batchsize
        self.seed, self.shuffle, self._repeat = seed, shuffle, repeat
        self._lengths = np.array([len(x) + len(y) for x, y in dataset])
        self.reset()

    def reset(self):
        self.epoch, self.is_new_epoch = 0, False
        self.current_position = 0  # batches served in this epoch
        self._previous_epoch_detail = -1.0
        self._batches = self._plan(0)

    def _plan(self, epoch):
        n = len(self.dataset)
        if not self.shuffle:
            return [np.arange(i, min(i + self.batchsize, n)) for i in range(0, n, self.batchsize)]
        rng = np.random.RandomState(self.seed + epoch)
        order = rng.permutation(n)
        order = order[np.argsort(self._lengths[order], kind="stable")]  # random within a length
        batches = [order[i:i + self.batchsize] for i in range(0, n, self.batchsize)]
        return [batches[k] for k in rng.permutation(len(batches))]

    def __next__(self):
        if not self._repeat and self.epoch > 0:
            raise StopIteration
        self._previous_epoch_detail = self.epoch_detail
        batch = self._serve(self._batches[self.current_position])
        self.current_position += 1
        self.is_new_epoch = self.current_position == len(self._batches)
        if self.is_new_epoch:
            self.epoch += 1
            self.current_position = 0
            self._batches = self._plan(self.epoch)
        return batch

    next = __next__

    def _serve(self, indices):
        """The batch made of the samples at ``indices``."""
        return [self.dataset[i] for i in indices]

    @property
    def epoch_detail(self):
        return self.epoch + self.current_position / len(self._batches)

    @property
    def previous_epoch_detail(self):
        return None if self._previous_epoch_detail < 0 else self._previous_epoch_detail

    @property
    def repeat(self):
        return self._repeat

    def __len__(self):
        """Batches per epoch."""
        return len(self._batches)

    def serialize(self, serializer):
        """Save or load the place in the epoch. Loading into an iterator whose epoch has
        another number of batches (a snapshot of a k-rank job resumed at 2k ranks: shards half
        as long) keeps the fraction of the epoch done, so ``epoch_detail`` and every schedule
        built on it carry on where they were."""
        saved_batches = len(self._batches)
        try:
            saved_batches = int(serializer("n_batches", saved_batches))
        except KeyError:  # a snapshot from before n_batches was saved: the same plan
            pass
        self.current_position = serializer("current_position", self.current_position)
        self.epoch = serializer("epoch", self.epoch)
        self.is_new_epoch = serializer("is_new_epoch", self.is_new_epoch)
        self._previous_epoch_detail = serializer("previous_epoch_detail",
                                                 self._previous_epoch_detail)
        self._batches = self._plan(self.epoch)  # the plan is a function of seed and epoch
        if saved_batches != len(self._batches):  # loading a plan of another length
            self.current_position = min(
                round(self.current_position * len(self._batches) / saved_batches),
                len(self._batches) - 1)  # a last batch left over is taken as this epoch's last


class Batch(list):
    """A list of (src, tgt) pairs that also says what its loss is divided by (``normalizer``:
    None for the batch's own number of sentences)."""

    normalizer = None


def split_by_tokens(work, parts, shares=None):
    """Indices of ``work`` (per item, e.g. tokens) dealt into ``parts`` groups of nearly equal
    total: longest first, each to the group with the least so far. With ``shares`` (one
    positive number per group, e.g. each rank's speed), each total follows its share instead:
    the first ``parts`` items go one to each group, the largest share first, and every later
    one to the group that would finish it soonest (least ``(load + item) / share``).
    Needs ``len(work) >= parts`` (every group gets at least one item)."""
    if len(work) < parts:
        raise ValueError(f"{len(work)} items cannot fill {parts} groups")
    shares = np.ones(parts) if shares is None else np.asarray(shares, dtype=float)
    if shares.shape != (parts,) or not (shares > 0).all():
        raise ValueError(f"shares: {parts} positive numbers, not {shares}")
    # plain Python floats: a few groups, a hundred items, every step of every rank
    work, share = np.asarray(work).tolist(), shares.tolist()
    loads, groups, ranks = [0.0] * parts, [[] for _ in range(parts)], range(parts)
    first = np.argsort(-shares, kind="stable").tolist()
    for k, i in enumerate(np.argsort(-np.asarray(work), kind="stable").tolist()):
        g = first[k] if k < parts else min(ranks, key=lambda j: (loads[j] + work[i]) / share[j])
        groups[g].append(i)
        loads[g] += work[i]
    return [np.sort(np.array(g, dtype=np.int64)) for g in groups]


class BalancedIterator(BucketIterator):
    """Every rank's share of one global bucketed batch per step, split by tokens.

    The fast sibling of ``BucketIterator`` for data-parallel training: every rank holds the
    whole ``dataset`` and the same ``seed``, so all plan the same global batches of
    ``size * batchsize`` sentences (one bucket order, as ``BucketIterator`` makes with that
    batch size). Each global batch is dealt among the ranks by tokens (``split_by_tokens``),
    not by sentences, so every rank has the same work at every step, and each rank's ``Batch``
    carries ``normalizer = sentences in the global batch / size``: with the loss divided by it
    instead of by its own sentence count, the mean of the ranks' losses (and gradients) is
    exactly the loss of the global batch on one process, however the batch is dealt. An epoch
    is one pass over the dataset by all ranks together. ``shares`` (None: equal), the same on
    every rank, deals the tokens in proportion to it instead (``parallel/speed_shares.py`` sets
    it to the ranks' measured speeds).

    Args:
        dataset: the whole sequence of (src_ids, tgt_ids) pairs, the same on every rank.
        batchsize: sentences per rank per step, on average.
        size, rank: the number of ranks and this one.
        seed, shuffle, repeat: as for ``BucketIterator``.
    """

    def __init__(self, dataset, batchsize, size, rank, seed=0, shuffle=True, repeat=True):
        if not 0 <= rank < size or len(dataset) < size:
            raise ValueError(f"rank {rank} of {size} ranks, {len(dataset)} samples")
        self.size, self.rank, self.shares, self.tokens = size, rank, None, 0
        super().__init__(dataset, batchsize * size, seed=seed, shuffle=shuffle, repeat=repeat)

    def _plan(self, epoch):
        batches = super()._plan(epoch)
        small = [k for k, b in enumerate(batches) if len(b) < self.size]
        if small and len(batches) > 1:  # too few sentences to deal: join them to another
            k = small[0]
            batches[k - 1] = np.concatenate([batches[k - 1], batches.pop(k)])
        return batches

    def _serve(self, indices):
        """This rank's share of the global batch at ``indices``, with its normalizer; adds its
        tokens to ``tokens`` (what this rank has been served so far)."""
        work = self._lengths[indices] + 1
        mine = split_by_tokens(work, self.size, self.shares)[self.rank]
        self.tokens += int(work[mine].sum())
        batch = Batch(self.dataset[i] for i in indices[mine])
        batch.normalizer = len(indices) / self.size
        return batch
