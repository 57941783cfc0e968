"""What the grader's MPI shim saw one rank do in one test: its messages, collectives, one-sided calls.

    traffic = read(run_dir, rank, index)     # Traffic, or TrafficError
    [m.dest for m in traffic.sends]          # world ranks it sent to, in order
    traffic.collectives                      # [Collective("Allreduce_c", ...)] if it used one

The shim (``pmpi_shim.c``, built by ``pmpi.py``) writes ``traffic.RANK`` in the run folder, one
line per MPI call, and the rank's driver (``pytest_in_rank.py``) marks where each test begins and
ends with ``MPI_Pcontrol(BASE + 2 I + 1)`` and ``MPI_Pcontrol(BASE + 2 I + 2)``. This reads the
lines between test I's two marks, a line at a time (the file may be tens of MB; a test's part
of it is at most 8 MB, the shim's cap). Other ``MPI_Pcontrol`` levels are the learner's own and
are skipped. The checker (check_outside.py) reads it; standard library only, loaded by its path.

What it cannot say: anything learner code did without an MPI call (shared memory, files), or
through the library's ``PMPI_`` entry points directly (ctypes); and the learner's process owns
the file it is written to. See the threat model in the README.
"""
import pickletools
from dataclasses import dataclass, field
from pathlib import Path

BASE = 1000  # the driver's MPI_Pcontrol levels start above this
LINE_MAX = 2 * 4096 + 512  # the longest line the shim writes: a send with a 4 KB head in hex
PICKLE_DATA = ("SHORT_BINBYTES", "BINBYTES", "BINBYTES8", "BYTEARRAY8", "SHORT_BINSTRING",
               "BINSTRING")


def marks(index):
    """The MPI_Pcontrol levels that open and close test ``index`` of a launch."""
    return BASE + 2 * index + 1, BASE + 2 * index + 2


class TrafficError(Exception):
    """No trustworthy record of the test's traffic: ``kind`` is missing (no file), garbled
    (lines the shim never writes), or unfinished (the test's marks are not both there)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


@dataclass
class Message:
    """One point-to-point send (``kind``: Send_c, Isend_c, Sendrecv_c, ...)."""

    kind: str
    comm: str
    dest: int        # in COMM_WORLD; -1: MPI_PROC_NULL
    dest_in_comm: int
    tag: int
    count: int
    typesize: int
    head: bytes      # the first bytes sent (the shim keeps a few KB); b"" when unknown

    @property
    def nbytes(self):
        return self.count * self.typesize

    @property
    def pickled(self):
        """An mpi4py lower-case send (``comm.send(obj)``): bytes of a pickle, not a buffer."""
        return self.typesize == 1 and self.head[:1] == b"\x80"

    def data_bytes(self):
        """The bytes of data it carries: all of them for a buffer; for a pickle, its largest
        bytes object (a numpy array's data), read without unpickling; None when cut off."""
        if not self.pickled:
            return self.nbytes
        largest = None
        try:
            for op, arg, _ in pickletools.genops(self.head):
                if op.name in PICKLE_DATA:
                    largest = max(largest or 0, len(arg))
        except Exception:  # noqa: BLE001 - a pickle cut off at the head's end, or not a pickle
            return largest if len(self.head) == self.nbytes else None
        return largest or 0


@dataclass
class Call:
    """A receive (``source``), a collective (``comm``) or a one-sided call (``target``)."""

    kind: str
    peer: int
    count: int
    typesize: int


@dataclass
class Traffic:
    """One rank's MPI calls between a test's two marks."""

    rank: int
    sends: list = field(default_factory=list)
    receives: list = field(default_factory=list)
    collectives: list = field(default_factory=list)
    one_sided: list = field(default_factory=list)
    starts: int = 0          # persistent requests started (MPI_Start, MPI_Startall)
    overflow: bool = False   # the shim stopped logging: more than its cap in one test


def read(run_dir, rank, index):
    """Test ``index``'s traffic on ``rank``, from ``RUN_DIR/traffic.RANK``."""
    path = Path(run_dir) / f"traffic.{rank}"
    if not path.is_file():
        raise TrafficError("missing", f"rank {rank} has no traffic file")
    start, end = marks(index)
    traffic, inside, seen_end = Traffic(rank), False, False
    with open(path, "rb") as f:
        header = f.readline(256).split()
        if len(header) != 5 or header[0] != b"H" or header[2] != str(rank).encode():
            raise TrafficError("garbled", f"rank {rank}'s traffic file has no header of its own")
        for number, raw in enumerate(iter(lambda: f.readline(LINE_MAX), b""), start=2):
            if inside and not raw.endswith(b"\n"):
                raise TrafficError("garbled", f"line {number} of rank {rank}'s traffic file is "
                                              f"longer than any the grader's shim writes")
            fields = raw.split()
            if fields[:1] == [b"P"] and len(fields) == 2 and fields[1].lstrip(b"-").isdigit():
                level = int(fields[1])
                if level == start:
                    inside = True
                elif level == end and inside:
                    seen_end = True
                    break
                continue
            if inside:
                _add(traffic, fields, rank, number)
    if not seen_end:
        raise TrafficError("unfinished", f"rank {rank}'s traffic file does not hold the whole "
                                         f"test (its marks are missing)")
    return traffic


def _add(traffic, fields, rank, number):
    """One line into ``traffic``; TrafficError for a line the shim would never write."""
    tag, args = (fields[0].decode(errors="replace") if fields else ""), fields[1:]
    try:
        if tag == "S" and len(args) == 8:
            head = b"" if args[7] == b"-" else bytes.fromhex(args[7].decode())
            traffic.sends.append(Message(args[0].decode(), args[1].decode(),
                                         *map(int, args[2:7]), head))
        elif tag == "V" and len(args) == 7:
            traffic.receives.append(Call(args[0].decode(), int(args[2]), int(args[5]),
                                         int(args[6])))
        elif tag == "C" and len(args) == 4:
            traffic.collectives.append(Call(args[0].decode(), int(args[1], 16), int(args[2]),
                                            int(args[3])))
        elif tag == "R" and len(args) == 4:
            traffic.one_sided.append(Call(args[0].decode(), *map(int, args[1:])))
        elif tag == "T" and len(args) == 2:
            traffic.starts += int(args[1])
        elif tag == "O" and not args:
            traffic.overflow = True
        else:
            raise ValueError(tag)
    except (ValueError, UnicodeDecodeError):
        raise TrafficError("garbled", f"line {number} of rank {rank}'s traffic file is not one "
                                      f"the grader's shim writes") from None
