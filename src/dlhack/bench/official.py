"""Chainer 7.8.1's own seq2seq example, loaded from a checkout by its path, for side-by-side runs.

    dlhack bench model --official CHECKOUT/examples/seq2seq/seq2seq.py

``CHECKOUT`` is Chainer's repository at tag v7.8.1 (``git clone --depth 1 -b v7.8.1`` of it).
The example's code is never copied into this project: ``load_example`` imports the file from the
path given, and ``official_model`` builds its ``Seq2seq`` (NStepLSTM encoder and decoder,
dropout 0.1, no attention), which ``dlhack.bench.model`` then trains with Adam on the same
batches as ours. The file imports nltk (for BLEU) and progressbar (for loading files) at the
top; its model uses neither, so when they are not installed a placeholder module stands in for
each while the file is imported, and is removed afterwards.
"""
import contextlib
import importlib.util
import sys
import types

PLACEHOLDERS = ("nltk", "nltk.translate", "nltk.translate.bleu_score", "progressbar")


@contextlib.contextmanager
def placeholders(names=PLACEHOLDERS):
    """Empty modules under ``names`` that cannot be imported, for the length of the block."""
    tops = {name.split(".")[0] for name in names}
    missing = {top for top in tops
               if top not in sys.modules and importlib.util.find_spec(top) is None}
    added = []
    for name in names:
        if name.split(".")[0] not in missing:
            continue
        sys.modules[name] = types.ModuleType(name)
        added.append(name)
        parent, _, child = name.rpartition(".")
        if parent in sys.modules:
            setattr(sys.modules[parent], child, sys.modules[name])
    try:
        yield added
    finally:
        for name in added:
            del sys.modules[name]


def load_example(path):
    """The example's module, imported from ``path`` (its ``main`` is not run)."""
    spec = importlib.util.spec_from_file_location("chainer_example_seq2seq", path)
    if spec is None:
        raise FileNotFoundError(f"no Python file at {path}")
    module = importlib.util.module_from_spec(spec)
    with placeholders():
        spec.loader.exec_module(module)
    if not hasattr(module, "Seq2seq"):
        raise ValueError(f"{path} defines no Seq2seq: is it examples/seq2seq/seq2seq.py?")
    return module


def official_model(path, n_layers, n_source_vocab, n_target_vocab, n_units):
    """The example's ``Seq2seq(n_layers, n_source_vocab, n_target_vocab, n_units)``."""
    return load_example(path).Seq2seq(n_layers, n_source_vocab, n_target_vocab, n_units)
