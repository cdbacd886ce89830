"""The differentiable ops, one module per family, with v0.1.x's class names."""

from .activation import LogSoftmax, Softmax, Threshold
from .basic_ops import (
    Add,
    AddConstant,
    Div,
    DivConstant,
    Mul,
    MulConstant,
    Negate,
    Pow,
    PowConstant,
    Sub,
    SubConstant,
)
from .blas import Addbmm, Addmm, Addmv, Addr, Baddbmm, Bmm, Dot, Matmul, Mm, Mv
from .indexing import Index
from .modulo import FloorDivide, FloorDivideConstant, Remainder, RemainderConstant
from .pointwise import (
    Abs,
    Acos,
    Asin,
    Atan,
    Ceil,
    Cinv,
    Clamp,
    Cmax,
    CmaxConstant,
    Cmin,
    CminConstant,
    Cos,
    Cosh,
    Exp,
    Floor,
    Frac,
    Log,
    Log1p,
    Sigmoid,
    Sin,
    Sinh,
    Sqrt,
    Tan,
    Tanh,
)
from .reduce import Max, Mean, Median, Min, Mode, Sum
from .tensor import (
    Clone,
    Concat,
    CpuTransfer,
    CudaTransfer,
    Expand,
    Permute,
    Squeeze,
    Transpose,
    Type,
    Unsqueeze,
    View,
)

__all__ = [name for name in dir() if name[0].isupper()]
