"""Run one slow-down's broken and fixed code side by side, in one job, beside one process.

    dlhack run -n 2 -- python compare.py 07_tiny_batch    # NN_name of NN_name_broken.py

Imports ``NN_name_broken.py`` and ``NN_name_fixed.py`` (each defines ``work``, and may define
``ROWS`` and ``UNIT``) and hands them to ``profiled.compare``: one process, 2 ranks, and the
broken script's extra rows, for each, in turn, over repeats. Rank 0 prints the table.
"""
import importlib
import sys

from profiled import compare

from dlhack.parallel import create_communicator

name = sys.argv[1]
broken = importlib.import_module(f"{name}_broken")
fixed = importlib.import_module(f"{name}_fixed")
compare(create_communicator("ring"), {"broken": broken.work, "fixed": fixed.work},
        rows=getattr(broken, "ROWS", None), unit=getattr(broken, "UNIT", "sentences/s"), name=name)
