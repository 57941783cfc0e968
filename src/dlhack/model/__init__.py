"""The model room: the LSTM encoder-decoder translator of lesson 1.

- ``lstm``     the fast LSTM: input projection hoisted, the recurrence as one Chainer function
- ``seq2seq``  the encoder-decoder with global attention; ``impl="nstep"`` is NStepLSTM beside it

The fast siblings (issue 27; ``dlhack bench model`` measures them against the readable ones):

- ``packing``      batches laid out time-major without padding
- ``fused_lstm``   a whole LSTM layer over a packed batch as one function
- ``fused_output`` the output layer and softmax cross-entropy as one function, in blocks of tokens
- ``fused``        ``FusedSeq2seq``: the same model and loss with a fused training step
- ``packed_adam``  ``PackedAdam``: Chainer's Adam, number for number, over packed buffers
- ``heap``         keep freed memory for the next step's arrays (no page faults)

``from dlhack.model import Seq2seq, convert``.
"""
from dlhack.model.seq2seq import BOS, EOS, PAD, Seq2seq, convert, pad

__all__ = ["BOS", "EOS", "PAD", "Seq2seq", "convert", "pad"]
