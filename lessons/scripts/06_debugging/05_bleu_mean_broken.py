"""Bug (e): BLEU averaged over ranks. The mean of per-rank BLEU is not corpus BLEU.

    dlhack run -n 2 -- python 05_bleu_mean_broken.py      # differs from...
    dlhack run --single -- python 05_bleu_mean_broken.py  # ...the one-process score

Corpus BLEU adds up n-gram matches and lengths over every sentence first, then takes a
geometric mean and a brevity penalty: it is not linear, so no average of shard scores gives it.
"""
from bleu_data import hypotheses_and_references

from dlhack.bleu import corpus_bleu
from dlhack.parallel import create_communicator, scatter_index

comm = create_communicator("ring")
hyps, refs = hypotheses_and_references()
mine = scatter_index(len(refs), comm)  # this rank's sentences (exact, contiguous shards)
bleu = corpus_bleu([hyps[i] for i in mine], [refs[i] for i in mine])
bleu = comm.allreduce_obj(bleu) / comm.size  # BUG: the mean of the ranks' BLEU
if comm.rank == 0:
    print(f"BLEU {bleu:.2f} ({len(refs)} sentences, {comm.size} ranks)")
