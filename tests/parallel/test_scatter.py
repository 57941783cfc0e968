"""Scattering: exact shards cover every sample once; equal shards repeat what the docstring says."""
from collections import Counter

import numpy as np
import pytest

from dlhack.parallel import (
    create_communicator,
    scatter_dataset,
    scatter_index,
    scatter_subdataset,
    shard_indices,
)
from dlhack.parallel.scatter import permutation

SIZES = (0, 1, 2, 3, 5, 7, 10, 13)


def test_shard_indices_exact_and_equal_length():
    for size in range(1, 6):
        for n in SIZES:
            order = permutation(n, shuffle=True, seed=n)
            exact = [shard_indices(n, size, r, order) for r in range(size)]
            equal = [shard_indices(n, size, r, order, equal_length=True) for r in range(size)]
            # Exact: contiguous pieces of the order, every sample once, lengths within one.
            assert np.array_equal(np.concatenate(exact), order)
            assert max(map(len, exact)) - min(map(len, exact)) <= 1
            # Equal length: ceil(n / size) each; the exact shard is a prefix, and the padding
            # continues along the order, wrapping: the next shard's first sample, or order[0].
            assert {len(s) for s in equal} == {-(-n // size)}
            begin = 0
            for r in range(size):
                assert np.array_equal(equal[r][:len(exact[r])], exact[r])
                end = begin + len(exact[r])
                pad = equal[r][len(exact[r]):]
                assert np.array_equal(pad, [order[end % n]] * len(pad)) if n else len(pad) == 0
                begin = end
            repeats = sum(len(s) for s in equal) - n
            if n >= size:  # one repeat per short shard
                assert repeats == (size - n % size) % size
            else:  # one sample per shard; the empty shards all take order[0]
                assert repeats == (size - n if n else 0)


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_scatter_dataset_and_index(mpi_comm):
    rank, size = mpi_comm.rank, mpi_comm.size
    failures = []
    for name in ("ring", "chainermn:naive"):  # our helpers with either communicator
        comm = create_communicator(name, mpi_comm=mpi_comm)
        for n in SIZES:
            for shuffle in (False, True):
                for equal_length in (False, True):
                    case = f"{name} n={n} shuffle={shuffle} equal_length={equal_length}"
                    data = [f"sample{i}" for i in range(n)] if rank == 0 else None
                    shard = scatter_dataset(data, comm, shuffle=shuffle, seed=3,
                                            equal_length=equal_length)
                    index = scatter_index(n, comm, shuffle=shuffle, seed=3,
                                          equal_length=equal_length)
                    sub = scatter_subdataset([f"sample{i}" for i in range(n)], comm,
                                             shuffle=shuffle, seed=3, equal_length=equal_length)
                    shards = mpi_comm.allgather(shard)
                    if shard != [f"sample{i}" for i in index] or list(sub) != shard:
                        failures.append(f"{case}: scatter_index/subdataset disagree")
                    counts = Counter(s for each in shards for s in each)
                    lengths = [len(s) for s in shards]
                    if set(counts) != {f"sample{i}" for i in range(n)}:
                        failures.append(f"{case}: samples missing or invented")
                    if not equal_length and (set(counts.values()) - {1}
                                             or max(lengths) - min(lengths) > 1):
                        failures.append(f"{case}: not an exact partition: {lengths}")
                    if equal_length and len(set(lengths)) != 1:
                        failures.append(f"{case}: unequal lengths {lengths}")
                    if shuffle and n >= 5 and size == 1 and index.tolist() == list(range(n)):
                        failures.append(f"{case}: not shuffled")
        # seed=None: the root draws a seed, so the ranks still agree on one permutation.
        index = scatter_index(13, comm, shuffle=True, seed=None)
        if sorted(np.concatenate(mpi_comm.allgather(index)).tolist()) != list(range(13)):
            failures.append(f"{name}: seed=None does not partition")
    assert not failures, "\n".join(failures[:20])
