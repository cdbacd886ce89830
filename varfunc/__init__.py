"""varfunc: PyTorch v0.1's Variable / Function / Leaf / ExecutionEngine autograd, rebuilt on NumPy."""

from . import functions
from .engine import EngineEvent, EventLog, ExecutionEngine
from .errors import (
    BackwardError,
    DeviceError,
    DTypeError,
    GradcheckError,
    InplaceError,
    ShapeError,
    VarfuncError,
)
from .function import Function, InplaceFunction
from .gradcheck import gradcheck
from .leaf import Leaf
from .shape_methods import cat
from .variable import Variable

__version__ = "0.1.0"

__all__ = [
    "BackwardError",
    "DTypeError",
    "DeviceError",
    "EngineEvent",
    "EventLog",
    "ExecutionEngine",
    "Function",
    "GradcheckError",
    "InplaceError",
    "InplaceFunction",
    "Leaf",
    "ShapeError",
    "Variable",
    "VarfuncError",
    "cat",
    "functions",
    "gradcheck",
]
