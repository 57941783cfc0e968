"""Transcript A of lab 6: every rank raises the same error (a missing file, not about ranks).

    dlhack run -n 3 --timeout 20 -- python same_error.py
"""
import json

from mpi4py import MPI

comm = MPI.COMM_WORLD
with open("settings.json") as f:  # no such file here: the same FileNotFoundError on every rank
    settings = json.load(f)
comm.Barrier()
