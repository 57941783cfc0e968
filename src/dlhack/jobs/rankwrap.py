"""One rank of a supervised job: the small wrapper that ``dlhack run`` and the grader start on
every rank.

    python rankwrap.py RUN_DIR script.py ARGS...
    python rankwrap.py RUN_DIR -m module ARGS...
    python rankwrap.py RUN_DIR -c CODE ARGS...
    python rankwrap.py RUN_DIR --exec COMMAND ARGS...    # not Python: only the output is caught

``dlhack.jobs.supervise`` builds these command lines; you do not type them. The grader runs its
``pytest_in_rank.py`` the same way, from a private copy of this file. Before running the rank's
code, in the same process, the wrapper (file names as in ``runfiles.py``):

1. sends this rank's stdout and stderr to ``RUN_DIR/rank.N.out``. ``dlhack run`` follows those
   files and prefixes each line with ``[N]``; mpiexec's own ``-l`` cuts lines apart when two
   ranks print at once, one file per rank cannot.
2. registers ``faulthandler`` on SIGUSR1: ``kill -USR1 PID`` writes the Python stack of every
   thread to ``RUN_DIR/rank.N.stack``, even while the rank is blocked inside an MPI call.
3. enables ``faulthandler`` for fatal signals (a segfault in C code, an abort) with the file
   ``RUN_DIR/rank.N.crash``: the supervisor reads where the rank died from there.
4. writes ``RUN_DIR/rank.N.pid``, only now (SIGUSR1 before step 2 would kill the rank), so the
   supervisor can signal this very process: hydra starts every rank in a session of its own, out
   of reach of a signal sent to mpiexec's process group.
5. catches an uncaught exception, prints the traceback and, when mpi4py has started MPI, calls
   ``MPI.COMM_WORLD.Abort(1)``. Without that, a rank that dies before a collective leaves the
   others waiting in it forever. (Outside ``dlhack run``, ``python -m mpi4py script.py`` does the
   same abort.) When the rank's code is over, ``RUN_DIR/rank.N.done`` holds its exit status.

Only the standard library is used, and the supervisor runs this file by its path rather than
with ``-m dlhack.jobs.rankwrap``: the rank's Python then need not have dlhack installed, and a
rank does not import Chainer (which ``dlhack/__init__.py`` does) before its own code starts. The
two files it needs, ``mpiexec.py`` (which variable holds the rank) and ``runfiles.py`` (the file
names), are loaded from beside it by their paths; they use the standard library only too.
"""
import sys

# Run by its path, Python puts this file's folder (dlhack/jobs, or the grader's copy) first on
# sys.path, where its neighbours (run.py, stacks.py, ...) would shadow the learner's modules of
# the same name. run_target() puts the learner's folder there instead.
if __name__ == "__main__":
    del sys.path[0]

import faulthandler  # after the sys.path fix above, on purpose
import importlib.util
import os
import runpy
import signal
import time
import traceback

# Ranks that hit the same bug reach it within moments of each other. Waiting this long before
# MPI_Abort lets them print their own traceback too, so the launcher can tell "every rank" from
# "rank 1 only"; Abort kills the others at once.
ABORT_GRACE_S = 1.0


def load_sibling(name):
    """Load ``NAME.py`` from beside this file, by its path, without the dlhack package."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location(f"_rankwrap_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def send_output_to(path):
    """Point file descriptors 1 and 2 at ``path``, so C code and child processes follow too."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    # Whole lines, written at once, reach the launcher as soon as they are printed.
    sys.stdout.reconfigure(line_buffering=True, write_through=True)
    sys.stderr.reconfigure(line_buffering=True, write_through=True)


def print_traceback(exc):
    """Print ``exc``'s traceback without the frames of this wrapper and of runpy."""
    tb = exc.__traceback__
    hidden = (os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>")
    while tb is not None and tb.tb_frame.f_code.co_filename in hidden:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb, file=sys.stderr)


def abort_if_mpi(rank, exc):
    """Call MPI_Abort when mpi4py has started MPI with other ranks, so that none of them hangs."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or not mpi.Is_initialized() or mpi.Is_finalized():
        return
    if mpi.COMM_WORLD.Get_size() == 1:
        return
    # endings.py reads this line's start as "this rank called MPI_Abort": keep the two in step.
    print(f"dlhack: rank {rank} raised {type(exc).__name__}; calling MPI_Abort in "
          f"{ABORT_GRACE_S:g} s so that the other ranks do not wait for it forever",
          file=sys.stderr)
    time.sleep(ABORT_GRACE_S)
    mpi.COMM_WORLD.Abort(1)


def run_target(args):
    """Run ``script.py ARGS``, ``-m module ARGS`` or ``-c CODE ARGS`` as ``python`` would."""
    if not args:
        raise SystemExit("dlhack: nothing to run (expected script.py, -m module or -c code)")
    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif args[0] == "-c":
        sys.argv = ["-c", *args[2:]]
        sys.path.insert(0, "")
        # `python -c CODE` is exactly this: the learner's own code, run as __main__.
        exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102
    else:
        sys.argv = list(args)
        # As `python script.py` does: the script's folder, not this wrapper's, comes first.
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        runpy.run_path(args[0], run_name="__main__")


def main(argv):
    """Set up this rank as the module docstring says, then run its command."""
    run_dir, args = argv[0], argv[1:]
    rank = load_sibling("mpiexec").launched_rank() or 0  # None: no launcher, one process
    runfiles = load_sibling("runfiles")

    def path(kind):
        return runfiles.run_file(run_dir, kind, rank)

    send_output_to(path("out"))
    if args and args[0] == "--exec":
        write(path("pid"), os.getpid())
        os.execvp(args[1], args[1:])  # replaces this process: same pid, same output files

    # Kept open while the rank runs: faulthandler writes to their descriptors when it must.
    stack_file = open(path("stack"), "w")  # noqa: SIM115
    faulthandler.register(signal.SIGUSR1, file=stack_file, all_threads=True)
    crash_file = open(path("crash"), "w")  # noqa: SIM115
    faulthandler.enable(file=crash_file, all_threads=True)
    write(path("pid"), os.getpid())  # only now: SIGUSR1 before register() would kill the rank

    try:
        run_target(args)
    except SystemExit as exc:
        write(path("done"), exit_status(exc.code))
        raise
    except BaseException as exc:  # noqa: BLE001 - every uncaught error must end the job
        print_traceback(exc)
        write(path("done"), 1)
        abort_if_mpi(rank, exc)
        raise SystemExit(1) from None
    write(path("done"), 0)


def exit_status(code):
    """The status ``sys.exit(code)`` ends a process with: 0 for None, 1 for a message."""
    return code if isinstance(code, int) else (0 if code is None else 1)


def write(path, value):
    """Tell the supervisor something: a pid, or that this rank's own code is over (done)."""
    with open(path, "w") as f:
        f.write(str(value))


if __name__ == "__main__":
    main(sys.argv[1:])
