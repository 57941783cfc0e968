"""The serial sum every allreduce algorithm is checked against (importable:
``from tests.parallel.sums import check_allreduce``): each rank rebuilds every rank's array from
the same seed, and the algorithm runs three ways on awkward sizes and every float dtype."""
import numpy as np

DTYPES = (np.float16, np.float32, np.float64)


def rank_data(rank, n, dtype, shape=None):
    """Rank ``rank``'s array: any rank can rebuild any other's from the same seed."""
    rng = np.random.RandomState(1000 * n + rank)
    return rng.uniform(-1, 1, n).astype(dtype).reshape(shape or (n,))


def sizes(size):
    """``(n, shape)`` cases for ``size`` ranks: empty, fewer elements than ranks, uneven, 2-D."""
    return [(n, None) for n in (0, 1, size - 1, size, size + 1, 37, 1001)] + [(15, (3, 5))]


def check_allreduce(mpi_comm, allreduce, dtype, n, shape=None, same_bits=True):
    """Run ``allreduce`` three ways (new array, given ``out``, in place); list what failed.

    ``same_bits``: every rank must end with the same bits (an algorithm that sums each element on
    one rank only); MPI's own may add in a different order on each rank.
    """
    rank, size = mpi_comm.rank, mpi_comm.size
    mine = rank_data(rank, n, dtype, shape)
    before = mine.copy()
    expected = sum(rank_data(r, n, np.float64, shape) for r in range(size))
    fresh = allreduce(mpi_comm, mine)  # out=None: a new array
    out = np.empty_like(mine)
    given = allreduce(mpi_comm, mine, out=out)  # into a given array
    buf = mine.copy()
    allreduce(mpi_comm, buf, out=buf)  # in place
    everyone = mpi_comm.allgather(buf.tobytes())

    case = f"{allreduce.__module__} {np.dtype(dtype).name} n={n} shape={shape}"
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
    if same_bits and len(set(everyone)) != 1:
        failures.append(f"{case}: ranks disagree")
    return failures


def check_every_case(mpi_comm, allreduce, same_bits=True):
    """``check_allreduce`` over every dtype and every case of ``sizes``."""
    return [failure for dtype in DTYPES for n, shape in sizes(mpi_comm.size)
            for failure in check_allreduce(mpi_comm, allreduce, dtype, n, shape, same_bits)]
