"""Chapter 08 (Training): SGD with momentum, written by hand, and the training loop."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import train as train_module
from ..nn import Linear, ReLU, Sequential, cross_entropy
from ..optim import SGD, Adam
from ..variable import Variable
from .core import CheckFailed, exercise, expect_close, kit_code_refused, kits_own

_MOMENTUM_HINT = (
    "per parameter: buf = copy of g on the first step, then buf = momentum * buf + g; "
    "p.data -= lr * buf (one buffer per parameter, never the .grad array itself)"
)


def _momentum_case(make: Callable, case: str, shapes: list, lr: float, momentum: float, steps: int) -> None:
    """Run the student's optimizer and varfunc.optim.SGD side by side on the same gradients."""
    rng = np.random.default_rng(len(shapes) * 10 + steps)
    start = [rng.standard_normal(shape) for shape in shapes]
    mine = [Variable(a.copy(), requires_grad=True) for a in start]
    theirs = [Variable(a.copy(), requires_grad=True) for a in start]
    optimizer = make((p for p in mine), lr=lr, momentum=momentum)  # a generator, as model.parameters()
    borrowed = kits_own(type(optimizer), methods=("step",))
    if borrowed:
        raise CheckFailed(f"{case}: the optimizer's step", "your own step()", borrowed, _MOMENTUM_HINT)
    reference = SGD(theirs, lr=lr, momentum=momentum)
    for step in range(1, steps + 1):
        grads = [rng.standard_normal(shape) for shape in shapes]
        for opt, params in ((optimizer, mine), (reference, theirs)):
            opt.zero_grad()
            for param, grad in zip(params, grads):
                param.grad += grad  # what backward does: add into the zeroed .grad, in place
            if opt is reference:
                opt.step()
                continue
            with kit_code_refused(f"{case}: your step()", _MOMENTUM_HINT, (SGD, "step")):
                opt.step()  # a wrapper around the kit's SGD would pass otherwise
        for index, (got, expected) in enumerate(zip(mine, theirs)):
            expect_close(
                f"{case}: parameter {index} (shape {got.shape}) after step {step}",
                got.data,
                expected.data,
                _MOMENTUM_HINT,
            )


@exercise(
    "ch08.momentum_sgd",
    title="SGD with momentum: a class with step() and zero_grad()",
    points=3,
    needs=("MomentumSGD",),
)
def check_momentum_sgd(ns: dict) -> None:
    make = ns["MomentumSGD"]
    _momentum_case(make, "one parameter, lr=0.1, momentum=0.9", [(3,)], 0.1, 0.9, 4)
    _momentum_case(make, "two parameters (a matrix and a scalar), momentum=0.5", [(2, 3), ()], 0.05, 0.5, 3)
    _momentum_case(make, "momentum=0 (plain SGD)", [(4,)], 0.2, 0.0, 2)
    params = [Variable(np.ones(2), requires_grad=True), Variable(np.ones((2, 2)), requires_grad=True)]
    optimizer = make(params, lr=0.1, momentum=0.9)
    for param in params:
        param.grad += 3.0
    optimizer.zero_grad()
    for index, param in enumerate(params):
        expect_close(
            f"zero_grad(): the gradient of parameter {index}",
            param.grad,
            np.zeros(param.shape),
            "zero_grad sets every parameter's .grad to zeros (p.grad[...] = 0)",
        )


def _classifier(seed: int) -> Sequential:
    rng = np.random.default_rng(seed)
    return Sequential(
        Linear(2, 8, dtype=np.float64, rng=rng), ReLU(), Linear(8, 3, dtype=np.float64, rng=rng)
    )


def _reference_losses(model: Sequential, optimizer: object, X: np.ndarray, y: np.ndarray, steps: int) -> list:
    x = Variable(X, requires_grad=False)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


_LOOP_HINT = (
    "each step: optimizer.zero_grad(); loss = ...; loss.backward(); optimizer.step(); keep loss.item()"
)


@exercise(
    "ch08.training_loop",
    title="The training loop: zero_grad, forward, backward, step",
    points=2,
    needs=("train_losses",),
)
def check_training_loop(ns: dict) -> None:
    train_losses = ns["train_losses"]
    rng = np.random.default_rng(8)
    X = rng.standard_normal((24, 2))
    y = rng.integers(0, 3, 24)
    cases = [
        ("SGD(lr=0.5, momentum=0.9), 4 steps", lambda ps: SGD(ps, lr=0.5, momentum=0.9), 4),
        ("Adam(lr=0.05), 5 steps", lambda ps: Adam(ps, lr=0.05), 5),
        ("0 steps", lambda ps: SGD(ps, lr=0.1), 0),
    ]
    for case, make_optimizer, steps in cases:
        model, twin = _classifier(1), _classifier(1)
        optimizer = make_optimizer(list(model.parameters()))
        with kit_code_refused(f"{case}: train_losses", _LOOP_HINT, (train_module, "fit")):
            got = train_losses(model, optimizer, X, y, steps)
        expected = _reference_losses(twin, make_optimizer(list(twin.parameters())), X, y, steps)
        if not isinstance(got, list) or not all(isinstance(v, float) for v in got):
            raise CheckFailed(
                f"{case}: the result",
                "a list of Python floats",
                type(got).__name__ if not isinstance(got, list) else [type(v).__name__ for v in got],
                "append loss.item() (a float), not the loss Variable",
            )
        expect_close(f"{case}: the losses, one per step", np.array(got), np.array(expected), _LOOP_HINT)
        for (name, param), reference in zip(model.named_parameters(), twin.parameters()):
            expect_close(f"{case}: parameter {name} after training", param.data, reference.data, _LOOP_HINT)
