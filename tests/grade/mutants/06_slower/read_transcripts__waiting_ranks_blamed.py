# MUTANT: transcript C: the waiting ranks named instead of the one that skipped the allreduce
# EXPECT: went past the Allreduce
def read_transcripts():
    """What happened in transcripts A, B and C, and on which ranks.

    Returns:
        ``{"A": {"what": ..., "ranks": [...]}, "B": ..., "C": ...}``
    """
    return {'A': {'what': 'same error on every rank', 'ranks': [0, 1, 2]}, 'B': {'what': 'error on some ranks', 'ranks': [2]}, 'C': {'what': 'hang', 'ranks': [1, 2]}}
