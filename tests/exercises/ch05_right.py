"""Right answers to chapter 05's exercises, other than the stored solutions: each must pass its check."""

from .ch05_more import BROADCAST_MUL

RIGHT_ANSWERS = {
    "ch05.sigmoid": [
        (
            "forward 0.5 * (1 + tanh(a / 2)), backward g * (y - y**2)",
            """
class MySigmoid(Function):
    def forward(self, a):
        out = 0.5 * (1 + np.tanh(0.5 * a))
        self.save_for_backward(out)
        return out

    def backward(self, grad_output):
        out = self.saved_tensors[0]
        return grad_output * (out - out**2)
""",
        ),
        (
            "a stable forward with np.where on the sign of a",
            """
class MySigmoid(Function):
    def forward(self, a):
        e = np.exp(-np.abs(a))  # never overflows
        y = np.where(a >= 0, 1 / (1 + e), e / (1 + e))
        self.save_for_backward(y)
        return y

    def backward(self, grad_output):
        y, = self.saved_tensors
        dy_da = y * (1.0 - y)
        return dy_da * grad_output
""",
        ),
        (
            "forward from logaddexp, the output cast back to a's dtype",
            """
class MySigmoid(Function):
    def forward(self, a):
        y = np.exp(-np.logaddexp(0, -a)).astype(a.dtype)
        self.save_for_backward(y)
        return y

    def backward(self, grad_output):
        [y] = self.saved_tensors
        return np.multiply(grad_output, y * (1 - y))
""",
        ),
        (
            "forward exp(-logaddexp(0, -a)), backward np.multiply(g, y - y * y)",
            """
class MySigmoid(Function):
    def forward(self, a):
        y = np.exp(-np.logaddexp(0, -a))
        self.save_for_backward(y)
        return y

    def backward(self, grad_output):
        y = self.saved_tensors[0]
        return np.multiply(grad_output, y - y * y)
""",
        ),
    ],
    "ch05.broadcast": [
        (
            "stretched dims summed first with negative axes, then the leading ones",
            """
def my_sum_to_shape(grad, shape):
    for i in range(1, len(shape) + 1):
        if shape[-i] == 1 and grad.shape[-i] != 1:
            grad = grad.sum(axis=-i, keepdims=True)
    return grad.sum(axis=tuple(range(grad.ndim - len(shape))))
"""
            + BROADCAST_MUL,
        ),
        (
            "one sum over the axes where the padded shapes differ, then reshape",
            """
def my_sum_to_shape(grad, shape):
    padded = (1,) * (grad.ndim - len(shape)) + tuple(shape)
    axes = tuple(i for i, (n, m) in enumerate(zip(padded, grad.shape)) if n != m)
    return grad.sum(axis=axes).reshape(shape)
"""
            + BROADCAST_MUL,
        ),
        (
            "while and for loops, one axis at a time",
            """
def my_sum_to_shape(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad

class BroadcastMul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return np.multiply(a, b)

    def backward(self, grad_output):
        a, b = self.saved_tensors
        grad_a = my_sum_to_shape(np.multiply(grad_output, b), a.shape)
        grad_b = my_sum_to_shape(np.multiply(grad_output, a), b.shape)
        return grad_a, grad_b
""",
        ),
        (
            "shape padded with leading 1s, one sum with keepdims, then reshape",
            """
def my_sum_to_shape(grad, shape):
    shape = tuple(shape)
    padded = (1,) * (grad.ndim - len(shape)) + shape
    axes = tuple(i for i, (g, s) in enumerate(zip(grad.shape, padded)) if s == 1 and g != 1)
    return np.sum(grad, axis=axes, keepdims=True).reshape(shape)

class BroadcastMul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, grad_output):
        a, b = self.saved_tensors
        need_a, need_b = self.needs_input_grad
        grad_a = my_sum_to_shape(grad_output * b, a.shape) if need_a else None
        grad_b = my_sum_to_shape(grad_output * a, b.shape) if need_b else None
        return grad_a, grad_b
""",
        ),
        (
            "sums every size-1 dim of shape (a no-op where the grad has 1 too)",
            """
def my_sum_to_shape(grad, shape):
    if grad.shape == tuple(shape):
        return grad
    lead = grad.ndim - len(shape)
    if lead > 0:
        grad = grad.sum(axis=tuple(range(lead)))
    ones = tuple(i for i, n in enumerate(shape) if n == 1)
    if ones:
        grad = grad.sum(axis=ones, keepdims=True)
    return grad

class BroadcastMul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, grad_output):
        a, b = self.saved_tensors
        return (
            my_sum_to_shape(grad_output * b, a.shape),
            my_sum_to_shape(grad_output * a, b.shape),
        )
""",
        ),
    ],
    "ch05.matmul": [
        (
            "np.dot and .transpose(), with if statements",
            """
class MyMatmul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return np.dot(a, b)

    def backward(self, grad_output):
        a, b = self.saved_tensors
        need_a, need_b = self.needs_input_grad
        grad_a = grad_b = None
        if need_a:
            grad_a = np.dot(grad_output, b.transpose())
        if need_b:
            grad_b = np.dot(a.transpose(), grad_output)
        return grad_a, grad_b
""",
        ),
        (
            "einsum with index names",
            """
class MyMatmul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return np.einsum('nm,mp->np', a, b)

    def backward(self, grad_output):
        a, b = self.saved_tensors
        grad_a = np.einsum('np,mp->nm', grad_output, b) if self.needs_input_grad[0] else None
        grad_b = np.einsum('nm,np->mp', a, grad_output) if self.needs_input_grad[1] else None
        return grad_a, grad_b
""",
        ),
        (
            "each product transposed the other way round: (b @ g.T).T and (g.T @ a).T",
            """
class MyMatmul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return np.matmul(a, b)

    def backward(self, grad_output):
        a, b = self.saved_tensors
        grads = [None, None]
        if self.needs_input_grad[0]:
            grads[0] = (b @ grad_output.T).T
        if self.needs_input_grad[1]:
            grads[1] = (grad_output.T @ a).T
        return tuple(grads)
""",
        ),
    ],
}
