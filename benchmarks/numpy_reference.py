"""Hand-written NumPy forward and backward code: the fair reference a student would write.

No graph, no Variables: every derivative is written out by hand, as on paper. The benchmarks time
varfunc against these, and tests/test_benchmarks_smoke.py checks that varfunc's MLP step gives the
same loss and the same updated weights as ``mlp_step`` here.
"""

from __future__ import annotations

import numpy as np

# --- (a) a chain of scalar steps y = y * 1.0001 + 0.5 ---------------------------------------------

SCALE = 1.0001
SHIFT = 0.5


def chain_forward(y, steps: int):
    """steps of y = y * SCALE + SHIFT, on whatever y is: a 0-d array, a Variable or a tensor."""
    for _ in range(steps):
        y = y * SCALE + SHIFT
    return y


def chain_forward_backward(steps: int, x: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Run the chain forward on a 0-d array, then backward by the chain rule; return (y, dy/dx)."""
    y = chain_forward(np.array(x), steps)
    # Backward: each step multiplies the gradient by its local derivative d(y * s + c)/dy = s.
    grad = np.array(1.0)
    for _ in range(steps):
        grad = grad * SCALE
    return y, grad


# --- (b) an MLP training step: linear, relu, linear, log-softmax, negative log-likelihood ---------


def init_mlp(sizes: tuple[int, int, int], seed: int = 0, dtype=np.float32) -> dict[str, np.ndarray]:
    """Weights stored (in, out) so the forward pass is x @ W + b; PyTorch's Linear init range."""
    rng = np.random.default_rng(seed)
    n_in, n_hidden, n_out = sizes
    bound1, bound2 = 1 / np.sqrt(n_in), 1 / np.sqrt(n_hidden)
    return {
        "W1": rng.uniform(-bound1, bound1, (n_in, n_hidden)).astype(dtype),
        "b1": rng.uniform(-bound1, bound1, n_hidden).astype(dtype),
        "W2": rng.uniform(-bound2, bound2, (n_hidden, n_out)).astype(dtype),
        "b2": rng.uniform(-bound2, bound2, n_out).astype(dtype),
    }


def make_batch(batch: int, n_in: int, n_out: int, seed: int = 1, dtype=np.float32):
    """Random inputs and integer class labels."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, n_in)).astype(dtype)
    labels = rng.integers(0, n_out, batch)
    return x, labels


def mlp_step(params: dict[str, np.ndarray], x: np.ndarray, labels: np.ndarray, lr: float) -> float:
    """One SGD step on the mean cross-entropy; updates params in place and returns the loss."""
    W1, b1, W2, b2 = params["W1"], params["b1"], params["W2"], params["b2"]
    batch = x.shape[0]
    rows = np.arange(batch)

    # forward
    h = x @ W1 + b1
    a = np.maximum(h, 0)
    logits = a @ W2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -log_probs[rows, labels].mean()

    # backward: d loss / d logits = (softmax - one_hot) / batch
    d_logits = np.exp(log_probs)
    d_logits[rows, labels] -= 1
    d_logits /= batch
    d_W2 = a.T @ d_logits
    d_b2 = d_logits.sum(axis=0)
    d_a = d_logits @ W2.T
    d_h = d_a * (h > 0)
    d_W1 = x.T @ d_h
    d_b1 = d_h.sum(axis=0)

    # SGD update
    W1 -= lr * d_W1
    b1 -= lr * d_b1
    W2 -= lr * d_W2
    b2 -= lr * d_b2
    return float(loss)
