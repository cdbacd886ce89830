"""Self-checking exercises: ``check("ch03.mul")`` in a notebook prints whether the exercise passes and why."""

from .core import REGISTRY, CheckFailed, Exercise, Verdict, check, evaluate, exercise, lookup, passes

__all__ = [
    "REGISTRY",
    "CheckFailed",
    "Exercise",
    "Verdict",
    "check",
    "evaluate",
    "exercise",
    "lookup",
    "passes",
]
