# MUTANT: transcript A read as one rank's error: only the first traceback counted
# EXPECT: count the tracebacks
# FAST
def read_transcripts():
    """What happened in transcripts A, B and C, and on which ranks.

    Returns:
        ``{"A": {"what": ..., "ranks": [...]}, "B": ..., "C": ...}``
    """
    return {'A': {'what': 'error on some ranks', 'ranks': [2]}, 'B': {'what': 'error on some ranks', 'ranks': [2]}, 'C': {'what': 'hang', 'ranks': [0]}}
