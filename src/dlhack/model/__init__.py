"""The model room: the LSTM encoder-decoder translator of lesson 1.

- ``lstm``     the fast LSTM: input projection hoisted, the recurrence as one Chainer function
- ``seq2seq``  the encoder-decoder with global attention; ``impl="nstep"`` is NStepLSTM beside it

``from dlhack.model import Seq2seq, convert``.
"""
from dlhack.model.seq2seq import BOS, EOS, PAD, Seq2seq, convert, pad

__all__ = ["BOS", "EOS", "PAD", "Seq2seq", "convert", "pad"]
