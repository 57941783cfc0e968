"""The ring allreduce (dlhack.parallel.allreduce_ring) equals the serial sum, for awkward sizes,
every float dtype and segments so small that some are empty; its chunks cover the array evenly."""
import itertools

import pytest

from dlhack.parallel import allreduce_ring
from dlhack.parallel.allreduce_ring import chunk_bounds
from tests.parallel.sums import DTYPES, check_allreduce, check_every_case


def test_chunk_bounds_cover_range_evenly():
    for n in range(30):
        for size in range(1, 7):
            bounds = chunk_bounds(n, size)
            lengths = [e - b for b, e in bounds]
            assert len(bounds) == size and sum(lengths) == n
            assert all(b1 == e0 for (_, e0), (b1, _) in itertools.pairwise(bounds))
            assert max(lengths) - min(lengths) <= 1 and lengths == sorted(lengths, reverse=True)


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_ring_matches_serial_sum(mpi_comm, monkeypatch):
    failures = check_every_case(mpi_comm, allreduce_ring.allreduce)
    # Tiny segments: the ring cuts chunks of unequal lengths into many pieces, some empty.
    for segment_bytes in (8, 12):
        monkeypatch.setattr(allreduce_ring, "SEGMENT_BYTES", segment_bytes)
        for dtype in DTYPES:
            for n in (mpi_comm.size + 1, 37):
                failures += [f"{f} segment={segment_bytes}B" for f in check_allreduce(
                    mpi_comm, allreduce_ring.allreduce, dtype, n)]
    assert not failures, "\n".join(failures[:20])
