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


def check_allreduce(mpi_comm, name, dtype, n, shape=None):
    """Run algorithm ``name`` three ways (new array, given ``out``, in place); list what failed."""
    allreduce, rank, size = ALGORITHMS[name], mpi_comm.rank, mpi_comm.size
    mine = rank_data(rank, n, dtype, shape)
    before = mine.copy()
    expected = sum(rank_data(r, n, np.float64, shape) for r in range(size))
    fresh = allreduce(mpi_comm, mine)  # out=None: a new array
    out = np.empty_like(mine)
    given = allreduce(mpi_comm, mine, out=out)  # into a given array
    buf = mine.copy()
    allreduce(mpi_comm, buf, out=buf)  # in place
    everyone = mpi_comm.allgather(buf.tobytes())

    case = f"{name} {np.dtype(dtype).name} n={n} shape={shape}"
    tol = size * size * np.finfo(dtype).eps  # p - 1 roundings of partial sums up to p
    failures = []
    if not np.array_equal(mine, before):
        failures.append(f"{case}: input modified")
    if given is not out:
        failures.append(f"{case}: did not return out")
    for got in (fresh, out, buf):
        if got.dtype != dtype or got.shape != expected.shape:
            failures.append(f"{case}: got {got.dtype} {got.shape}")
        elif not np.allclose(got.astype(np.float64), expected, rtol=0, atol=tol):
            failures.append(f"{case}: max error {np.max(np.abs(got - expected)):.3g} > {tol:.3g}")
    # naive and ring sum every element on one rank only, so every rank has the same bits.
    if name != "mpi" and len(set(everyone)) != 1:
        failures.append(f"{case}: ranks disagree")
    return failures


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_allreduce_matches_serial_sum(mpi_comm, monkeypatch):
    size = mpi_comm.size
    cases = [(n, None) for n in (0, 1, size - 1, size, size + 1, 37, 1001)] + [(15, (3, 5))]
    failures = []
    for name in ALGORITHMS:
        for dtype in DTYPES:
            for n, shape in cases:
                failures += check_allreduce(mpi_comm, name, dtype, n, shape)
    # Tiny segments: the ring cuts chunks of unequal lengths into many pieces, some empty.
    for segment_bytes in (8, 12):
        monkeypatch.setattr(allreduce_ring, "SEGMENT_BYTES", segment_bytes)
        for dtype in DTYPES:
            for n in (size + 1, 37):
                failures += [f"{f} segment={segment_bytes}B"
                             for f in check_allreduce(mpi_comm, "ring", dtype, n)]
    # An MPI without MPI.FLOAT16_T (before MPI 5): "mpi" sums float16 in float32.
    monkeypatch.setattr(allreduce_mpi, "HAS_FLOAT16", False)
    for n, shape in cases:
        failures += [f"{f} (no FLOAT16_T)"
                     for f in check_allreduce(mpi_comm, "mpi", np.float16, n, shape)]
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
