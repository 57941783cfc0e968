# MUTANT: transcript B called the same error on every rank, since every rank aborted
# EXPECT: the other ranks only stopped
def read_transcripts():
    """What happened in transcripts A, B and C, and on which ranks.

    Returns:
        ``{"A": {"what": ..., "ranks": [...]}, "B": ..., "C": ...}``
    """
    return {'A': {'what': 'same error on every rank', 'ranks': [0, 1, 2]}, 'B': {'what': 'same error on every rank', 'ranks': [0, 1, 2]}, 'C': {'what': 'hang', 'ranks': [0]}}
