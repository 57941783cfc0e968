"""Packed batches: sorted longest first, time-major, every token once, no padding."""
import numpy as np
import pytest

from dlhack.model.packing import Packing


def test_layout_of_three_sentences():
    packing = Packing([2, 3, 1])
    assert list(packing.order) == [1, 0, 2]
    assert list(packing.batch_sizes) == [3, 2, 1]
    assert list(packing.offsets) == [0, 3, 5, 6]
    seqs = [np.array([10, 11]), np.array([20, 21, 22]), np.array([30])]
    # step 0: sentences 1, 0, 2; step 1: sentences 1, 0; step 2: sentence 1
    assert list(packing.pack(seqs)) == [20, 10, 30, 21, 11, 22]
    assert packing.index().tolist() == [[1, 4, -1], [0, 3, 5], [2, -1, -1]]
    assert list(packing.final_rows()) == [5, 4, 2]


def test_every_token_once():
    rng = np.random.RandomState(0)
    lengths = rng.randint(1, 12, size=17)
    seqs = [np.arange(n) + 100 * b for b, n in enumerate(lengths)]
    packing = Packing(lengths)
    packed = packing.pack(seqs)
    assert packing.n == lengths.sum() == len(packed)
    assert sorted(packed) == sorted(np.concatenate(seqs))
    index = packing.index()
    for b, s in enumerate(seqs):
        assert list(packed[index[b, :len(s)]]) == list(s)
        assert (index[b, len(s):] == -1).all()
    assert (np.diff(packing.batch_sizes) <= 0).all()


def test_empty_sentences_are_refused():
    with pytest.raises(ValueError):
        Packing([3, 0])
