"""What rank 0 writes for a training run (dlhack.report): the model and its vocabularies saved and
loaded back whole, the loss/BLEU plot, also for a run too short to have logged anything, and
the live plot, drawn with nothing imported once training runs."""
import subprocess
import sys
import time
import types

import numpy as np

from dlhack.corpus import default_corpus
from dlhack.model.seq2seq import Seq2seq
from dlhack.report import LivePlot, load_model, plot_log, save_model

PNG = b"\x89PNG\r\n\x1a\n"


def test_a_saved_model_loads_back_with_its_vocabularies(tmp_path):
    corpus = default_corpus(n_train=200, n_dev=5, n_test=5)
    model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=8, n_layers=2,
                    dropout=0.0, attention=False)
    config = types.SimpleNamespace(units=8, layers=2, attention=False)
    save_model(tmp_path, model, config, corpus.src_vocab, corpus.tgt_vocab)
    loaded, src_vocab, tgt_vocab = load_model(tmp_path / "model.npz")
    assert (src_vocab.words, tgt_vocab.words) == (corpus.src_vocab.words, corpus.tgt_vocab.words)
    want = dict(model.namedparams())
    got = dict(loaded.namedparams())
    assert sorted(got) == sorted(want)
    for name, param in want.items():
        np.testing.assert_array_equal(got[name].array, param.array, err_msg=name)
    sources = [src for src, _ in corpus.dev[:3]]
    assert [y.tolist() for y in loaded.translate(sources)] == \
        [y.tolist() for y in model.translate(sources)]


LOG = [{"epoch": 1, "main/loss": 3.0, "validation/main/loss": 3.2, "validation/bleu": 4.0},
       {"epoch": 2, "main/loss": 2.0, "validation/main/loss": 2.5, "validation/bleu": 9.0}]


def test_the_plot_is_written_with_or_without_a_log(tmp_path):
    plot_log(LOG, tmp_path / "training.png")
    plot_log([], tmp_path / "empty.png")
    for name in ("training.png", "empty.png"):
        assert (tmp_path / name).read_bytes()[:8] == PNG


# Run in a fresh interpreter: matplotlib may already be imported in this one.
TRAIN_WITH_REPORTS = """
import sys, types
import chainer, chainer.links as L, numpy as np
from dlhack import report
data = [(np.ones(2, np.float32), np.int32(k % 2)) for k in range(16)]
model = L.Classifier(L.Linear(2, 2))
optimizer = chainer.optimizers.SGD()
optimizer.setup(model)
updater = chainer.training.StandardUpdater(chainer.iterators.SerialIterator(data, 4), optimizer)
trainer = chainer.training.Trainer(updater, (2, "epoch"), out=sys.argv[1])  # 4 steps an epoch
report.attach(trainer, types.SimpleNamespace(iterations=None), progress=False)
before = set(sys.modules)
trainer.run()
print(sorted(m for m in set(sys.modules) - before if m.startswith("matplotlib")))
"""


def test_rank_0_reports_draw_every_epoch_and_import_nothing_of_matplotlib_while_training(
        tmp_path):
    # What is imported during training is left out of dlhack train's gc.freeze() and is
    # scanned by every collection in step, on rank 0 alone.
    proc = subprocess.run([sys.executable, "-c", TRAIN_WITH_REPORTS, str(tmp_path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[-1] == "[]", proc.stdout[-2000:]
    assert (tmp_path / "training.png").read_bytes()[:8] == PNG  # drawn at the epochs' ends


def test_the_live_plot_keeps_to_its_share_of_the_time(tmp_path):
    plot = LivePlot(budget=0.5)
    trainer = types.SimpleNamespace(out=str(tmp_path),
                                    get_extension=lambda name: types.SimpleNamespace(log=LOG))
    plot(trainer)  # the first epoch's end draws
    assert plot.drawings == 1 and plot.cost > 0
    assert (tmp_path / "training.png").read_bytes()[:8] == PNG
    plot(trainer)  # at once again: drawing now would take more than half the time
    assert plot.drawings == 1
    time.sleep(plot.cost / plot.budget)
    plot(trainer)
    assert plot.drawings == 2
