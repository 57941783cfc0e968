# MUTANT: counts one LSTM state per layer
# EXPECT: two states per layer
def activation_bytes(batchsize, src_length, n_layers, n_units, attention=True):
    """Bytes the encoder rank sends to the decoder rank in one forward pass (float32).

    Args:
        batchsize: sentences in the batch (B).
        src_length: the longest source sentence of the batch (S).
        n_layers: LSTM layers of the encoder.
        n_units: hidden size (H).
        attention: whether the decoder attends over the encoder outputs.
    """
    ### BEGIN SOLUTION
    states = n_layers * batchsize * n_units  # hy and cy: (n_layers, B, H) each
    outputs = batchsize * src_length * n_units if attention else 0  # enc: (B, S, H)
    return 4 * (states + outputs)
    ### END SOLUTION
