"""Stochastic gradient descent with momentum, Nesterov momentum and weight decay (torch.optim.SGD)."""

from __future__ import annotations

from collections.abc import Iterable

from ..backend import check_flag, get_array_module
from .optimizer import Optimizer, required


class SGD(Optimizer):
    """p <- p - lr * d, with torch.optim.SGD's rule for d, per parameter p with gradient g:

        g = g + weight_decay * p                      (L2 penalty, if weight_decay)
        buf = g                  on the first step    (if momentum)
        buf = momentum * buf + (1 - dampening) * g    afterwards
        d = g + momentum * buf   with nesterov, else d = buf (or d = g without momentum)

    ``lr`` is required, as in 2017's torch.optim.SGD (today's defaults to 0.001; differences.md, row 47).
    """

    number_settings = ("lr", "momentum", "dampening", "weight_decay")
    state_buffers = ("momentum_buffer",)
    required_state = ("momentum_buffer",)

    def __init__(
        self,
        params: Iterable,
        lr: float = required,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        if group["lr"] is not required and group["lr"] < 0:
            raise ValueError(f"SGD: invalid learning rate {group['lr']} (must be >= 0)")
        if group["momentum"] < 0:
            raise ValueError(f"SGD: invalid momentum {group['momentum']} (must be >= 0)")
        if group["weight_decay"] < 0:
            raise ValueError(f"SGD: invalid weight_decay {group['weight_decay']} (must be >= 0)")
        check_flag("SGD", "nesterov", group["nesterov"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum > 0 and dampening = 0")

    def step(self) -> None:
        """One update of every parameter from its current .grad."""
        for group, params in self._trained_groups():  # every parameter checked before any changes
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            weight_decay, nesterov = group["weight_decay"], group["nesterov"]
            for param in params:
                grad = param.grad
                if weight_decay != 0:
                    grad = grad + weight_decay * param.data
                if momentum != 0:
                    state = self.state.setdefault(param, {})
                    buf = state.get("momentum_buffer")
                    if buf is None:  # an array of its own (for a 0-d p, grad may be a NumPy scalar)
                        xp = get_array_module(param.data)
                        buf = state["momentum_buffer"] = xp.array(grad, dtype=param.dtype)
                    else:
                        buf *= momentum
                        buf += (1 - dampening) * grad
                    grad = grad + momentum * buf if nesterov else buf
                param.data -= lr * grad  # in place; the .data setter bumps the version counter
