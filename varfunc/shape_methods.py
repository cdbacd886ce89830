"""The methods of Variable that work along dims (softmaxes, reductions, shapes, indexing), its sizes
and values, and its types.

Most are a line that calls a Function, as methods.py's are; Variable (in variable.py) inherits both.
Those that take a dim answer NumPy's ``axis=`` and ``keepdims=`` with the names to use instead
(habits.py): a student's hands write ``x.sum(axis=1)`` first.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import functions as F
from .backend import to_device
from .errors import DTypeError, ShapeError
from .functions.utils import check_dim
from .habits import numpy_keywords


class ValuesIndices(NamedTuple):
    """What max, min, median and mode give along a dim: ``values, indices = x.max(1)`` or ``.values``,
    as today's PyTorch names them (v0.1.3 gave a plain tuple, which this still is)."""

    values: Any
    indices: Any


def _values_indices(result: Any) -> Any:
    """A reduction's two outputs as a ValuesIndices; one Variable (no dim given) as it is."""
    return ValuesIndices(*result) if isinstance(result, tuple) else result


class ShapeMethods:
    """Methods along dims, mixed into Variable."""

    __slots__ = ()

    @numpy_keywords
    def softmax(self, dim: int = -1) -> Any:
        """exp(self) / sum(exp(self)) along dim."""
        return F.Softmax(dim)(self)

    @numpy_keywords
    def log_softmax(self, dim: int = -1) -> Any:
        """log(softmax(self)) along dim, computed stably."""
        return F.LogSoftmax(dim)(self)

    # --- reductions ------------------------------------------------------------------------------

    @numpy_keywords
    def sum(self, dim: Any = None, keepdim: bool = False) -> Any:
        """Sum over dim (all dims by default)."""
        return F.Sum(dim, keepdim)(self)

    @numpy_keywords
    def mean(self, dim: Any = None, keepdim: bool = False) -> Any:
        """Mean over dim (all dims by default)."""
        return F.Mean(dim, keepdim)(self)

    @numpy_keywords
    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        """The largest element, or (values, indices) along dim."""
        return _values_indices(F.Max(dim, keepdim)(self))

    @numpy_keywords
    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        """The smallest element, or (values, indices) along dim."""
        return _values_indices(F.Min(dim, keepdim)(self))

    @numpy_keywords
    def median(self, dim: Any = None, keepdim: bool = False) -> Any:
        """The lower median, or (values, indices) along dim."""
        return _values_indices(F.Median(dim, keepdim)(self))

    @numpy_keywords
    def mode(self, dim: int = -1, keepdim: bool = False) -> Any:
        """(values, indices) of the most frequent value along dim."""
        return _values_indices(F.Mode(dim, keepdim)(self))

    # --- sizes, and the values out of the graph ----------------------------------------------------

    def size(self, dim: int | None = None) -> Any:
        """The shape, or the size of one dim."""
        return self._data.shape if dim is None else self._data.shape[check_dim("size", dim, self._data.ndim)]

    def dim(self) -> int:
        """The number of dimensions."""
        return self._data.ndim

    def numel(self) -> int:
        """The number of elements."""
        return self._data.size

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d Variable")
        return self._data.shape[0]

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def item(self) -> Any:
        """The single value of a 1-element Variable, as a Python number."""
        if self._data.size != 1:
            raise ShapeError(
                f"item: the Variable has {self._data.size} elements (shape {self.shape}); item() needs 1"
            )
        return self._data.item()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def numpy(self) -> Any:
        """The data as a NumPy array (copied from the GPU if it lives there), for a Variable that
        requires no grad: as in PyTorch, and as NumPy's own np.asarray(x) (operators.py)."""
        if self.requires_grad:
            on_gpu = (
                "; Variable(x.data, requires_grad=False).numpy() copies it to the host"
                if self.is_cuda
                else ""
            )
            raise DTypeError(
                f"numpy: the Variable requires grad (shape {self.shape}), and its NumPy array would be "
                "outside the graph (today's PyTorch asks for x.detach().numpy()); x.data is the array "
                f"itself, whose changes are not tracked, and x.data.copy() a copy{on_gpu}"
            )
        return to_device(self._data, "cpu")

    # --- shapes and indexing ---------------------------------------------------------------------

    def view(self, *sizes: Any) -> Any:
        """The same elements in a new shape (one size may be -1)."""
        return F.View(*_sizes(sizes))(self)

    reshape = view

    def view_as(self, other: Any) -> Any:
        """The same elements in other's shape."""
        return F.View(*other.shape)(self)

    def expand(self, *sizes: Any) -> Any:
        """Broadcast to sizes (-1 keeps a dim)."""
        return F.Expand(*_sizes(sizes))(self)

    def expand_as(self, other: Any) -> Any:
        """Broadcast to other's shape."""
        return F.Expand(*other.shape)(self)

    viewAs = view_as  # v0.1.3's own names, kept beside PyTorch's later ones
    expandAs = expand_as

    @property
    def T(self) -> Any:  # noqa: N802 - NumPy's and today's PyTorch's name
        """The transpose of a matrix, as t()."""
        return self.t()

    def t(self) -> Any:
        """The transpose of a matrix; a 0-d or 1-d Variable's values as they are (as in PyTorch)."""
        if self.ndim > 2:
            raise ShapeError(
                f"t: expects at most 2 dims, got shape {self.shape}; use transpose(dim0, dim1) to pick two"
            )
        function = F.Transpose(0, 1) if self.ndim == 2 else F.View(*self.shape)  # (nothing to swap)
        function.made_by_t = True  # the node is transpose's or view's; only today's name differs
        return function(self)

    def transpose(self, dim0: int, dim1: int) -> Any:
        """Swap two dims."""
        return F.Transpose(dim0, dim1)(self)

    def permute(self, *dims: Any) -> Any:
        """Reorder the dims."""
        return F.Permute(*_sizes(dims))(self)

    @numpy_keywords
    def squeeze(self, dim: Any = None) -> Any:
        """Drop dims of size 1 (only those in dim, an int or a tuple of ints, if given)."""
        return F.Squeeze(dim)(self)

    @numpy_keywords
    def unsqueeze(self, dim: int) -> Any:
        """Insert a dim of size 1 at dim."""
        return F.Unsqueeze(dim)(self)

    def __getitem__(self, key: Any) -> Any:
        return F.Index(key)(self)

    def __setitem__(self, key: Any, value: Any) -> None:
        raise TypeError(
            "Variables do not support item assignment; build the result with ops "
            "(for example varfunc.cat) or, outside the graph, change .data"
        )

    def clone(self) -> Any:
        """A copy whose gradient flows back to self."""
        return F.Clone()(self)

    def type(self, dtype: Any) -> Any:
        """Converted to dtype (for example np.float32); the gradient is converted back."""
        return F.Type(dtype)(self)

    def float(self) -> Any:
        """Converted to float32."""
        return F.Type("float32")(self)

    def double(self) -> Any:
        """Converted to float64."""
        return F.Type("float64")(self)


def _sizes(sizes: tuple) -> tuple:
    """Accept both view(2, 3) and view((2, 3))."""
    return tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes


@numpy_keywords
def cat(seq: Any, dim: int = 0) -> Any:
    """Join Variables along dim; the gradient is split back among them."""
    if isinstance(seq, ShapeMethods):  # iterating it would join its rows, not Variables
        raise TypeError("cat: takes a list or tuple of Variables, got one Variable; write cat([x, y], dim)")
    seq = tuple(seq)
    if not seq:
        raise ValueError("cat: needs at least one Variable")
    return F.Concat(dim)(*seq)
