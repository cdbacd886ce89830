"""Plausible wrong answers to chapter 05's exercises, each must fail its check (right ones: ch05_right.py)."""

from .ch05_more import BROADCAST_MUL, GOOD_SUM

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

SUM_LEADING_ONLY = (
    """
def my_sum_to_shape(grad, shape):
    extra = grad.ndim - len(shape)
    return grad.sum(axis=tuple(range(extra)))
"""
    + BROADCAST_MUL
)

SUM_DECIDES_FROM_THE_FIRST_DIM = (
    """
def my_sum_to_shape(grad, shape):
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[0] != 1)
    return grad.sum(axis=stretched, keepdims=True)
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

_RIGHT_RETURN = "my_sum_to_shape(grad_output * b, a.shape), my_sum_to_shape(grad_output * a, b.shape)"
BROADCAST_SWAPPED = GOOD_SUM + BROADCAST_MUL.replace(
    _RIGHT_RETURN, "my_sum_to_shape(grad_output * a, a.shape), my_sum_to_shape(grad_output * b, b.shape)"
)
BROADCAST_NO_SUM_IN_BACKWARD = GOOD_SUM + BROADCAST_MUL.replace(
    _RIGHT_RETURN, "grad_output * b, grad_output * a"
)

SUM_WRAPS_THE_KITS = (
    """
def my_sum_to_shape(grad, shape):
    return sum_to_shape(grad, shape)
"""
    + BROADCAST_MUL
)

BROADCAST_CALLS_THE_KITS = GOOD_SUM + BROADCAST_MUL.replace("my_sum_to_shape(", "sum_to_shape(")

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

SIGMOID_KEEPS_THE_INPUT_IN_A_DICT = """
class MySigmoid(Function):
    def forward(self, a):
        self.keep = {"a": a}  # the input, where no attribute check looks
        y = 1 / (1 + np.exp(-a))
        self.save_for_backward(y)
        return y

    def backward(self, grad_output):
        s = 1 / (1 + np.exp(-self.keep["a"]))
        return grad_output * s * (1 - s)
"""

SIGMOID_BORROWS_THE_KITS = """
from varfunc.functions.pointwise import Sigmoid


class MySigmoid(Function):
    def forward(self, a):
        y = Variable(a).sigmoid().data
        self.save_for_backward(y)
        return y

    def backward(self, grad_output):
        (y,) = self.saved_tensors
        return Sigmoid.derivative(None, y, grad_output)
"""

SUM_AS_A_DEFAULT_ARGUMENT = (
    """
def my_sum_to_shape(grad, shape, _kit=sum_to_shape):
    return _kit(grad, shape)
"""
    + BROADCAST_MUL
)

SUM_AS_A_PARTIAL = (
    """
import functools

my_sum_to_shape = functools.partial(sum_to_shape)
"""
    + BROADCAST_MUL
)


def _sigmoid_of(forward: str) -> str:
    """A MySigmoid whose forward computes y = forward, with the right backward."""
    return SIGMOID_MISSING_ONE_MINUS_Y.replace("1 / (1 + np.exp(-a))", forward).replace(
        "return grad_output * y\n", "return grad_output * y * (1 - y)\n"
    )


SIGMOID_WRONG_SIGN = SIGMOID_MISSING_ONE_MINUS_Y.replace(
    "return grad_output * y", "return -grad_output * y * (1 - y)"
)

WRONG_ANSWERS = {
    "ch05.sigmoid": [
        ("a wrong sign, from the saved output", SIGMOID_WRONG_SIGN),
        ("the kit's own Sigmoid", "from varfunc.functions.pointwise import Sigmoid as MySigmoid\n"),
        ("backward forgets the (1 - y) factor", SIGMOID_MISSING_ONE_MINUS_Y),
        ("saves the input and applies y (1 - y) to it", SIGMOID_FORMULA_ON_INPUT),
        ("tanh's derivative 1 - y^2", SIGMOID_TANH_DERIVATIVE),
        ("saves the input and recomputes the sigmoid in backward", SIGMOID_SAVES_INPUT_RECOMPUTES),
        ("saves y, but recomputes the sigmoid from self.a in backward", SIGMOID_RECOMPUTES_FROM_AN_ATTRIBUTE),
        ("backward forgets to multiply by grad_output", SIGMOID_FORGETS_GRAD_OUTPUT),
        ("forward casts to float32", SIGMOID_FLOAT32),
        ("keeps the input in a dict and recomputes from it", SIGMOID_KEEPS_THE_INPUT_IN_A_DICT),
        ("forward and backward borrow the kit's Sigmoid", SIGMOID_BORROWS_THE_KITS),
        (
            "forward clips a to [-5, 5] (against overflow)",
            _sigmoid_of("1 / (1 + np.exp(-np.clip(a, -5, 5)))"),
        ),
        (
            "forward clips a to [-4, 4] (a hard saturation)",
            _sigmoid_of("1 / (1 + np.exp(-np.clip(a, -4, 4)))"),
        ),
        (
            "forward cuts off to 0 and 1 beyond |a| > 5",
            _sigmoid_of("np.where(np.abs(a) > 5, (a > 0) * 1.0, 1 / (1 + np.exp(-a)))"),
        ),
        ("forward cuts off to 0 below a = -20", _sigmoid_of("np.where(a < -20, 0.0, 1 / (1 + np.exp(-a)))")),
    ],
    "ch05.broadcast": [
        (
            "the kit's own sum_to_shape",
            "from varfunc.functions.utils import sum_to_shape as my_sum_to_shape\n" + BROADCAST_MUL,
        ),
        ("a wrapper that calls the package's sum_to_shape", SUM_WRAPS_THE_KITS),
        ("the package's sum_to_shape held as a default argument", SUM_AS_A_DEFAULT_ARGUMENT),
        ("the package's sum_to_shape through functools.partial", SUM_AS_A_PARTIAL),
        ("BroadcastMul calls the package's sum_to_shape, not my_sum_to_shape", BROADCAST_CALLS_THE_KITS),
        ("sums only the leading dims", SUM_LEADING_ONLY),
        ("sums only the stretched size-1 dims", SUM_STRETCHED_ONLY),
        ("decides every dim from grad.shape[0], not grad.shape[i]", SUM_DECIDES_FROM_THE_FIRST_DIM),
        (
            "decides dim i from grad.shape[i - 1]",
            SUM_DECIDES_FROM_THE_FIRST_DIM.replace("grad.shape[0] != 1", "grad.shape[i - 1] != 1"),
        ),
        ("sums the stretched dims without keepdims", SUM_WITHOUT_KEEPDIMS),
        ("swapped gradients in BroadcastMul", BROADCAST_SWAPPED),
        ("BroadcastMul's backward does not sum back", BROADCAST_NO_SUM_IN_BACKWARD),
    ],
    "ch05.matmul": [
        (
            "grad_a cast to float32",
            MATMUL_GRAD_B_TRANSPOSED.replace(
                "grad_a = grad_output @ b.T", "grad_a = (grad_output @ b.T).astype(np.float32)"
            ).replace("(a.T @ grad_output).T", "a.T @ grad_output"),
        ),
        ("no transposes", MATMUL_NO_TRANSPOSES),
        ("grad_b transposed", MATMUL_GRAD_B_TRANSPOSED),
        ("operands in the wrong order (right only for symmetric cases)", MATMUL_SQUARE_ONLY),
        ("ignores needs_input_grad", MATMUL_ALWAYS_BOTH),
        ("returns only the needed gradients, no None", MATMUL_ONLY_THE_NEEDED),
    ],
}

# More wrong answers, and the right answers other than the stored solutions: in rooms of their own.
from .ch05_more import MORE_WRONG_ANSWERS  # noqa: E402
from .ch05_right import RIGHT_ANSWERS  # noqa: E402, F401

for _exercise, _answers in MORE_WRONG_ANSWERS.items():
    WRONG_ANSWERS[_exercise] += _answers
