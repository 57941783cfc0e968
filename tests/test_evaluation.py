"""Translation quality (dlhack.evaluation): greedy translation in batches of any size gives the
same sentences, and BLEU scored through a communicator of one rank equals BLEU scored alone."""
import chainer
import numpy as np
import pytest
from mpi4py import MPI

from dlhack.bleu import corpus_bleu
from dlhack.corpus import default_corpus
from dlhack.evaluation import BleuEvaluator, bleu_of, translate_ids, translate_sentences
from dlhack.model.seq2seq import Seq2seq
from dlhack.parallel import create_communicator


@pytest.fixture(scope="module")
def setup():
    corpus = default_corpus(n_train=300, n_dev=12, n_test=5)
    np.random.seed(0)
    model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=16, n_layers=1,
                    dropout=0.0)
    examples = [(pair, corpus.tgt_vocab.decode(pair[1])) for pair in corpus.dev]
    return corpus, model, examples


def test_the_batch_size_does_not_change_the_translations(setup):
    corpus, model, _ = setup
    sources = [src for src, _ in corpus.dev]
    whole = translate_ids(model, sources, batchsize=128, max_length=8)
    pieces = translate_ids(model, sources, batchsize=5, max_length=8)
    assert [y.tolist() for y in pieces] == [y.tolist() for y in whole]
    assert len(whole) == len(sources)


def test_sentences_come_back_as_tokens_without_specials(setup):
    corpus, model, _ = setup
    out = translate_sentences(model, ["tom ate an apple .", ["where", "is", "the", "cat", "?"]],
                              corpus.src_vocab, corpus.tgt_vocab, max_length=6)
    assert len(out) == 2 and all(isinstance(t, str) for tokens in out for t in tokens)
    assert not {"<s>", "<eos>"} & {t for tokens in out for t in tokens}


def test_bleu_through_one_rank_equals_bleu_alone(setup):
    corpus, model, examples = setup
    alone = bleu_of(model, examples, corpus.tgt_vocab, max_length=8)
    hyps = [corpus.tgt_vocab.decode(y) for y in translate_ids(
        model, [pair[0] for pair, _ in examples], max_length=8)]
    assert alone == corpus_bleu(hyps, [ref for _, ref in examples])
    comm = create_communicator("ring", mpi_comm=MPI.COMM_SELF.Dup())
    assert bleu_of(model, examples, corpus.tgt_vocab, comm=comm, max_length=8) == alone
    with chainer.using_config("train", False):
        reported = BleuEvaluator(model, examples, corpus.tgt_vocab, max_length=8)()
    assert reported == alone
