"""Today's names for v0.1.x's graph, read-only, kept in this one place for the chapter that compares them.

| v0.1.x (this kit)                  | PyTorch today                          |
|------------------------------------|----------------------------------------|
| ``variable.creator``               | ``tensor.grad_fn`` (None for leaves)   |
| a ``Leaf`` creator                 | ``is_leaf`` and an ``AccumulateGrad``  |
| ``fn.previous_functions``          | ``fn.next_functions``                  |
| ``Mul``, ``MulConstant``, ...      | ``MulBackward0``, ...                  |
"""

from __future__ import annotations

from typing import Any

# v0.1.x op class -> the grad_fn class name PyTorch 2.x shows for the same computation.
MODERN_NAMES = {
    "Leaf": "AccumulateGrad",
    "Add": "AddBackward0",
    "AddConstant": "AddBackward0",
    "Sub": "SubBackward0",
    "SubConstant": "SubBackward0",
    "Mul": "MulBackward0",
    "MulConstant": "MulBackward0",
    "Div": "DivBackward0",
    "DivConstant": "DivBackward0",
    "Pow": "PowBackward1",
    "PowConstant": "PowBackward0",
    "Negate": "NegBackward0",
    "Exp": "ExpBackward0",
    "Log": "LogBackward0",
    "Log1p": "Log1PBackward0",
    "Tanh": "TanhBackward0",
    "Sigmoid": "SigmoidBackward0",
    "Sin": "SinBackward0",
    "Cos": "CosBackward0",
    "Tan": "TanBackward0",
    "Asin": "AsinBackward0",
    "Acos": "AcosBackward0",
    "Atan": "AtanBackward0",
    "Sinh": "SinhBackward0",
    "Cosh": "CoshBackward0",
    "Abs": "AbsBackward0",
    "Sqrt": "SqrtBackward0",
    "Cinv": "ReciprocalBackward0",
    "Clamp": "ClampBackward1",
    "Floor": "FloorBackward0",
    "Ceil": "CeilBackward0",
    "Frac": "FracBackward0",
    "Cmax": "MaximumBackward0",
    "Cmin": "MinimumBackward0",
    "Sum": "SumBackward0",
    "Mean": "MeanBackward0",
    "Max": "MaxBackward1",
    "Min": "MinBackward1",
    "Median": "MedianBackward1",
    "Mode": "ModeBackward0",
    "Index": "IndexBackward0",
    "View": "ViewBackward0",
    "Expand": "ExpandBackward0",
    "Transpose": "TransposeBackward0",
    "Permute": "PermuteBackward0",
    "Squeeze": "SqueezeBackward0",
    "Unsqueeze": "UnsqueezeBackward0",
    "Concat": "CatBackward0",
    "Type": "ToCopyBackward0",
    "Clone": "CloneBackward0",
    "Matmul": "MmBackward0",
    "Mm": "MmBackward0",
    "Mv": "MvBackward0",
    "Bmm": "BmmBackward0",
    "Dot": "DotBackward0",
    "Addmm": "AddmmBackward0",
    "Addmv": "AddmvBackward0",
    "Addr": "AddrBackward0",
    "Addbmm": "AddbmmBackward0",
    "Baddbmm": "BaddbmmBackward0",
    "Softmax": "SoftmaxBackward0",
    "LogSoftmax": "LogSoftmaxBackward0",
    "Linear": "AddmmBackward0",  # nn's Linear: F.linear on a batch of rows, with a bias
    "NLLLoss": "NllLossBackward0",
}


def modern_name(function: Any) -> str:
    """The grad_fn class name PyTorch 2.x would show for this Function (``Mul`` -> ``MulBackward0``)."""
    name = type(function).__name__
    return MODERN_NAMES.get(name, f"{name}Backward")


class ModernVariableNames:
    """grad_fn and is_leaf, computed from creator."""

    __slots__ = ()

    @property
    def grad_fn(self) -> Any:
        """The creator, or None for a leaf or a Variable that needs no grad (today's convention)."""
        creator = self.creator
        if creator is None or not self.requires_grad or not creator.previous_functions:
            return None  # only a Leaf has no previous functions
        return creator

    @property
    def is_leaf(self) -> bool:
        """True when grad_fn is None: created by the user, or not requiring grad."""
        return self.grad_fn is None


class ModernFunctionNames:
    """next_functions and name(), computed from previous_functions."""

    __slots__ = ()

    @property
    def next_functions(self) -> tuple:
        """((Function or None, output index), ...) per input; None where no gradient flows."""
        return tuple(
            (prev_fn, prev_fn.output_ids[arg_id]) if needed else (None, 0)
            for (prev_fn, arg_id), needed in zip(self.previous_functions or (), self.needs_input_grad or ())
        )

    def name(self) -> str:
        """Today's class name for this node, as PyTorch's grad_fn.name() gives it."""
        return modern_name(self)
