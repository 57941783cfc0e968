"""Fix (e): gather every rank's hypotheses and references, score once (gather_corpus_bleu).

    dlhack run -n 2 -- python 05_bleu_mean_fixed.py      # the same score as with --single
"""
from bleu_data import hypotheses_and_references

from dlhack.parallel import create_communicator, gather_corpus_bleu, scatter_index

comm = create_communicator("ring")
hyps, refs = hypotheses_and_references()
mine = scatter_index(len(refs), comm)  # this rank's sentences (exact, contiguous shards)
bleu = gather_corpus_bleu([hyps[i] for i in mine], [refs[i] for i in mine], comm)  # FIX
if comm.rank == 0:
    print(f"BLEU {bleu:.2f} ({len(refs)} sentences, {comm.size} ranks)")
