"""The MPI checks of ``dlhack doctor`` (dlhack.tools.mpicheck), on text and replies made by hand:
which MPI a launcher's banner belongs to, a launcher that does not match mpi4py's library, and
a round trip whose ranks each say they are alone. (``dlhack doctor`` on a real foreign mpiexec:
test_doctor.py.)"""
from dlhack.tools.mpicheck import RoundTrip, check_mpiexec, check_roundtrip, flavour

MPICH_LIBRARY = {"mpi4py": "4.1.2", "library": "MPICH Version:      5.0.2\nMPICH ABI: 18:2:6"}
HYDRA = "HYDRA build details:\n    Version:                                 5.0.2\n"
OPEN_MPI = "mpiexec (Open MPI) 4.1.6\n\nReport bugs to https://www.open-mpi.org/community/help/\n"
INTEL = "Intel(R) MPI Library for Linux* OS, Version 2021.13 Build 20240701\n"


def test_mpiexec_flavours_are_told_apart():
    assert flavour(HYDRA) == "MPICH" and flavour(MPICH_LIBRARY["library"]) == "MPICH"
    assert flavour(OPEN_MPI) == "Open MPI" and flavour(INTEL) == "Intel MPI"
    assert check_mpiexec("/venv/bin/mpiexec", HYDRA, MPICH_LIBRARY).status == "OK"
    assert check_mpiexec("/usr/bin/mpiexec", OPEN_MPI, MPICH_LIBRARY).status == "FAIL"
    assert check_mpiexec("/opt/intel/mpiexec", INTEL, MPICH_LIBRARY).status == "WARN"
    assert check_mpiexec(None, "", MPICH_LIBRARY).status == "FAIL"
    # None on PATH but the environment has its own: dlhack's launches still work.
    assert check_mpiexec(None, "", MPICH_LIBRARY, beside="/venv/bin/mpiexec").status == "INFO"


def test_roundtrip_sees_every_rank_alone_as_the_mismatch():
    alone = RoundTrip(replies=[(0, 1, 0), (0, 1, 0)])
    result = check_roundtrip(2, alone)
    assert result.status == "FAIL" and "rank 0 of 1" in result.detail
    assert check_roundtrip(2, RoundTrip(replies=[(0, 2, 1), (1, 2, 1)])).status == "OK"
    assert check_roundtrip(3, RoundTrip(replies=[(0, 3, 3), (1, 3, 3)])).status == "FAIL"
    assert check_roundtrip(2, RoundTrip(timed_out=True, seconds=60)).status == "FAIL"
