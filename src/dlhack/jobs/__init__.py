"""The job runtime: start an MPI job, watch it, stop it, and read how each rank ended.

Both ``dlhack run`` (and the ``%%mpiexec`` magic, dlhack/tools/) and the grader (dlhack/grade/)
run their jobs through here, so a fix to how a hung or crashed rank is found lands in both. Each
says what it found in its own words: ``tools/postmortem.py`` to a mentor, ``grade/verdict.py``
to a learner.

- ``mpiexec``    which mpiexec to run; the one way an mpiexec command line is built; one BLAS
                 thread per rank
- ``supervise``  the one supervisor: start the ranks, ask them for stacks, kill all it started
- ``rankwrap``   what every rank runs first: its output file, its pid, stack and crash dumps,
                 MPI_Abort on an uncaught error (a standalone script, run by its path)
- ``runfiles``   the names of the files in a run folder (``rank.N.out``, ``.pid``, ...)
- ``stacks``     tracebacks and faulthandler dumps read from text: which error, which MPI call
- ``endings``    how each rank ended (finished, raised, crashed, waiting in an MPI call, ...),
                 read from the run files: the one classifier
- ``run``        run a command on N ranks, lines marked with their rank as they come, with a
                 timeout: the library under ``dlhack run`` and ``%%mpiexec``

``rankwrap``, ``mpiexec`` and ``runfiles`` use the standard library only: the wrapper runs in
every rank before its code, without importing dlhack (and Chainer with it), and loads the other
two from beside it by their paths.
"""
