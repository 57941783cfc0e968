"""Sequences of different lengths laid out time-major without padding (a "packed" batch).

    packing = Packing([len(x) for x in xs])
    ids = packing.pack(xs)            # (N,) token ids, N = sum of the lengths
    rows = packing.index()            # (B, T): where sentence b's step t lies, -1 past its end

Sentences are sorted longest first (``order``). Step ``t`` then holds the first
``batch_sizes[t]`` sentences of that order, rows ``offsets[t]:offsets[t + 1]`` of a packed array:
a recurrent layer runs each step on exactly the sentences still going, and no padding is ever
computed. A sentence keeps its row position at every step, so its previous state is at the same
position in the previous step's rows. Host-side bookkeeping only: a few small integer arrays.
"""
import numpy as np


class Packing:
    """The packed layout of ``B`` sequences with the given lengths (all at least 1).

    Attributes:
        order: (B,) sentence indices, longest first (ties keep their order).
        lengths: (B,) the lengths in that order (non-increasing).
        batch_sizes: (T,) sentences still going at each step.
        offsets: (T + 1,) where each step's rows begin in the packed array.
        n: total rows (the sum of the lengths).
    """

    def __init__(self, lengths):
        lengths = np.asarray(lengths, dtype=np.int64)
        if lengths.size == 0 or lengths.min() < 1:
            raise ValueError("Packing needs at least one sequence, each of length 1 or more")
        self.order = np.argsort(-lengths, kind="stable")
        self.lengths = lengths[self.order]
        steps = np.arange(self.lengths[0])
        self.batch_sizes = (self.lengths[None, :] > steps[:, None]).sum(axis=1)
        self.offsets = np.concatenate([[0], np.cumsum(self.batch_sizes)])
        self.n = int(self.offsets[-1])

    def _valid(self):
        """(T, B) in sorted order: True where a sentence has a token at that step."""
        return np.arange(self.lengths[0])[:, None] < self.lengths[None, :]

    def pack(self, seqs):
        """A list of B 1-D arrays (original order) -> their items packed, (N,)."""
        padded = np.zeros((len(seqs), int(self.lengths[0])), dtype=np.asarray(seqs[0]).dtype)
        for b, s in enumerate(seqs):
            padded[b, :len(s)] = s
        return padded[self.order].T[self._valid()]

    def index(self):
        """(B, T) int: the packed row of sentence b (original order) at step t, -1 past its end."""
        rows = np.full((int(self.lengths[0]), len(self.order)), -1, dtype=np.int32)
        rows[self._valid()] = np.arange(self.n)
        out = np.empty_like(rows.T)
        out[self.order] = rows.T
        return out

    def final_rows(self):
        """(B,) in sorted order: the packed row of each sentence's last step."""
        return self.offsets[self.lengths - 1] + np.arange(len(self.order))
