"""Every allreduce algorithm equals the serial sum, for awkward sizes and every float dtype."""
import itertools

import numpy as np
import pytest

from dlhack.parallel import allreduce_mpi, allreduce_ring, create_communicator
from dlhack.parallel.allreduce_ring import chunk_bounds
from dlhack.parallel.communicator import ALGORITHMS

DTYPES = (np.float16, np.float32, np.float64)


def rank_data(rank, n, dtype, shape=None):
    """Rank ``rank``'s array: any rank can rebuild any other's from the same seed."""
    rng = np.random.RandomState(1000 * n + rank)
    return rng.uniform(-1, 1, n).astype(dtype).reshape(shape or (n,))


def test_chunk_bounds_cover_range_evenly():
    for n in range(30):
        for size in range(1, 7):
            bounds = chunk_bounds(n, size)
            lengths = [e - b for b, e in bounds]
            assert len(bounds) == size and sum(lengths) == n
            assert all(b1 == e0 for (_, e0), (b1, _) in itertools.pairwise(bounds))
            assert max(lengths) - min(lengths) <= 1 and lengths == sorted(lengths, reverse=True)


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_allreduce_matches_serial_sum(mpi_comm, monkeypatch):
    rank, size = mpi_comm.rank, mpi_comm.size
    cases = [(n, None) for n in (0, 1, size - 1, size, size + 1, 37, 1001)] + [(15, (3, 5))]
    failures = []
    native_float16 = allreduce_mpi.HAS_FLOAT16
    # Small segments make the ring cut its chunks into many pieces of unequal counts;
    # without MPI.FLOAT16_T (MPI < 5), "mpi" sums float16 in float32.
    for segment_bytes, has_float16 in ((allreduce_ring.SEGMENT_BYTES, True), (8, False),
                                       (12, True)):
        monkeypatch.setattr(allreduce_ring, "SEGMENT_BYTES", segment_bytes)
        monkeypatch.setattr(allreduce_mpi, "HAS_FLOAT16", has_float16 and native_float16)
        for name, allreduce in ALGORITHMS.items():
            for dtype in DTYPES:
                tol = size * size * np.finfo(dtype).eps  # p - 1 roundings of sums up to p
                for n, shape in cases:
                    mine = rank_data(rank, n, dtype, shape)
                    before = mine.copy()
                    expected = sum(rank_data(r, n, np.float64, shape) for r in range(size))
                    fresh = allreduce(mpi_comm, mine)  # out=None: a new array
                    out = np.empty_like(mine)
                    given = allreduce(mpi_comm, mine, out=out)  # into a given array
                    buf = mine.copy()
                    allreduce(mpi_comm, buf, out=buf)  # in place
                    # naive and ring: every element summed once, so every rank has the same bits.
                    everyone = mpi_comm.allgather(buf.tobytes())
                    case = f"{name} {np.dtype(dtype).name} n={n} shape={shape} seg={segment_bytes}"
                    if not np.array_equal(mine, before):
                        failures.append(f"{case}: input modified")
                    if given is not out:
                        failures.append(f"{case}: did not return out")
                    for got in (fresh, out, buf):
                        if got.dtype != dtype or got.shape != expected.shape:
                            failures.append(f"{case}: got {got.dtype} {got.shape}")
                        elif not np.allclose(got.astype(np.float64), expected, rtol=0, atol=tol):
                            err = np.max(np.abs(got - expected))
                            failures.append(f"{case}: max error {err:.3g} > {tol:.3g}")
                    if name != "mpi" and len(set(everyone)) != 1:
                        failures.append(f"{case}: ranks disagree")
    assert not failures, "\n".join(failures[:20])


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_communicator_allreduce_and_objects(mpi_comm):
    rank, size = mpi_comm.rank, mpi_comm.size
    results = {}
    for name in ("naive", "ring", "mpi", "chainermn:naive"):
        comm = create_communicator(name, mpi_comm=mpi_comm)
        x = np.full((2, 3), rank + 1, np.float32)
        results[name] = (
            comm.allreduce(x),
            comm.bcast_obj({"root": rank} if rank == 0 else None, root=0),
            comm.gather_obj(rank, root=0),
            comm.allreduce_obj(rank + 1),
        )
        if size > 1:  # a ring of send_obj/recv_obj, even ranks sending first
            right, left = (rank + 1) % size, (rank - 1) % size
            if rank % 2 == 0:
                comm.send_obj(("from", rank), dest=right)
                got = comm.recv_obj(source=left)
            else:
                got = comm.recv_obj(source=left)
                comm.send_obj(("from", rank), dest=right)
            results[name] += (got == ("from", left),)
    total = size * (size + 1) // 2
    for name, (summed, bcast, gathered, reduced, *ring) in results.items():
        assert np.array_equal(summed, np.full((2, 3), total, np.float32)), name
        assert bcast == {"root": 0}, name
        assert gathered == (list(range(size)) if rank == 0 else None), name
        assert reduced == total, name
        assert all(ring), name


def test_unknown_communicator_name_says_what_exists():
    with pytest.raises(ValueError, match="ring"):
        create_communicator("tree", mpi_comm=object())
