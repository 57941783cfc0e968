# MUTANT: transcript B: the ranks stopped by MPI_Abort counted as failing
# EXPECT: the other ranks only stopped
def read_transcripts():
    """What happened in transcripts A, B and C, and on which ranks.

    Returns:
        ``{"A": {"what": ..., "ranks": [...]}, "B": ..., "C": ...}``
    """
    return {'A': {'what': 'same error on every rank', 'ranks': [0, 1, 2]}, 'B': {'what': 'error on some ranks', 'ranks': [0, 1, 2]}, 'C': {'what': 'hang', 'ranks': [0]}}
