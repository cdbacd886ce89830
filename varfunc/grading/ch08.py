"""Chapter 08 (Training): SGD with momentum, written by hand (the training loop: ch08_loop.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..optim import SGD
from ..variable import Variable
from .core import CheckFailed, exercise, expect_close, expect_equal, kit_code_refused, kits_own, running

_MOMENTUM_HINT = (
    "per parameter: buf = copy of g on the first step, then buf = momentum * buf + g; "
    "p.data -= lr * buf (one buffer per parameter, never the .grad array itself)"
)


def _momentum_case(
    make: Callable,
    case: str,
    shapes: list,
    lr: float,
    momentum: float,
    steps: int,
    as_list: bool = False,
    zero: tuple = (),
    dtype: Any = np.float64,
) -> None:
    """The student's optimizer and optim.SGD side by side on the same gradients (params: a generator);
    zero: (step, index), a step where that parameter's gradient is all zero."""
    rng = np.random.default_rng(len(shapes) * 10 + steps)
    start = [rng.standard_normal(shape).astype(dtype) for shape in shapes]
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {}  # rounded in another order
    mine = [Variable(a.copy(), requires_grad=True) for a in start]
    theirs = [Variable(a.copy(), requires_grad=True) for a in start]
    with running(f"{case}: MomentumSGD(params, lr={lr}, momentum={momentum})"):
        optimizer = make(list(mine) if as_list else (p for p in mine), lr=lr, momentum=momentum)
    borrowed = kits_own(type(optimizer), methods=("step",))
    if borrowed:
        raise CheckFailed(f"{case}: the optimizer's step", "your own step()", borrowed, _MOMENTUM_HINT)
    reference = SGD(theirs, lr=lr, momentum=momentum)
    history: list = []  # the gradients of every step, and the student's parameters after it
    seen: list = []
    refused = f"{case}: your step()"
    for step in range(1, steps + 1):
        grads = [
            np.zeros(s, dtype) if zero == (step, k) else rng.standard_normal(s).astype(dtype)
            for k, s in enumerate(shapes)
        ]
        with running(f"{case}: step {step}"):
            _one_step(optimizer, mine, grads, refused)
        _one_step(reference, theirs, grads)
        history.append(grads)
        seen.append([p.data.copy() for p in mine])  # copies: later steps change p.data in place
        for index, expected in enumerate(theirs):
            try:
                expect_close(
                    f"{case}: parameter {index} (shape {expected.shape}) after step {step}",
                    seen[-1][index],
                    expected.data,
                    **tolerance,
                )
            except CheckFailed as failure:
                _more_steps(optimizer, mine, rng, shapes, history, seen, max(steps, step + 2), refused)
                grads_so_far, got = [g[index] for g in history], [p[index] for p in seen]
                failure.hint = (
                    _ZERO_HINT
                    if zero == (step, index)
                    else _momentum_hint(start[index], grads_so_far, lr, momentum, got)
                )
                raise
    if dtype != np.float64:
        return
    for index, expected in enumerate(theirs):
        expect_close(
            f"{case}: parameter {index} after step {steps}, to float64's last digits",
            seen[-1][index],
            expected.data,
            "close to optim.SGD's parameter but not equal: something was rounded to float32 (a cast, a "
            "float32 constant or buffer); keep the parameters' dtype throughout",
            rtol=1e-12,
            atol=1e-14,
        )


def _more_steps(
    optimizer: Any, params: list, rng: Any, shapes: list, history: list, seen: list, until: int, refused: str
) -> None:
    """Steps after the one that failed, until there are until of them (to tell mistakes apart that give
    the same parameters at that step); stops at the first error."""
    while len(seen) < until:
        grads = [rng.standard_normal(shape) for shape in shapes]
        try:
            _one_step(optimizer, params, grads, refused)
        except Exception:  # noqa: BLE001 - the student's code may raise anything: the steps so far do
            return
        history.append(grads)
        seen.append([p.data.copy() for p in params])


_ZERO_HINT = (
    "this parameter's gradient was all zero at this step, and the parameter did not move as optim.SGD "
    "moves it: momentum keeps moving a parameter whose gradient is zero (buf = momentum * buf + 0)"
)

# What a parameter that follows a common wrong rule says about the mistake (see _after_steps).
_MOMENTUM_MISTAKES = {
    "plain": "the parameter moved as plain SGD moves it (p -= lr * g): the update must use the buffer",
    "dampened": "this is a dampened average, momentum * buf + (1 - momentum) * g: the rule adds the "
    "whole gradient to momentum * buf",
    "old buffer": "each update used the buffer from before that step's gradient was added: update the "
    "buffer first, then the parameter with it",
    "never updated": "the buffer stayed the first step's gradient: every later step must update it, with "
    "momentum and that step's gradient",
    "piled up": "the gradients piled up from step to step: zero_grad() must set every .grad to zero",
    "aliased": "the buffer is the .grad array itself, which zero_grad() wipes: make the first buffer a "
    "copy of the gradient",
    "sign": "the parameter moved up the gradient: subtract lr * buf",
    "nesterov": "this is Nesterov's momentum (g + momentum * buf in the update): the exercise asks for "
    "the plain rule",
}


def _momentum_hint(start: np.ndarray, grads: list, lr: float, momentum: float, got: list) -> str:
    """The one mistake whose rule gives the parameter got[k] after step k + 1, at every step seen (not
    only at the step that failed, where two rules can give one number); else the rule itself."""
    matching = [
        says
        for mistake, says in _MOMENTUM_MISTAKES.items()
        if all(
            np.shape(mine) == np.shape(after) and np.allclose(mine, after, rtol=1e-6, atol=1e-8)
            for mine, after in zip(got, _after_steps(mistake, start, grads, lr, momentum))
        )
    ]
    return matching[0] if len(matching) == 1 else _MOMENTUM_HINT


def _after_steps(mistake: str, start: np.ndarray, grads: list, lr: float, momentum: float) -> list:
    """A parameter after each step, one step per gradient, by a momentum rule with this mistake in it."""
    p, buf, total, after = start.copy(), None, 0.0, []
    for g in grads:
        if mistake == "piled up":  # zero_grad() did nothing: backward adds into the old .grad
            total = g = total + g
        old = buf
        if buf is None:
            buf = g.copy()
        elif mistake == "aliased":  # .grad zeroed, g added, then buf *= m; buf += p.grad (buf itself)
            buf = 2 * momentum * g
        elif mistake != "never updated":
            buf = momentum * buf + (1 - momentum if mistake == "dampened" else 1) * g
        if mistake == "plain":
            p = p - lr * g
        elif mistake == "old buffer" and old is not None:
            p = p - lr * old
        elif mistake == "nesterov":
            p = p - lr * (g + momentum * buf)
        else:
            p = p + lr * buf if mistake == "sign" else p - lr * buf
        after.append(p)
    return after


def _one_step(optimizer: Any, params: list, grads: list, refused: str = "") -> None:
    """zero_grad(), the gradients added into .grad, step(); refused: the case that refuses SGD.step."""
    optimizer.zero_grad()
    for param, grad in zip(params, grads):
        param.grad += grad  # what backward does: add into the zeroed .grad, in place
    if not refused:
        optimizer.step()
        return
    with kit_code_refused(refused, _MOMENTUM_HINT, (SGD, "step")):
        optimizer.step()  # a wrapper around the kit's SGD would pass otherwise


_SAME_SHAPE = "two parameters of the same shape (3,), different gradients, momentum=0.9"


@exercise(
    "ch08.momentum_sgd",
    title="SGD with momentum: a class with step() and zero_grad()",
    points=3,
    needs=("MomentumSGD",),
)
def check_momentum_sgd(ns: dict) -> None:
    make = ns["MomentumSGD"]
    _first_momentum_case(make)
    _momentum_case(make, "two parameters (a matrix and a scalar), momentum=0.5", [(2, 3), ()], 0.05, 0.5, 3)
    try:
        _momentum_case(make, _SAME_SHAPE, [(3,), (3,)], 0.1, 0.9, 4)
    except CheckFailed as failure:
        if failure.case.startswith(f"{_SAME_SHAPE}: parameter"):
            failure.hint = (
                "the cases with parameters of different shapes passed: does each parameter keep a "
                "buffer of its own, or do two parameters of one shape share one?"
            )
        raise
    _momentum_case(make, "momentum=0 (plain SGD)", [(4,)], 0.2, 0.0, 2)
    zero = "two parameters, momentum=0.9, the gradient of parameter 1 all zero at step 3"
    _momentum_case(make, zero, [(3,), (2,)], 0.1, 0.9, 4, zero=(3, 1))
    _momentum_case(
        make,
        "float32 parameters (as nn.Linear makes them), momentum=0.9",
        [(3,), (2, 2)],
        0.1,
        0.9,
        3,
        dtype=np.float32,
    )
    _check_two_optimizers(make)
    _check_a_new_optimizer_starts_afresh(make)
    _check_zero_grad(make)
    _check_defaults_and_in_place(make)
    _check_grad_left_alone(make)


_TWO = "two MomentumSGD alive at once, lr=0.1, momentum=0.9 and lr=0.05, momentum=0.5, stepped in turn"
_TWO_HINT = (
    "one optimizer at a time gives the right parameters, two alive at once do not: does each MomentumSGD "
    "keep its parameters, buffers, lr and momentum on self, or are some on the class, shared by all?"
)


def _check_two_optimizers(make: Callable) -> None:
    """Two optimizers with parameters of the same shapes, each step of one followed by one of the other."""
    rng = np.random.default_rng(77)
    shapes, settings = [(3,), (2, 2)], [(0.1, 0.9), (0.05, 0.5)]
    starts = [[rng.standard_normal(shape) for shape in shapes] for _ in settings]
    mine = [[Variable(a.copy(), requires_grad=True) for a in start] for start in starts]
    theirs = [[Variable(a.copy(), requires_grad=True) for a in start] for start in starts]
    with running(f"{_TWO}: making both"):
        optimizers = [make(list(ps), lr=lr, momentum=m) for ps, (lr, m) in zip(mine, settings)]
    references = [SGD(ps, lr=lr, momentum=m) for ps, (lr, m) in zip(theirs, settings)]
    for step in range(1, 4):
        for k in (0, 1):
            grads = [rng.standard_normal(shape) for shape in shapes]
            with running(f"{_TWO}: step {step} of optimizer {k + 1}"):
                _one_step(optimizers[k], mine[k], grads, f"{_TWO}: your step()")
            _one_step(references[k], theirs[k], grads)
        for k in (0, 1):
            for index, (got, expected) in enumerate(zip(mine[k], theirs[k])):
                case = f"{_TWO}: parameter {index} of optimizer {k + 1} after step {step}"
                expect_close(case, got.data.copy(), expected.data, _TWO_HINT)


_GENERATOR_HINT = (
    "with a list of the same parameters it passes, with a generator (as model.parameters() gives "
    "them) it does not: params may be a generator, which one pass uses up: turn it into a list once"
)


def _first_momentum_case(make: Callable) -> None:
    """One parameter; when only the generator fails (a list of the same parameters passes), say so."""
    case, shapes = "one parameter, lr=0.1, momentum=0.9", [(3,)]
    try:
        _momentum_case(make, case, shapes, 0.1, 0.9, 4)
    except Exception as failure:
        if not _only_a_generator_fails(make, case, shapes):
            raise
        if isinstance(failure, CheckFailed):
            failure.hint = _GENERATOR_HINT
            raise
        raise CheckFailed(
            f"{case}: the parameters given as a generator",
            "what the same parameters in a list give",
            f"{type(failure).__name__}: {failure}",
            _GENERATOR_HINT,
        ) from None


def _only_a_generator_fails(make: Callable, case: str, shapes: list) -> bool:
    """True when the case passes with the parameters in a list, and fails again with a generator."""
    return _passes(make, case, shapes, as_list=True) and not _passes(make, case, shapes, as_list=False)


def _passes(make: Callable, case: str, shapes: list, as_list: bool) -> bool:
    try:
        _momentum_case(make, case, shapes, 0.1, 0.9, 4, as_list=as_list)
    except Exception:  # noqa: BLE001 - the student's code may raise anything
        return False
    return True


_ZERO_GRAD = "zero_grad() after gradients of 3, inf, -inf and nan (a loss that overflowed)"
_ZERO_GRAD_HINT = (
    "zero_grad sets every parameter's .grad to zeros, p.grad[...] = 0 (or to None, as today's PyTorch "
    "does); p.grad *= 0 is not the same: inf * 0 and nan * 0 are nan, so after one overflowed loss "
    "every later step would be nan"
)


def _check_zero_grad(make: Callable) -> None:
    """zero_grad() after gradients that hold inf and nan: zeros everywhere, as torch's zero_grad gives."""
    params = [Variable(np.ones(2), requires_grad=True), Variable(np.ones((2, 2)), requires_grad=True)]
    grads = [np.array([3.0, np.inf]), np.array([[np.nan, -np.inf], [3.0, 3.0]])]
    with running(_ZERO_GRAD):
        optimizer = make(params, lr=0.1, momentum=0.9)
        for param, grad in zip(params, grads):
            param.grad += grad
        with np.errstate(invalid="ignore"):  # inf * 0: the verdict below says it, not a warning
            optimizer.zero_grad()
    for index, param in enumerate(params):
        expect_close(
            f"{_ZERO_GRAD}: parameter {index}'s .grad", param.grad, np.zeros(param.shape), _ZERO_GRAD_HINT
        )


def _check_defaults_and_in_place(make: Callable) -> None:
    """momentum left at its default 0.9, and p.data updated in place."""
    start = np.array([1.0, -2.0, 0.5])
    mine, theirs = Variable(start.copy()), Variable(start.copy())
    case = "MomentumSGD([p], 0.1), lr given by position, momentum left at its default"
    with running(case):
        optimizer = make([mine], 0.1)
    reference = SGD([theirs], lr=0.1, momentum=0.9)
    held = mine.data
    for step, grad in enumerate(([0.5, -1.0, 2.0], [1.5, 0.25, -1.0]), start=1):
        with running(f"{case}: step {step}"):
            _one_step(optimizer, [mine], [np.array(grad)], f"{case}: your step()")
        _one_step(reference, [theirs], [np.array(grad)])
    expect_close(
        f"{case}: p after 2 steps",
        mine.data,
        theirs.data,
        "the signature is MomentumSGD(params, lr, momentum=0.9): keep that default",
    )
    expect_equal(
        f"{case}: p.data after 2 steps is the array p held before (updated in place)",
        mine.data is held,
        True,
        "p.data = p.data - ... puts a new array in: whatever holds the old one (a view, the array the "
        "Variable was made from) misses the update; change it in place, p.data -= lr * buf",
    )


_AFRESH = "a second MomentumSGD(params, lr=0.1, momentum=0.9) over a parameter the first one stepped"
_AFRESH_HINT = (
    "a new optimizer starts with no buffers, whatever another one did with the same parameters: make "
    "them in __init__ (self.buffers = {}), not on the class, in a default argument (state={}) or in a "
    "dict outside the class"
)


def _check_a_new_optimizer_starts_afresh(make: Callable) -> None:
    """One step by one optimizer, then one by a new optimizer over the same parameter: a plain step."""
    start, grads = np.array([1.0, -0.5, 2.0]), [np.array([0.5, 1.0, -1.5]), np.array([-1.0, 0.25, 0.75])]
    mine, theirs = Variable(start.copy()), Variable(start.copy())
    with running(f"{_AFRESH}: the first one's step"):
        first = make([mine], lr=0.1, momentum=0.9)
        _one_step(first, [mine], [grads[0]], f"{_AFRESH}: your step()")
    _one_step(SGD([theirs], lr=0.1, momentum=0.9), [theirs], [grads[0]])
    with running(f"{_AFRESH}: the second one's step"):
        second = make([mine], lr=0.1, momentum=0.9)
        _one_step(second, [mine], [grads[1]], f"{_AFRESH}: your step()")
    _one_step(SGD([theirs], lr=0.1, momentum=0.9), [theirs], [grads[1]])
    expect_close(f"{_AFRESH}: p after the second one's first step", mine.data, theirs.data, _AFRESH_HINT)
    del first  # (kept alive until here: a buffer keyed by id(p) must not come from a dead parameter)


def _check_grad_left_alone(make: Callable) -> None:
    """step() reads .grad and leaves it, at every step (a velocity built in .grad shows from the second)."""
    p = Variable(np.array([1.0, 2.0]))
    with running("MomentumSGD([p], lr=0.1, momentum=0.9)"):
        optimizer = make([p], lr=0.1, momentum=0.9)
    for step, grad in enumerate([np.array([0.5, -0.25]), np.array([-1.0, 0.75])], start=1):
        case = f"p.grad after step {step} of step(), with the gradient {grad.tolist()}"
        with running(case):
            _one_step(optimizer, [p], [grad], f"{case}: your step()")
        expect_close(
            case,
            p.grad,
            grad,
            "step() reads .grad and leaves it as it is (zero_grad() clears it before the next backward): "
            "a gradient norm logged after the step must see it; keep the velocity in a buffer of its own",
        )


# Exercise 2's check, in a file of its own (registered after Exercise 1's, in the chapter's order)
from . import ch08_loop  # noqa: E402, F401
