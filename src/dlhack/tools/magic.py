"""The ``%%mpiexec`` cell magic: run a notebook cell on N MPI ranks, with a timeout.

    %load_ext dlhack

    %%mpiexec -n 2 --timeout 30
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    print(comm.rank, comm.allreduce(comm.rank))

The cell is written to a temporary file and run as ``python FILE`` on every rank by
:func:`dlhack.tools.launch.run`, the same code as ``dlhack run``: lines appear in the notebook as
they are printed, marked ``[rank]``, and a summary follows (the same error on every rank, or on
some ranks only; where each rank waited).

Why a timeout (60 s unless ``--timeout`` says otherwise): a rank stuck in a collective that
another rank never reaches waits forever. ipyparallel's ``%%px`` has no timeout, so such a cell
freezes the notebook until the engines are restarted. Here, on the timeout or when you interrupt
the kernel (the stop button), every rank's Python stack is dumped, the whole job is killed, and
the summary says which MPI call each rank was waiting in.

The cell runs in fresh processes: it sees none of the notebook's variables, and what it defines
does not come back. Import what it needs inside the cell.
"""
import argparse
import shlex
import sys
import tempfile
from pathlib import Path

from IPython.core.error import UsageError

from dlhack.tools.launch import run

DEFAULT_TIMEOUT_S = 60.0


def parse_line(line):
    """The magic's arguments: ``-n N`` and ``--timeout S``."""
    parser = argparse.ArgumentParser(prog="%%mpiexec", add_help=False)
    parser.add_argument("-n", "--np", type=int, default=2, help="number of ranks (default 2)")
    parser.add_argument("-t", "--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help=f"seconds before the job is killed (default {DEFAULT_TIMEOUT_S:g})")
    try:
        return parser.parse_args(shlex.split(line))
    except SystemExit:  # argparse exits on a bad line; in a notebook, say how to write it
        raise UsageError(parser.format_help()) from None


def mpiexec(line, cell):
    """Run ``cell`` on ``-n`` ranks (``%%mpiexec -n 2 --timeout 30``); returns None.

    Raises KeyboardInterrupt again after killing the job when the kernel is interrupted, so
    that Jupyter stops the cells queued after this one.
    """
    args = parse_line(line)
    with tempfile.TemporaryDirectory(prefix="dlhack-cell-") as folder:
        script = Path(folder, "cell.py")
        script.write_text(cell)
        # sys.stdout at call time is the notebook's output stream, so lines appear in the cell.
        result = run([sys.executable, str(script)], args.np, timeout=args.timeout,
                     stream=sys.stdout)
    if result.interrupted:
        raise KeyboardInterrupt


def load_ipython_extension(ipython):
    """Register ``%%mpiexec`` (``%load_ext dlhack`` calls this through dlhack/__init__.py)."""
    ipython.register_magic_function(mpiexec, magic_kind="cell", magic_name="mpiexec")
