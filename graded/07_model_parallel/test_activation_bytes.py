"""Exercise 2 of lab 07: ``activation_bytes(batchsize, src_length, n_layers, n_units,
attention)``: what rank 0 sends forward per step (rank 1 sends as much back)."""
import numpy as np
import pytest
from labtools import drawn

CASES = [  # (batchsize, src_length, n_layers, n_units, attention)
    (5, 8, 2, 16, True), (64, 20, 2, 128, True), (64, 20, 3, 256, False), (1, 1, 1, 1, True)]


def reference(batchsize, src_length, n_layers, n_units, attention):
    states = 2 * n_layers * batchsize * n_units  # hy and cy
    outputs = batchsize * src_length * n_units if attention else 0  # enc, for attention
    return 4 * (states + outputs)  # float32


def drawn_cases(seed):
    rng = np.random.RandomState(seed)
    return [(int(rng.randint(1, 257)), int(rng.randint(1, 101)), int(rng.randint(1, 9)),
             int(rng.randint(1, 1025)), bool(rng.randint(2))) for _ in range(50)]


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=30)
def test_bytes_of_the_encoder_states(submission, observe, seed):
    """hy, cy (n_layers, B, H) and, with attention only, enc (B, S, H), in float32: chosen
    sizes, then 50 drawn ones."""
    got = [submission.activation_bytes(*case) for case in CASES + drawn_cases(seed)]
    observe(got=[int(g) if isinstance(g, (int, np.integer)) else repr(g) for g in got])


def check_bytes_of_the_encoder_states(obs, run):
    for i, (case, got) in enumerate(zip(CASES + drawn_cases(run.seed), obs["got"])):
        want = reference(*case)
        b, s, n_layers, h, attention = case
        hint = ""
        if not isinstance(got, int):
            hint = ": return a whole number of bytes (an int)"
        elif got == want // 4:
            hint = ": that counts elements; each float32 is 4 bytes"
        elif not attention and got == reference(b, s, n_layers, h, True):
            hint = (": without attention the decoder never reads enc, so the split model "
                    "does not send it")
        elif got == 2 * want:
            hint = (": twice the reference: count float32 numbers at 4 bytes each, and only what "
                    "goes forward (the gradients that come back are not part of it)")
        elif attention and got == 4 * (2 * n_layers * b * h + b * (s + 1) * h):
            hint = ": enc has S positions, one per source token (no EOS position)"
        elif not attention and got == 0:
            hint = ": without attention rank 0 still sends hy and cy, where the decoder starts"
        elif got == 4 * (2 * n_layers * s * h + (b * s * h if attention else 0)):
            hint = ": hy and cy are (n_layers, B, H): B sentences, not S positions"
        elif got == 4 * (n_layers * b * h + (b * s * h if attention else 0)):
            hint = ": the LSTM has two states per layer, h and c, and both are sent"
        if got != want:
            return (f"activation_bytes(batchsize={b}, src_length={s}, n_layers={n_layers}, "
                    f"n_units={h}, attention={attention}) = {got}, expected {want}{hint}"
                    + (drawn(run.seed) if i >= len(CASES) else ""))
    return None
