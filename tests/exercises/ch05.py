"""Plausible wrong answers to chapter 05's exercises, each must fail its check; other right answers pass."""

SIGMOID_MISSING_ONE_MINUS_Y = """
class MySigmoid(Function):
    def forward(self, a):
        y = 1 / (1 + np.exp(-a))
        self.save_for_backward(y)
        return y

    def backward(self, grad_output):
        (y,) = self.saved_tensors
        return grad_output * y
"""

SIGMOID_FORMULA_ON_INPUT = """
class MySigmoid(Function):
    def forward(self, a):
        self.save_for_backward(a)
        return 1 / (1 + np.exp(-a))

    def backward(self, grad_output):
        (a,) = self.saved_tensors
        return grad_output * a * (1 - a)
"""

SIGMOID_TANH_DERIVATIVE = """
class MySigmoid(Function):
    def forward(self, a):
        y = 1 / (1 + np.exp(-a))
        self.save_for_backward(y)
        return y

    def backward(self, grad_output):
        (y,) = self.saved_tensors
        return grad_output * (1 - y * y)
"""

SIGMOID_SAVES_INPUT_RECOMPUTES = """
class MySigmoid(Function):
    def forward(self, a):
        self.save_for_backward(a)
        return 1 / (1 + np.exp(-a))

    def backward(self, grad_output):
        (a,) = self.saved_tensors
        y = 1 / (1 + np.exp(-a))
        return grad_output * y * (1 - y)
"""

SIGMOID_RECOMPUTES_FROM_AN_ATTRIBUTE = """
class MySigmoid(Function):
    def forward(self, a):
        self.a = a
        y = 1 / (1 + np.exp(-a))
        self.save_for_backward(y)
        return y

    def backward(self, grad_output):
        s = 1 / (1 + np.exp(-self.a))
        return grad_output * s * (1 - s)
"""

SIGMOID_FORGETS_GRAD_OUTPUT = """
class MySigmoid(Function):
    def forward(self, a):
        y = 1 / (1 + np.exp(-a))
        self.save_for_backward(y)
        return y

    def backward(self, grad_output):
        (y,) = self.saved_tensors
        return y * (1 - y)
"""

BROADCAST_MUL = """
class BroadcastMul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, grad_output):
        a, b = self.saved_tensors
        return my_sum_to_shape(grad_output * b, a.shape), my_sum_to_shape(grad_output * a, b.shape)
"""

SUM_LEADING_ONLY = (
    """
def my_sum_to_shape(grad, shape):
    extra = grad.ndim - len(shape)
    return grad.sum(axis=tuple(range(extra)))
"""
    + BROADCAST_MUL
)

SUM_STRETCHED_ONLY = (
    """
def my_sum_to_shape(grad, shape):
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True)
"""
    + BROADCAST_MUL
)

SUM_WITHOUT_KEEPDIMS = (
    """
def my_sum_to_shape(grad, shape):
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched)
"""
    + BROADCAST_MUL
)

GOOD_SUM = """
def my_sum_to_shape(grad, shape):
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True)
"""

BROADCAST_SWAPPED = (
    GOOD_SUM
    + """
class BroadcastMul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, grad_output):
        a, b = self.saved_tensors
        return my_sum_to_shape(grad_output * a, a.shape), my_sum_to_shape(grad_output * b, b.shape)
"""
)

BROADCAST_NO_SUM_IN_BACKWARD = (
    GOOD_SUM
    + """
class BroadcastMul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, grad_output):
        a, b = self.saved_tensors
        return grad_output * b, grad_output * a
"""
)

SUM_WRAPS_THE_KITS = (
    """
def my_sum_to_shape(grad, shape):
    return sum_to_shape(grad, shape)
"""
    + BROADCAST_MUL
)

BROADCAST_CALLS_THE_KITS = (
    GOOD_SUM
    + """
class BroadcastMul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, grad_output):
        a, b = self.saved_tensors
        return sum_to_shape(grad_output * b, a.shape), sum_to_shape(grad_output * a, b.shape)
"""
)

SIGMOID_FLOAT32 = """
class MySigmoid(Function):
    def forward(self, a):
        y = (1 / (1 + np.exp(-a))).astype(np.float32)  # PyTorch's default type, but not a's
        self.save_for_backward(y)
        return y

    def backward(self, grad_output):
        (y,) = self.saved_tensors
        return grad_output * y * (1 - y)
"""

# Every MyMatmul answer below shares its forward; each writes its own backward.
MATMUL_HEAD = """
class MyMatmul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a @ b

    def backward(self, grad_output):
        a, b = self.saved_tensors
"""

MATMUL_NO_TRANSPOSES = (
    MATMUL_HEAD
    + """\
        grad_a = grad_output @ b if self.needs_input_grad[0] else None
        grad_b = a @ grad_output if self.needs_input_grad[1] else None
        return grad_a, grad_b
"""
)

MATMUL_GRAD_B_TRANSPOSED = (
    MATMUL_HEAD
    + """\
        grad_a = grad_output @ b.T if self.needs_input_grad[0] else None
        grad_b = (a.T @ grad_output).T if self.needs_input_grad[1] else None
        return grad_a, grad_b
"""
)

MATMUL_SQUARE_ONLY = (
    MATMUL_HEAD
    + """\
        grad_a = b.T @ grad_output if self.needs_input_grad[0] else None
        grad_b = grad_output @ a.T if self.needs_input_grad[1] else None
        return grad_a, grad_b
"""
)

MATMUL_ONLY_THE_NEEDED = (
    MATMUL_HEAD
    + """\
        grads = []
        if self.needs_input_grad[0]:
            grads.append(grad_output @ b.T)
        if self.needs_input_grad[1]:
            grads.append(a.T @ grad_output)
        return tuple(grads)  # only the needed ones: no None in their place
"""
)

MATMUL_ALWAYS_BOTH = (
    MATMUL_HEAD
    + """\
        return grad_output @ b.T, a.T @ grad_output
"""
)

WRONG_ANSWERS = {
    "ch05.sigmoid": [
        ("the kit's own Sigmoid", "from varfunc.functions.pointwise import Sigmoid as MySigmoid\n"),
        ("backward forgets the (1 - y) factor", SIGMOID_MISSING_ONE_MINUS_Y),
        ("saves the input and applies y (1 - y) to it", SIGMOID_FORMULA_ON_INPUT),
        ("tanh's derivative 1 - y^2", SIGMOID_TANH_DERIVATIVE),
        ("saves the input and recomputes the sigmoid in backward", SIGMOID_SAVES_INPUT_RECOMPUTES),
        ("saves y, but recomputes the sigmoid from self.a in backward", SIGMOID_RECOMPUTES_FROM_AN_ATTRIBUTE),
        ("backward forgets to multiply by grad_output", SIGMOID_FORGETS_GRAD_OUTPUT),
        ("forward casts to float32", SIGMOID_FLOAT32),
    ],
    "ch05.broadcast": [
        (
            "the kit's own sum_to_shape",
            "from varfunc.functions.utils import sum_to_shape as my_sum_to_shape\n" + BROADCAST_MUL,
        ),
        ("a wrapper that calls the package's sum_to_shape", SUM_WRAPS_THE_KITS),
        ("BroadcastMul calls the package's sum_to_shape, not my_sum_to_shape", BROADCAST_CALLS_THE_KITS),
        ("sums only the leading dims", SUM_LEADING_ONLY),
        ("sums only the stretched size-1 dims", SUM_STRETCHED_ONLY),
        ("sums the stretched dims without keepdims", SUM_WITHOUT_KEEPDIMS),
        ("swapped gradients in BroadcastMul", BROADCAST_SWAPPED),
        ("BroadcastMul's backward does not sum back", BROADCAST_NO_SUM_IN_BACKWARD),
    ],
    "ch05.matmul": [
        ("no transposes", MATMUL_NO_TRANSPOSES),
        ("grad_b transposed", MATMUL_GRAD_B_TRANSPOSED),
        ("operands in the wrong order (right only for symmetric cases)", MATMUL_SQUARE_ONLY),
        ("ignores needs_input_grad", MATMUL_ALWAYS_BOTH),
        ("returns only the needed gradients, no None", MATMUL_ONLY_THE_NEEDED),
    ],
}

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
    ],
    "ch05.broadcast": [
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
