"""Adam (Kingma and Ba, 2014), following torch.optim.Adam's update step by step."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

from ..backend import check_flag, get_array_module
from .optimizer import Optimizer


class Adam(Optimizer):
    """Adam with torch.optim.Adam's update, per parameter p with gradient g, at step t = 1, 2, ...:

    g = g + weight_decay * p                                  (L2 penalty, if weight_decay)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    v_hat = max(v_hat, v) with amsgrad, else v
    p = p - lr / (1 - beta1**t) * m / (sqrt(v_hat) / sqrt(1 - beta2**t) + eps)
    """

    number_settings = ("lr", "eps", "weight_decay")
    state_buffers = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    state_counters = ("step",)
    required_state = ("step", "exp_avg", "exp_avg_sq")  # max_exp_avg_sq: made when amsgrad first needs it

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        if group["lr"] < 0:
            raise ValueError(f"Adam: invalid learning rate {group['lr']} (must be >= 0)")
        if group["eps"] < 0:
            raise ValueError(f"Adam: invalid eps {group['eps']} (must be >= 0)")
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"Adam: betas must be a pair (beta1, beta2), got {betas!r}")
        group["betas"] = tuple(betas)
        for index, beta in enumerate(betas):
            if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not 0.0 <= beta < 1.0:
                raise ValueError(
                    f"Adam: invalid beta at index {index}: {beta!r} (must be a number in [0, 1))"
                )
        if group["weight_decay"] < 0:
            raise ValueError(f"Adam: invalid weight_decay {group['weight_decay']} (must be >= 0)")
        check_flag("Adam", "amsgrad", group["amsgrad"])

    def step(self) -> None:
        """One update of every parameter from its current .grad."""
        for group, params in self._trained_groups():  # every parameter checked before any changes
            lr, eps, weight_decay, amsgrad = (
                group["lr"],
                group["eps"],
                group["weight_decay"],
                group["amsgrad"],
            )
            beta1, beta2 = group["betas"]
            for param in params:
                xp = get_array_module(param.data)
                grad = param.grad
                if weight_decay != 0:
                    grad = grad + weight_decay * param.data
                state = self.state.setdefault(param, {})
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = xp.zeros_like(param.data)
                    state["exp_avg_sq"] = xp.zeros_like(param.data)
                state["step"] += 1
                step = state["step"]
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg *= beta1
                exp_avg += (1 - beta1) * grad
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad
                if amsgrad:
                    if "max_exp_avg_sq" not in state:  # made on first use: amsgrad may be switched on later
                        state["max_exp_avg_sq"] = xp.zeros_like(param.data)
                    second = state["max_exp_avg_sq"]
                    xp.maximum(second, exp_avg_sq, out=second)
                else:
                    second = exp_avg_sq
                step_size = lr / (1 - beta1**step)
                denom = xp.sqrt(second) / math.sqrt(1 - beta2**step) + eps
                param.data -= step_size * exp_avg / denom
