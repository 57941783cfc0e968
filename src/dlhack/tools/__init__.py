"""The commands a learner or a mentor types, on top of the package.

- ``doctor``     ``dlhack doctor``: is this environment ready for the course?
  ``mpicheck``   its MPI checks; ``check``: what one check returns, and how it asks a fresh
                 Python for facts
- ``launch``     ``dlhack run``: a command on N ranks with rank-marked lines, then what happened
  ``postmortem`` the words of that summary
- ``magic``      the ``%%mpiexec`` cell magic (``%load_ext dlhack``)
- ``workspace``  ``dlhack lab``: the learner's own copy of the lessons and labs, and JupyterLab
- ``demo``       the main job of ``make demo``
- ``render``     ``make lessons``: run each lesson at full size and keep its outputs
- ``libmap``     the README's map of the library

Running and supervising jobs is the jobs room's (dlhack/jobs/); grading is dlhack/grade/'s.
"""
