"""A full training epoch on the digits-like set: varfunc, the same model in PyTorch, and plain NumPy.

Run as ``python -m benchmarks.training`` (rewrites the "training" section of RESULTS.md;
``--quick`` for a smoke run that only prints). Model: Linear(64, 128) - ReLU - Linear(128, 10), softmax
cross-entropy, SGD(lr=0.1, momentum=0.9), float32, batches of 32 (and of 256). All three start
from the same weights and see the same batches in the same order, so their losses agree too (the
table shows the mean loss of the first epoch). Time: the median of several epochs after a warm-up.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

import varfunc.data as data
import varfunc.nn as nn
import varfunc.optim as optim
from varfunc import Variable
from varfunc.train import fit

from .common import compare
from .results import publish

HIDDEN = 128
LR, MOMENTUM = 0.1, 0.9


def initial_weights(seed: int = 0) -> list:
    nn.manual_seed(seed)
    model = make_varfunc_model()
    return [p.data.copy() for p in model.parameters()]


def make_varfunc_model() -> nn.Sequential:
    return nn.Sequential(nn.Linear(64, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 10))


def epoch_batches(X: np.ndarray, y: np.ndarray, batch_size: int, seed: int) -> list:
    return list(data.Minibatches(X, y, batch_size=batch_size, seed=seed, variables=False))


# --- the three implementations: each returns a function that trains one epoch --------------------


def varfunc_trainer(weights: list):
    model = make_varfunc_model()
    model.load_state_dict(dict(zip(model.state_dict(), weights)))
    optimizer = optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)

    def epoch(batches: list) -> float:
        total = 0.0
        for xb, yb in batches:
            optimizer.zero_grad()
            loss = nn.cross_entropy(model(Variable(xb, requires_grad=False)), yb)
            loss.backward()
            optimizer.step()
            total += loss.item()
        return total / len(batches)

    return epoch


def varfunc_fit_trainer(weights: list, X: np.ndarray, y: np.ndarray, batch_size: int):
    """The same through fit() and Minibatches (its own shuffling: the losses differ slightly)."""
    model = make_varfunc_model()
    model.load_state_dict(dict(zip(model.state_dict(), weights)))
    optimizer = optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    batches = data.Minibatches(X, y, batch_size=batch_size, seed=0)

    def epoch(_batches: list) -> float:
        return fit(model, nn.cross_entropy, optimizer, batches, epochs=1, progress=False).epoch_losses[0]

    return epoch


def torch_trainer(torch, weights: list):
    model = torch.nn.Sequential(torch.nn.Linear(64, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 10))
    with torch.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(torch.from_numpy(w))
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    loss_fn = torch.nn.functional.cross_entropy

    def epoch(batches: list) -> float:
        total = 0.0
        for xb, yb in batches:
            optimizer.zero_grad()
            loss = loss_fn(model(torch.from_numpy(xb)), torch.from_numpy(yb))
            loss.backward()
            optimizer.step()
            total += loss.item()
        return total / len(batches)

    return epoch


def numpy_trainer(weights: list):
    """Forward, backward and SGD with momentum written out by hand."""
    params = [w.copy() for w in weights]  # W1 (128, 64), b1, W2 (10, 128), b2
    buffers = [None] * 4

    def epoch(batches: list) -> float:
        total = 0.0
        for xb, yb in batches:
            W1, b1, W2, b2 = params
            n = len(xb)
            h_pre = xb @ W1.T + b1
            h = np.maximum(h_pre, 0)
            scores = h @ W2.T + b2
            shifted = scores - scores.max(axis=1, keepdims=True)
            logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
            total += float(-logp[np.arange(n), yb].mean())
            g_scores = np.exp(logp)
            g_scores[np.arange(n), yb] -= 1
            g_scores /= n
            g_h = g_scores @ W2
            g_h[h_pre <= 0] = 0
            grads = [g_h.T @ xb, g_h.sum(axis=0), g_scores.T @ h, g_scores.sum(axis=0)]
            for i, (p, g) in enumerate(zip(params, grads)):
                if buffers[i] is None:
                    buffers[i] = g.copy()
                else:
                    buffers[i] *= MOMENTUM
                    buffers[i] += g
                p -= LR * buffers[i]
        return total / len(batches)

    return epoch


def with_threads(torch, threads: int, make_epoch):
    """An epoch function that runs PyTorch with the given number of threads, then restores it."""
    epoch = make_epoch()

    def run(batches: list) -> float:
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            return epoch(batches)
        finally:
            torch.set_num_threads(before)

    return run


def measure(trainers: dict, batches_per_epoch: list, repeats: int) -> dict:
    """{name: (median seconds per epoch, fastest epoch, mean loss of the first epoch)}.

    Every implementation first trains one epoch on batches_per_epoch[0] (the loss in the table),
    then common.compare times its epochs in blocks, two passes of one warm-up and repeats // 2
    timed epochs each. Taking turns epoch by epoch made the epoch after a 2-thread PyTorch one pay
    for PyTorch's still-spinning worker threads (varfunc's: 14 ms alone, 88 ms after PyTorch's).
    """
    epochs = {name: make() for name, make in trainers.items()}
    first = {name: epoch(batches_per_epoch[0]) for name, epoch in epochs.items()}
    calls = {}
    for name, epoch in epochs.items():
        later = itertools.cycle(batches_per_epoch[1:])  # every implementation sees the same sequence
        calls[name] = lambda epoch=epoch, later=later: epoch(next(later))
    times = compare(calls, rounds=repeats, passes=2)
    return {name: (median, fastest, first[name]) for name, (fastest, median) in times.items()}


def main(argv: list | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=16, help="timed epochs per implementation (even)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 timed epochs, print only")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.no_write = 2, True

    X, y = data.digits(seed=0)
    weights = initial_weights()
    try:
        import torch
    except ImportError:
        torch = None

    rows = []
    for batch_size in (32, 256):
        batches = [epoch_batches(X, y, batch_size, seed) for seed in range(args.repeats + 1)]
        trainers = {
            "varfunc": lambda: varfunc_trainer(weights),
            "varfunc fit()": lambda size=batch_size: varfunc_fit_trainer(weights, X, y, size),
            "hand-written NumPy": lambda: numpy_trainer(weights),
        }
        if torch is not None:
            threads = torch.get_num_threads()
            trainers[f"PyTorch ({threads} threads)"] = lambda: torch_trainer(torch, weights)
            if threads != 1:
                trainers["PyTorch (1 thread)"] = lambda: with_threads(
                    torch, 1, lambda: torch_trainer(torch, weights)
                )
        results = measure(trainers, batches, args.repeats)
        base = results["varfunc"][0]
        for name, (seconds, fastest, loss) in results.items():
            steps = len(batches[0])
            rows.append(
                f"| {batch_size} | {name} | {seconds * 1e3:.1f} | {fastest * 1e3:.1f} | "
                f"{seconds / steps * 1e6:.0f} | {seconds / base:.2f} | {loss:.4f} |"
            )
        print(f"batch {batch_size}: " + ", ".join(f"{k} {v[0] * 1e3:.1f} ms" for k, v in results.items()))

    versions = f"NumPy {np.__version__}" + (
        f", PyTorch {torch.__version__}"
        if torch is not None
        else ", PyTorch not installed (its rows are missing)"
    )
    body = "\n".join(
        [
            f"One epoch over the digits-like set ({len(X)} samples of 64 features, 10 classes): "
            f"Linear(64, {HIDDEN}) - ReLU - Linear({HIDDEN}, 10), cross-entropy, SGD(lr={LR}, "
            f"momentum={MOMENTUM}), float32, same initial weights and batch order everywhere "
            "(except `varfunc fit()`, whose Minibatches shuffle with their own seed). "
            f"Median of {args.repeats} epochs, each implementation's timed in two blocks of "
            f"{args.repeats // 2} after a warm-up epoch (so that no row pays for PyTorch's spinning "
            f"threads); {versions}. `varfunc fit()` is the same training through fit() and "
            "Minibatches (which make the Variables and keep the History). Time ratio: median over "
            "varfunc's written-out loop's median. On a shared 2-core machine PyTorch's multi-threaded "
            "rows swing widely from run to run (its threads wait on each other when another process "
            "holds a core); the 1-thread row is the steadier comparison.",
            "",
            "| batch | implementation | ms / epoch (median) | fastest | µs / step | time ratio | "
            "first-epoch loss |",
            "|---:|---|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
    return publish("training", "python -m benchmarks.training", body, write=not args.no_write)


if __name__ == "__main__":
    main()
