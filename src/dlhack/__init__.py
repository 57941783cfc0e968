"""dlhack: a hands-on course in distributed deep learning with Chainer and ChainerMN.

The library behind the notebooks in ``lessons/`` and ``labs/``. What a learner reads, in order:

1. ``dlhack.corpus``     the data: the embedded English->Japanese corpus (generated from a small
                         grammar), the small_parallel_enja loader, vocabularies, batching
2. ``dlhack.model``      the LSTM encoder-decoder translator (fast CPU LSTM beside NStepLSTM)
3. ``dlhack.bleu``, ``dlhack.evaluation``   corpus BLEU, translating, the BLEU evaluator
4. ``dlhack.train``      training with Chainer's Trainer; data-parallel in a handful of lines
   ``dlhack.step_profile`` timing a training step, phase by phase, and what the phases say
   ``dlhack.report``     what rank 0 prints and writes; ``dlhack.atomic``: files written whole
   ``dlhack.snapshot``   snapshots that a killed run resumes from, checked before loading
   ``dlhack.translate``  ``dlhack translate``: a trained model on new sentences
5. ``dlhack.parallel``   every distributed idea: allreduce (naive, ring, MPI), the communicator,
                         multi-node optimizer, dataset scattering, evaluator, parameter server,
                         point-to-point and model parallelism, large-batch schedules
6. ``dlhack.figures``    the lessons' drawings and plots, one call per figure

Machinery that runs, supervises, grades or measures jobs lives in its own rooms:

- ``dlhack.jobs``        the job runtime under both of the next two: the mpiexec lookup, the
                         supervisor, the rank wrapper, run files, stacks, how each rank ended
- ``dlhack.tools``       the commands: doctor, ``dlhack run`` and its post-mortem, the
                         ``%%mpiexec`` magic, ``dlhack lab``, the lesson renderer
- ``dlhack.grade``       the autograder for the labs
- ``dlhack.bench``       benchmarks that print figures
- ``dlhack.cli``         the ``dlhack`` command
- ``dlhack.chainer_check``  a light stand-in for Chainer's import-time check (9 MB less)

``%load_ext dlhack`` in a notebook adds the ``%%mpiexec`` cell magic.
"""
import contextlib
import warnings

__version__ = "0.1.0"

from dlhack import chainer_check

# Chainer's own import-time check imports numpy.distutils and pkg_resources (9 MB, two
# deprecation warnings): a light one stands in (dlhack.chainer_check). Importing Chainer once
# here, quietly, keeps any warning off stderr (nbgrader scores a cell that writes to stderr 0).
# A broken Chainer install must not stop `dlhack doctor`, which exists to explain it.
chainer_check.install()
with warnings.catch_warnings(), contextlib.suppress(Exception):  # doctor reports the error
    warnings.simplefilter("ignore")
    import chainer  # noqa: F401


def load_ipython_extension(ipython):
    """Register the ``%%mpiexec`` cell magic (``%load_ext dlhack``)."""
    from dlhack.tools.magic import load_ipython_extension as _load

    _load(ipython)
