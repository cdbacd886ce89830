"""Today's names for v0.1.x's graph, read-only, kept in this one place for the chapter that compares them.

| v0.1.x (this kit)                  | PyTorch today                          |
|------------------------------------|----------------------------------------|
| ``variable.creator``               | ``tensor.grad_fn`` (None for leaves)   |
| a ``Leaf`` creator                 | ``is_leaf`` and an ``AccumulateGrad``  |
| ``fn.previous_functions``          | ``fn.next_functions``                  |
| ``Mul``, ``MulConstant``, ...      | ``MulBackward0``, ...                  |
"""

from __future__ import annotations

import numbers
from typing import Any

# What PyTorch 2.x names a node whose backward it does not implement (it raises in backward).
NOT_DIFFERENTIABLE = "torch::autograd::NotImplemented"

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
    "CmaxConstant": "ClampBackward1",  # max(x, c) is x.clamp(min=c) today
    "CminConstant": "ClampBackward1",
    "Mode": "ModeBackward0",
    "Index": "IndexBackward0",
    "View": "ViewBackward0",
    "Expand": "ExpandBackward0",
    "Transpose": "TransposeBackward0",
    "Permute": "PermuteBackward0",
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
    "Remainder": "RemainderBackward1",  # fmod=True: FmodBackward1 (modern_name)
    "RemainderConstant": "RemainderBackward0",
    "FloorDivide": NOT_DIFFERENTIABLE,  # torch gives // no derivative; this kit gives it zero
    "FloorDivideConstant": NOT_DIFFERENTIABLE,
    "Softmax": "SoftmaxBackward0",
    "Threshold": "ThresholdBackward0",  # but relu's Threshold(0, 0) is ReluBackward0: modern_name
    "LogSoftmax": "LogSoftmaxBackward0",
    "Linear": "AddmmBackward0",  # nn's Linear: F.linear on a batch of rows, with a bias
    "NLLLoss": "NllLossBackward0",
    "Dropout": "MulBackward0",  # F.dropout on the CPU: input * mask (NativeDropoutBackward0 on CUDA)
    "CudaTransfer": "ToCopyBackward0",  # .cuda() and .cpu() are copies, as .to(dtype) is
    "CpuTransfer": "ToCopyBackward0",
}


# Ops whose PyTorch 2.x name depends on whether a dim was given: (without dim, with dim).
DIM_NAMES = {
    "Sum": ("SumBackward0", "SumBackward1"),
    "Mean": ("MeanBackward0", "MeanBackward1"),
    "Max": ("MaxBackward1", "MaxBackward0"),
    "Min": ("MinBackward1", "MinBackward0"),
    "Median": ("MedianBackward0", "MedianBackward1"),
    "Squeeze": ("SqueezeBackward0", "SqueezeBackward1"),
}
# A number on the left (c - x, c / x, c ** x) is another op in PyTorch 2.x: the name of its last node.
NUMBER_FIRST_NAMES = {
    "SubConstant": ("sub_tensor", "RsubBackward1"),
    "DivConstant": ("div_by_tensor", "MulBackward0"),  # c * x.reciprocal()
    "PowConstant": ("tensor_power", "PowBackward2"),
}


def modern_name(function: Any) -> str:
    """The grad_fn class name PyTorch 2.x would show for this Function (``Mul`` -> ``MulBackward0``)."""
    name = type(function).__name__
    flag, number_first = NUMBER_FIRST_NAMES.get(name, (None, None))
    if flag is not None and getattr(function, flag, False):
        return number_first
    if getattr(function, "made_by_t", False):
        return "TBackward0"
    if name.startswith("Remainder"):
        return _remainder_name(function)
    if name in DIM_NAMES:
        return DIM_NAMES[name][getattr(function, "dim", None) is not None]
    if name == "Index":
        return _index_name(function.key)
    if name == "Threshold" and function.threshold == 0 and function.value == 0:
        return "ReluBackward0"  # what relu() makes; torch.threshold(x, 0, 0) would be ThresholdBackward0
    return MODERN_NAMES.get(name, f"{name}Backward")


def _remainder_name(function: Any) -> str:
    """x % y, x % c and fmod in PyTorch 2.x; c % x has no derivative there (this kit gives it one)."""
    if getattr(function, "tensor_divisor", False):
        return NOT_DIFFERENTIABLE
    name = MODERN_NAMES[type(function).__name__]
    return name.replace("Remainder", "Fmod") if function.fmod else name


def merged_nodes(function: Any) -> tuple:
    """The other nodes PyTorch 2.x makes for what this one Function computes, whose last node's name
    it shows: ``ReciprocalBackward0`` for c / x, ``SelectBackward0`` for x[0, 1:]; () for most ops."""
    name = type(function).__name__
    if name == "DivConstant" and getattr(function, "div_by_tensor", False):
        return ("ReciprocalBackward0",)
    if name == "Index":
        return tuple(_index_nodes(function.key)[:-1])
    return ()


def _index_name(key: Any) -> str:
    return _index_nodes(key)[-1]


def _index_nodes(key: Any) -> list:
    """x[key] in PyTorch 2.x: basic indexing makes a select, slice or unsqueeze node per key, in
    order, so the last one names grad_fn; an array, list or mask in the key makes IndexBackward0."""
    keys = key if type(key) is tuple else (key,)
    names = []
    for k in keys:
        if isinstance(k, numbers.Integral) and not isinstance(k, bool):
            names.append("SelectBackward0")
        elif k is None:
            names.append("UnsqueezeBackward0")
        elif type(k) is slice:
            names.append("SliceBackward0" if k != slice(None) else None)  # a full slice: no node of its own
        elif k is not Ellipsis:
            return ["IndexBackward0"]
    made = [n for n in names if n is not None]
    if made:
        return made
    return ["SliceBackward0" if names else "AliasBackward0"]  # x[:] or x[...]


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
        """Today's class name for this node, as PyTorch's grad_fn.name() gives it (a leaf's is
        AccumulateGrad, which torch's name() spells torch::autograd::AccumulateGrad)."""
        return modern_name(self)

    def merged_nodes(self) -> tuple:
        """The other nodes PyTorch 2.x makes for this computation (a modern drawing names them)."""
        return merged_nodes(self)
