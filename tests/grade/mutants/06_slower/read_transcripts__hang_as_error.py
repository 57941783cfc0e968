# MUTANT: transcript C called an error (the job was killed) rather than a hang
# EXPECT: no error at all
def read_transcripts():
    """What happened in transcripts A, B and C, and on which ranks.

    Returns:
        ``{"A": {"what": ..., "ranks": [...]}, "B": ..., "C": ...}``
    """
    return {'A': {'what': 'same error on every rank', 'ranks': [0, 1, 2]}, 'B': {'what': 'error on some ranks', 'ranks': [2]}, 'C': {'what': 'error on some ranks', 'ranks': [0]}}
