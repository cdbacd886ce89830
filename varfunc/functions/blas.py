"""Matrix products: matmul (and its mm, mv, bmm forms), dot, and v0.1's fused addmm family.

In v0.1 (Torch7's convention) ``alpha`` scales the added term M and ``beta`` scales the product:
``Addmm(alpha, beta)(M, A, B) = alpha * M + beta * (A @ B)``. Modern PyTorch swaps the two names.
Backward computes only the gradients that ``needs_input_grad`` asks for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import get_array_module, python_number
from ..errors import ShapeError
from ..function import Function
from .utils import sum_to_shape


def _swap(x: Any) -> Any:
    return get_array_module(x).swapaxes(x, -1, -2)


def _check_inner(op: str, a: Any, b: Any) -> None:
    """Raise a ShapeError unless a's last dim matches b's contracted dim."""
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"{op}: got a 0-dim operand (shapes {a.shape} and {b.shape}); use * for scalars")
    inner_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if a.shape[-1] != inner_b:
        raise ShapeError(
            f"{op}: shapes {a.shape} and {b.shape} do not fit: the last dim of the first "
            f"({a.shape[-1]}) must equal the {'first' if b.ndim == 1 else 'second-to-last'} "
            f"dim of the second ({inner_b})"
        )


class Matmul(Function):
    """a @ b with NumPy's rules (1-D operands, broadcast batch dims)."""

    ndims: tuple | None = None  # (a.ndim, b.ndim) that the mm, mv and bmm forms require
    backward_makes_new_arrays = True  # products of the gradient: a Leaf may keep them uncopied

    def forward(self, a, b):
        name = type(self).__name__.lower()
        if self.ndims is not None and (a.ndim, b.ndim) != self.ndims:
            raise ShapeError(
                f"{name}: expects operands with {self.ndims[0]} and {self.ndims[1]} dims, got "
                f"shapes {a.shape} and {b.shape}; use matmul (or @) for other shapes"
            )
        _check_inner(name, a, b)
        self.save_for_backward(a, b)
        try:
            return a @ b
        except ValueError:
            raise ShapeError(
                f"{name}: the batch dims of shapes {a.shape} and {b.shape} cannot be broadcast together"
            ) from None

    def backward(self, grad_output):
        a, b = self.saved_tensors
        if a.ndim == 2 and b.ndim == 2:  # the common case, matrix @ matrix: nothing to broadcast
            grad_a = grad_output @ b.T if self.needs_input_grad[0] else None
            grad_b = a.T @ grad_output if self.needs_input_grad[1] else None
            return grad_a, grad_b
        xp = get_array_module(a)
        # Treat 1-D operands as a row (a) or a column (b), as matmul does, then undo that.
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        # Column first: for vector @ vector the gradient is 0-d and becomes (1, 1).
        g = grad_output
        if b.ndim == 1:
            g = xp.expand_dims(g, -1)
        if a.ndim == 1:
            g = xp.expand_dims(g, -2)
        grad_a = grad_b = None
        if self.needs_input_grad[0]:
            grad_a = sum_to_shape(g @ _swap(b2), a2.shape).reshape(a.shape)
        if self.needs_input_grad[1]:
            grad_b = sum_to_shape(_swap(a2) @ g, b2.shape).reshape(b.shape)
        return grad_a, grad_b


class Mm(Matmul):
    """Matrix times matrix: (n, m) @ (m, p)."""

    ndims = (2, 2)


class Mv(Matmul):
    """Matrix times vector: (n, m) @ (m,)."""

    ndims = (2, 1)


class Bmm(Matmul):
    """Batches of matrices: (b, n, m) @ (b, m, p), one batch size on both sides (as torch.bmm)."""

    ndims = (3, 3)

    def forward(self, a, b):
        if a.ndim == b.ndim == 3 and a.shape[0] != b.shape[0]:
            raise ShapeError(
                f"bmm: shapes {a.shape} and {b.shape} have different batch sizes ({a.shape[0]} and "
                f"{b.shape[0]}); bmm does not broadcast them: use matmul (or @)"
            )
        return super().forward(a, b)


class Dot(Function):
    """The inner product of two vectors of the same length."""

    def forward(self, u, w):
        if u.ndim != 1 or w.ndim != 1 or u.shape != w.shape:
            raise ShapeError(
                f"dot: expects two 1-D Variables of one length, got shapes {u.shape} and {w.shape}"
            )
        self.save_for_backward(u, w)
        return u @ w

    def backward(self, grad_output):
        u, w = self.saved_tensors
        return grad_output * w, grad_output * u


class _Blas(Function):
    """A fused alpha * M + beta * product op; subclasses say how to multiply and differentiate."""

    backward_makes_new_arrays = True  # every gradient is scaled by alpha or beta: a new array

    def __init__(self, alpha: Any = 1, beta: Any = 1) -> None:
        self.alpha = python_number(alpha)
        self.beta = python_number(beta)

    def forward(self, m, a, b):
        name = type(self).__name__.lower()
        self.check_shapes(name, a, b)
        self.save_for_backward(a, b)
        product = self.product(a, b)
        try:
            shape = np.broadcast_shapes(m.shape, product.shape)
        except ValueError:
            shape = None
        if shape != product.shape:
            raise ShapeError(f"{name}: the added term has shape {m.shape}, the product {product.shape}")
        # A zero weight leaves its term out, as BLAS does: 0 * nan would be nan (zeros of the term's
        # own dtype keep the result's dtype)
        xp = get_array_module(m)
        added = self.alpha * m if self.alpha != 0 else xp.zeros_like(m)
        return added + (self.beta * product if self.beta != 0 else xp.zeros_like(product))

    def backward(self, grad_output):
        a, b = self.saved_tensors
        needs = self.needs_input_grad
        grad_m = sum_to_shape(self.alpha * grad_output, self.input_shapes[0]) if needs[0] else None
        grad_a = self.beta * self.grad_first(grad_output, b) if needs[1] else None
        grad_b = self.beta * self.grad_second(grad_output, a) if needs[2] else None
        return grad_m, grad_a, grad_b

    def extra_repr(self) -> str:
        return f"alpha={self.alpha!r}, beta={self.beta!r}"


class Addmm(_Blas):
    """alpha * M + beta * (A @ B) for matrices A (n, m) and B (m, p)."""

    def check_shapes(self, name, a, b):
        if a.ndim != 2 or b.ndim != 2:
            raise ShapeError(f"{name}: expects two matrices, got shapes {a.shape} and {b.shape}")
        _check_inner(name, a, b)

    def product(self, a, b):
        return a @ b

    def grad_first(self, g, b):
        return g @ b.T

    def grad_second(self, g, a):
        return a.T @ g


class Addmv(_Blas):
    """alpha * v + beta * (M @ x) for a matrix M (n, m) and a vector x (m,)."""

    def check_shapes(self, name, a, b):
        if a.ndim != 2 or b.ndim != 1:
            raise ShapeError(f"{name}: expects a matrix and a vector, got shapes {a.shape} and {b.shape}")
        _check_inner(name, a, b)

    def product(self, a, b):
        return a @ b

    def grad_first(self, g, b):
        return g[:, None] * b[None, :]

    def grad_second(self, g, a):
        return a.T @ g


class Addr(_Blas):
    """alpha * M + beta * outer(u, w) for vectors u (n,) and w (m,)."""

    def check_shapes(self, name, a, b):
        if a.ndim != 1 or b.ndim != 1:
            raise ShapeError(f"{name}: expects two vectors, got shapes {a.shape} and {b.shape}")

    def product(self, a, b):
        return a[:, None] * b[None, :]

    def grad_first(self, g, b):
        return g @ b

    def grad_second(self, g, a):
        return g.T @ a


class Baddbmm(_Blas):
    """alpha * M + beta * (A @ B) for batches A (b, n, m) and B (b, m, p)."""

    def check_shapes(self, name, a, b):
        if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0]:
            raise ShapeError(f"{name}: expects two batches of matrices, got shapes {a.shape} and {b.shape}")
        _check_inner(name, a, b)

    def product(self, a, b):
        return a @ b

    def grad_first(self, g, b):
        return g @ _swap(b)

    def grad_second(self, g, a):
        return _swap(a) @ g


class Addbmm(Baddbmm):
    """alpha * M + beta * sum over the batch of A_i @ B_i."""

    def product(self, a, b):
        return (a @ b).sum(axis=0)

    def grad_first(self, g, b):
        return g[None] @ _swap(b)

    def grad_second(self, g, a):
        return _swap(a) @ g[None]
