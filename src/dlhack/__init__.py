"""dlhack: a hands-on course in distributed deep learning with Chainer and ChainerMN.

The library behind the notebooks in ``lessons/`` and ``labs/``:

- ``dlhack.data``      the embedded English->Japanese corpus, generated from a small grammar
- ``dlhack.corpus``    the loader for small_parallel_enja-style corpora and the vocabulary
- ``dlhack.seq2seq``   the LSTM encoder-decoder translator (fast CPU LSTM beside NStepLSTM)
- ``dlhack.train``     training with Chainer's Trainer, single process or data-parallel
- ``dlhack.parallel``  communicator, multi-node optimizer and dataset scattering over mpi4py
- ``dlhack.profile``   where each rank's training step goes, and what that says
- ``dlhack.snapshot``  snapshots that a killed run resumes from, checked before loading
- ``dlhack.paramserver``, ``dlhack.schedules``, ``dlhack.model_parallel``: lessons 4, 5, 7
- ``dlhack.grade``     the autograder for the labs
- ``dlhack.doctor``, ``dlhack.launch``, ``dlhack.magic``: the environment check, the
  rank-aware launcher (``dlhack run``) and the ``%%mpiexec`` cell magic

``%load_ext dlhack`` in a notebook adds the ``%%mpiexec`` cell magic.
"""
import contextlib
import warnings

__version__ = "0.1.0"

# Chainer 7.8.1 warns at import about pkg_resources and numpy.distutils. Importing it once here,
# quietly, keeps those warnings off stderr (nbgrader scores a cell that writes to stderr 0).
# A broken Chainer install must not stop `dlhack doctor`, which exists to explain it.
with warnings.catch_warnings(), contextlib.suppress(Exception):  # doctor reports the error
    warnings.simplefilter("ignore")
    import chainer  # noqa: F401


def load_ipython_extension(ipython):
    """Register the ``%%mpiexec`` cell magic (``%load_ext dlhack``)."""
    from dlhack.magic import load_ipython_extension as _load

    _load(ipython)
