"""Chapter 08 (Training), Exercise 2: the training loop (ch08.py holds Exercise 1 and imports this file)."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .. import train as train_module
from ..nn import Linear, ReLU, Sequential, cross_entropy
from ..optim import SGD, Adam
from ..variable import Variable
from .core import CheckFailed, exercise, expect_close, kit_code_refused, running


def _classifier(seed: int, kind: type = Sequential) -> Sequential:
    rng = np.random.default_rng(seed)
    return kind(Linear(2, 8, dtype=np.float64, rng=rng), ReLU(), Linear(8, 3, dtype=np.float64, rng=rng))


def _NO_GRAPH() -> None:  # noqa: N802 (stands for a weak reference to a graph that was never made)
    return None


class _Watched(Sequential):
    """A Sequential that notes, for each input it gets, whether that input requires grad, and how many
    graphs of earlier steps (not the last) are still alive when a forward starts (by their last node)."""

    def forward(self, input: Any) -> Any:
        notes = self.__dict__.setdefault("inputs_require_grad", [])
        outputs = self.__dict__.setdefault("outputs", [])
        alive = sum(output() is not None for output in outputs[:-1])
        self.__dict__["most_kept"] = max(self.__dict__.get("most_kept", 0), alive)
        notes.append(getattr(input, "requires_grad", False))
        if not self.training:
            self.__dict__["evaluated"] = True
        output = super().forward(input)
        last_node = getattr(output, "creator", None)  # the graph holds Functions, not the Variables
        outputs.append(weakref.ref(last_node) if last_node is not None else _NO_GRAPH)
        return output

    def forget(self) -> None:
        """Start the notes afresh (after a forward the check itself ran)."""
        for name in ("inputs_require_grad", "outputs", "most_kept", "evaluated"):
            self.__dict__.pop(name, None)


_INPUT_HINT = (
    "X is data, not a parameter: wrap it in a Variable that needs no grad (requires_grad=False); one that "
    "requires grad makes every backward compute a gradient for X, which nothing uses"
)


def _result_hint(got: Any) -> str:
    """What to change when train_losses gave something other than a list of floats."""
    if got is None:
        return "train_losses returned None: end it with return losses"
    if not isinstance(got, list):
        return f"return the list itself, not a {type(got).__name__} made from it"
    return "append loss.item() (a float), not the loss Variable"


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


_FIT_REFUSED = "write the loop yourself: the check refuses fit, which runs this loop for you"


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
        (_STALE, lambda ps: SGD(ps, lr=0.5), 3),
    ]
    for case, make_optimizer, steps in cases:
        model, twin = _classifier(1, _Watched), _classifier(1)
        if case == _STALE:  # a backward run before the loop: a model's .grad need not be zero at the start
            for net in (model, twin):
                cross_entropy(net(Variable(X, requires_grad=False)), y).backward()
            model.forget()
        optimizer = make_optimizer(list(model.parameters()))
        given_X, given_y = X.copy(), y.copy()  # the reference trains on X and y as they are
        with (
            running(f"{case}: train_losses"),
            kit_code_refused(f"{case}: train_losses", _FIT_REFUSED, (train_module, "fit")),
        ):
            got = train_losses(model, optimizer, given_X, given_y, steps)
        _expect_data_unchanged(case, given_X, given_y, X, y)
        expected = _reference_losses(twin, make_optimizer(list(twin.parameters())), X, y, steps)
        if not isinstance(got, list) or not all(isinstance(v, float) for v in got):
            raise CheckFailed(
                f"{case}: the result",
                "a list of Python floats",
                type(got).__name__ if not isinstance(got, list) else [type(v).__name__ for v in got],
                _result_hint(got),
            )
        hint = _STALE_HINT if case == _STALE else _losses_hint(got, expected, _same_parameters(model, twin))
        expect_close(f"{case}: the losses, one per step", np.array(got), np.array(expected), hint)
        _expect_one_forward_per_step(case, model, steps)
        for (name, param), reference in zip(model.named_parameters(), twin.parameters()):
            expect_close(
                f"{case}: parameter {name} after training",
                param.data,
                reference.data,
                _STALE_HINT
                if case == _STALE
                else f"all {steps} losses match, but the parameters after the loop differ: does every "
                "step, the last one too, end with the update optimizer.step() makes from that step's "
                "gradient?",
            )
            expect_close(
                f"{case}: parameter {name} after training, to float64's last digits",
                param.data,
                reference.data,
                "right to about 7 digits only: the data (or the loss) went through float32 on the way; "
                "give the model X as it is (Variable(X, requires_grad=False))",
                rtol=1e-12,
                atol=1e-15,
            )
        if any(model.__dict__.get("inputs_require_grad", ())):
            raise CheckFailed(
                f"{case}: the input train_losses gives the model",
                "a Variable that needs no grad",
                "a Variable that requires grad",
                _INPUT_HINT,
            )


_STALE = "SGD(lr=0.5), 3 steps, the model's .grad left over from a backward run before train_losses"
_STALE_HINT = (
    "the cases that start from zero gradients pass; here .grad held an earlier backward's gradients when "
    "train_losses started: does the update of step 1 use step 1's gradient alone?"
)


def _expect_data_unchanged(case: str, given_X: np.ndarray, given_y: np.ndarray, X: Any, y: Any) -> None:
    """The X and y train_losses was given are as they were: the caller's data is not the loop's to change."""
    for name, given, original in (("X", given_X, X), ("y", given_y, y)):
        if not np.array_equal(given, original):
            raise CheckFailed(
                f"{case}: {name} after train_losses",
                f"the {name} it was given, unchanged",
                f"{name} changed in place",
                f"train_losses changed the caller's {name}: standardize or shuffle a copy ({name}[perm] "
                "or X - X.mean(axis=0) make new arrays), never the data itself",
            )


def _same_parameters(model: Sequential, twin: Sequential) -> bool:
    return all(np.allclose(a.data, b.data) for a, b in zip(model.parameters(), twin.parameters()))


def _expect_one_forward_per_step(case: str, model: Any, steps: int) -> None:
    """One forward per step, and no step's graph kept alive past the next step."""
    forwards = len(model.__dict__.get("inputs_require_grad", ()))
    if forwards != steps:
        raise CheckFailed(
            f"{case}: forward passes through the model",
            f"{steps}, one per step",
            forwards,
            "one forward per step: the loss to append is the one backward runs through, loss.item() "
            "(another forward to read it costs a whole pass)",
        )
    if model.__dict__.get("evaluated"):
        raise CheckFailed(
            f"{case}: the model's mode while training",
            "training mode (model.training is True)",
            "evaluation mode (model.eval())",
            "train in training mode: after model.eval(), Dropout keeps every unit, so the model trained "
            "is not the one written; call model.train() before the loop",
        )
    if model.__dict__.get("most_kept", 0) >= 2:
        raise CheckFailed(
            f"{case}: graphs of earlier steps still alive",
            "none (each step's graph is freed once the next step starts)",
            f"{model.__dict__['most_kept']} at once",
            "something keeps every step's graph alive (losses.append(loss) keeps the loss Variable and "
            "all of its graph): append loss.item(), a float",
        )


def _losses_hint(got: list, expected: list, parameters_right: bool = False) -> str:
    """What the first loss that differs says about the loop ('' when the losses match)."""
    if len(got) != len(expected):
        return f"one loss per step: {len(expected)} steps, {len(got)} losses"
    differ = [k for k, (a, b) in enumerate(zip(got, expected)) if not np.isclose(a, b, rtol=1e-6, atol=1e-8)]
    if not differ:
        return ""
    if parameters_right:
        return (
            "the parameters after the loop are right but the losses are not: append each step's own "
            "loss.item(), taken before that step's update (not a running total or mean)"
        )
    if differ[0] == 0:
        return (
            "the loss of step 1 differs, and it comes before any update: is it nn.cross_entropy of the "
            "model's output for X and y, taken before that step's update?"
        )
    k = differ[0]
    return (
        f"the losses match up to step {k} and differ from step {k + 1}: the update of step {k} (or of an "
        "earlier step) is not the one optimizer.step() makes, once, from that step's own gradient"
    )
