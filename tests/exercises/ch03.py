"""Plausible wrong answers to chapter 03's exercises, each must fail its check; other right answers pass."""

# The forward every answer below shares where it is written this way; each answer adds its backward.
MUL_FORWARD = """
class Mul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b
"""

DIV_FORWARD = """
class Div(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a / b
"""

# A Mul whose backward returns GRADS, the pair of gradients each wrong answer below writes its way.
MUL_RETURNING = (
    MUL_FORWARD
    + """
    def backward(self, grad_output):
        a, b = self.saved_tensors
        return GRADS
"""
)

MUL_SWAPPED = MUL_RETURNING.replace(
    "GRADS", "sum_to_shape(grad_output * a, a.shape), sum_to_shape(grad_output * b, b.shape)"
)

MUL_NO_SUM = MUL_RETURNING.replace("GRADS", "grad_output * b, grad_output * a")

MUL_ATTRIBUTES = """
class Mul(Function):
    def forward(self, a, b):
        self.a, self.b = a, b  # kept as attributes: an in-place change goes unnoticed
        return a * b

    def backward(self, grad_output):
        grad_a = sum_to_shape(grad_output * self.b, self.a.shape)
        return grad_a, sum_to_shape(grad_output * self.a, self.b.shape)
"""

MUL_FORGETS_GRAD_OUTPUT = (
    MUL_FORWARD
    + """
    def backward(self, grad_output):
        a, b = self.saved_tensors
        ones = np.ones_like(grad_output)
        return sum_to_shape(b * ones, a.shape), sum_to_shape(a * ones, b.shape)
"""
)

DIV_SIGN = (
    DIV_FORWARD
    + """
    def backward(self, grad_output):
        a, b = self.saved_tensors
        return sum_to_shape(grad_output / b, a.shape), sum_to_shape(grad_output * a / b**2, b.shape)
"""
)

DIV_NOT_SQUARED = (
    DIV_FORWARD
    + """
    def backward(self, grad_output):
        a, b = self.saved_tensors
        return sum_to_shape(grad_output / b, a.shape), sum_to_shape(-grad_output * a / b, b.shape)
"""
)

DIV_NO_SUM = (
    DIV_FORWARD
    + """
    def backward(self, grad_output):
        a, b = self.saved_tensors
        return grad_output / b, -grad_output * a / b**2
"""
)

DIV_MUL_FORWARD = """
class Div(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * (1 / b)

    def backward(self, grad_output):
        a, b = self.saved_tensors
        return sum_to_shape(grad_output / b, a.shape), sum_to_shape(grad_output / b, b.shape)
"""

DIV_ATTRIBUTES = """
class Div(Function):
    def forward(self, a, b):
        self.a, self.b = a, b  # kept as attributes: an in-place change goes unnoticed
        return a / b

    def backward(self, grad_output):
        grad_a = sum_to_shape(grad_output / self.b, self.a.shape)
        return grad_a, sum_to_shape(-grad_output * self.a / self.b**2, self.b.shape)
"""

DIV_SAVES_OUTPUT = """
class Div(Function):
    def forward(self, a, b):
        self.a_shape = a.shape
        y = a / b
        self.save_for_backward(b, y)  # the output, not a: an in-place change to a cannot harm it
        return y

    def backward(self, grad_output):
        b, y = self.saved_tensors
        return sum_to_shape(grad_output / b, self.a_shape), sum_to_shape(-grad_output * y / b, b.shape)
"""

MUL_COPIES = """
class Mul(Function):
    def forward(self, a, b):
        self.a, self.b = a.copy(), b.copy()  # copies: an in-place change to a or b cannot reach them
        return a * b

    def backward(self, grad_output):
        grad_a = sum_to_shape(grad_output * self.b, self.a.shape)
        return grad_a, sum_to_shape(grad_output * self.a, self.b.shape)
"""

MUL_THE_KITS = "from varfunc.functions.basic_ops import Mul\n"

MUL_INHERITS_THE_KITS = """
from varfunc.functions import basic_ops

class Mul(basic_ops.Mul):
    pass
"""

MUL_BORROWS_THE_KITS_METHODS = """
from varfunc.functions import basic_ops

class Mul(Function):
    forward = basic_ops.Mul.forward
    backward = basic_ops.Mul.backward
"""

MUL_NEEDS_INDEX_SLIP = (
    MUL_FORWARD
    + """
    def backward(self, grad_output):
        a, b = self.saved_tensors
        grad_a = grad_b = None
        if self.needs_input_grad[0]:
            grad_a = sum_to_shape(grad_output * b, a.shape)
        if self.needs_input_grad[0]:  # copied from the line above: should be [1]
            grad_b = sum_to_shape(grad_output * a, b.shape)
        return grad_a, grad_b
"""
)

MUL_SUMS_ADDED_OR_STRETCHED_DIMS = """
def reduce_to(grad, shape):
    # sums the leading dims broadcasting added, or else the stretched size-1 dims: never both
    if grad.ndim > len(shape):
        return grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=axes, keepdims=True)

class Mul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, grad_output):
        a, b = self.saved_tensors
        return reduce_to(grad_output * b, a.shape), reduce_to(grad_output * a, b.shape)
"""

DIV_KEEPS_ITS_OUTPUT = """
class Div(Function):
    def forward(self, a, b):
        self.a_shape = a.shape
        self.save_for_backward(b)
        self.y = a / b  # the output as an attribute: the output Variable gets a copy
        return self.y

    def backward(self, grad_output):
        (b,) = self.saved_tensors
        return sum_to_shape(grad_output / b, self.a_shape), sum_to_shape(-grad_output * self.y / b, b.shape)
"""

MUL_WRITES_INTO_GRAD_OUTPUT = (
    MUL_FORWARD
    + """
    def backward(self, grad_output):
        a, b = self.saved_tensors
        grad_a = sum_to_shape(grad_output * b, a.shape)
        grad_output *= a  # right values, but the caller's array changes
        return grad_a, sum_to_shape(grad_output, b.shape)
"""
)

# Right on same-shape inputs and on a vector broadcast along a leading dim, wrong where a size-1 dim
# is stretched: each reduces a stretched dim with EXPR instead of a sum (and a leading dim with LEADING).
STRETCHED_REDUCED_WITH = """
def reduce(g, shape):
    while g.ndim > len(shape):
        g = LEADING
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = EXPR
    return g
""".replace("LEADING", "g.sum(axis=0)")

MUL_REDUCED = MUL_RETURNING.replace(
    "GRADS", "reduce(grad_output * b, a.shape), reduce(grad_output * a, b.shape)"
)

MUL_MEAN_OVER_STRETCHED = (
    STRETCHED_REDUCED_WITH.replace("EXPR", "g.mean(axis=i, keepdims=True)") + MUL_REDUCED
)
MUL_TAKES_THE_FIRST = STRETCHED_REDUCED_WITH.replace("EXPR", "g.take([0], axis=i)") + MUL_REDUCED
DIV_REDUCED = (
    DIV_FORWARD
    + """
    def backward(self, grad_output):
        a, b = self.saved_tensors
        return reduce(grad_output / b, a.shape), reduce(-grad_output * a / b**2, b.shape)
"""
)
DIV_TAKES_THE_FIRST = STRETCHED_REDUCED_WITH.replace("EXPR", "g.take([0], axis=i)") + DIV_REDUCED
DIV_MEAN_NOT_SUM = (
    STRETCHED_REDUCED_WITH.replace("g.sum(axis=0)", "g.mean(axis=0)").replace(
        "EXPR", "g.mean(axis=i, keepdims=True)"
    )
    + DIV_REDUCED
)

# Right where one size-1 dim of an operand is stretched, wrong where two are (a of shape (1, 3, 1)):
# the loop returns after the first stretched dim, or only the first size-1 dim is looked at
MUL_FIRST_STRETCHED_ONLY = (
    STRETCHED_REDUCED_WITH.replace("g = EXPR", "return g.sum(axis=i, keepdims=True)") + MUL_REDUCED
)
DIV_FIRST_SIZE_1_DIM_ONLY = (
    """
def reduce(g, shape):
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    if 1 in shape:
        i = shape.index(1)  # the first size-1 dim only
        g = g.sum(axis=i, keepdims=True)
    return g
"""
    + DIV_REDUCED
)

# what one call keeps, in a dict on the class (copies, so that no in-place change reaches them): two
# nodes in one graph share it, and the second overwrites the first's
MUL_ON_THE_CLASS = """
class Mul(Function):
    saved = {}

    def forward(self, a, b):
        self.saved["a"], self.saved["b"] = a.copy(), b.copy()
        return a * b

    def backward(self, grad_output):
        a, b = self.saved["a"], self.saved["b"]
        return sum_to_shape(grad_output * b, a.shape), sum_to_shape(grad_output * a, b.shape)
"""
DIV_ON_THE_CLASS = (
    MUL_ON_THE_CLASS.replace("Mul", "Div")
    .replace("a * b", "a / b")
    .replace("grad_output * b, a.shape", "grad_output / b, a.shape")
    .replace("grad_output * a, b.shape", "-grad_output * a / b**2, b.shape")
)

# backward returns grad_output unchanged for a (Add's gradient), and b's right
MUL_ADDS = MUL_RETURNING.replace(
    "GRADS", "sum_to_shape(grad_output, a.shape), sum_to_shape(grad_output * a, b.shape)"
)

# a mistake no hint names: twice the right gradient for a
MUL_DOUBLED = MUL_RETURNING.replace(
    "GRADS", "sum_to_shape(2 * grad_output * b, a.shape), sum_to_shape(grad_output * a, b.shape)"
)

# backward without `a, b = self.saved_tensors`: a and b are then the notebook's Variables
MUL_READS_THE_NOTEBOOKS_VARIABLES = MUL_RETURNING.replace("        a, b = self.saved_tensors\n", "").replace(
    "GRADS", "sum_to_shape(grad_output * b, a.shape), sum_to_shape(grad_output * a, b.shape)"
)

# right gradients, a float32 result of forward
MUL_FLOAT32 = MUL_RETURNING.replace("return a * b", "return (a * b).astype(np.float32)").replace(
    "GRADS", "sum_to_shape(grad_output * b, a.shape), sum_to_shape(grad_output * a, b.shape)"
)
DIV_FLOAT32 = DIV_SIGN.replace("return a / b", "return (a / b).astype(np.float32)").replace(
    "grad_output * a / b**2", "-grad_output * a / b**2"
)

# g / b once, reused for b's gradient: summed first (wrong), or at the output's shape (right)
DIV_FROM_SUMMED_GRAD_A = (
    DIV_FORWARD
    + """
    def backward(self, grad_output):
        a, b = self.saved_tensors
        grad_a = sum_to_shape(grad_output / b, a.shape)
        return grad_a, sum_to_shape(-grad_a * a / b, b.shape)
"""
)
DIV_FROM_G_OVER_B = DIV_FROM_SUMMED_GRAD_A.replace(
    "grad_a = sum_to_shape(grad_output / b, a.shape)", "g_b = grad_output / b"
).replace("return grad_a, sum_to_shape(-grad_a", "return sum_to_shape(g_b, a.shape), sum_to_shape(-g_b")

WRONG_ANSWERS = {
    "ch03.mul": [
        ("averages over the stretched size-1 dims", MUL_MEAN_OVER_STRETCHED),
        ("keeps the first row of a stretched dim (take([0]))", MUL_TAKES_THE_FIRST),
        ("the kit's own Mul, imported", MUL_THE_KITS),
        ("a subclass that inherits the kit's forward and backward", MUL_INHERITS_THE_KITS),
        ("backward writes into grad_output", MUL_WRITES_INTO_GRAD_OUTPUT),
        ("the kit's Mul.forward and .backward in a class of its own", MUL_BORROWS_THE_KITS_METHODS),
        ("needs_input_grad[0] tested for b too (copied line)", MUL_NEEDS_INDEX_SLIP),
        ("sums the added dims or the stretched ones, never both", MUL_SUMS_ADDED_OR_STRETCHED_DIMS),
        ("swapped gradients: g*a for a and g*b for b", MUL_SWAPPED),
        ("forgot to sum over broadcast dims", MUL_NO_SUM),
        ("kept a and b as attributes instead of save_for_backward", MUL_ATTRIBUTES),
        ("forgot to multiply by grad_output", MUL_FORGETS_GRAD_OUTPUT),
        ("grad_output unchanged for a, as Add's backward", MUL_ADDS),
        ("twice the gradient for a", MUL_DOUBLED),
        (
            "backward reads the notebook's Variables a and b, not self.saved_tensors",
            MUL_READS_THE_NOTEBOOKS_VARIABLES,
        ),
        ("forward casts its result to float32", MUL_FLOAT32),
        (
            "forward computes in float64 whatever the inputs' dtype",
            MUL_RETURNING.replace("return a * b", "return np.multiply(a, b, dtype=np.float64)").replace(
                "GRADS", "sum_to_shape(grad_output * b, a.shape), sum_to_shape(grad_output * a, b.shape)"
            ),
        ),
        ("own reduce returns after the first stretched dim", MUL_FIRST_STRETCHED_ONLY),
        ("a dict on the class keeps a and b: two nodes share it", MUL_ON_THE_CLASS),
        (
            "backward casts the gradient for a to float32",
            MUL_RETURNING.replace(
                "GRADS",
                "sum_to_shape(grad_output * b, a.shape).astype(np.float32), "
                "sum_to_shape(grad_output * a, b.shape)",
            ),
        ),
        (
            "each gradient summed to the other input's shape",
            MUL_RETURNING.replace(
                "GRADS", "sum_to_shape(grad_output * b, b.shape), sum_to_shape(grad_output * a, a.shape)"
            ),
        ),
    ],
    "ch03.div": [
        ("keeps the first row of a stretched dim (take([0]))", DIV_TAKES_THE_FIRST),
        ("sign error in the gradient for b", DIV_SIGN),
        ("divided by b instead of b**2 in the gradient for b", DIV_NOT_SQUARED),
        ("forgot to sum over broadcast dims", DIV_NO_SUM),
        ("averaged over broadcast dims instead of summing", DIV_MEAN_NOT_SUM),
        ("gradient for b written as g / b, like a's", DIV_MUL_FORWARD),
        ("kept a and b as attributes instead of save_for_backward", DIV_ATTRIBUTES),
        ("forward casts its result to float32", DIV_FLOAT32),
        (
            "forward computes in float64 whatever the inputs' dtype",
            DIV_SIGN.replace("return a / b", "return np.asarray(a / b, dtype=float)").replace(
                "grad_output * a / b**2", "-grad_output * a / b**2"
            ),
        ),
        ("own reduce sums only the first size-1 dim (shape.index(1))", DIV_FIRST_SIZE_1_DIM_ONLY),
        ("a dict on the class keeps a and b: two nodes share it", DIV_ON_THE_CLASS),
        (
            "b**2 in float32 in the gradient for b",
            DIV_SIGN.replace("grad_output * a / b**2", "-grad_output * a / np.square(b).astype(np.float32)"),
        ),
        (
            "b**2 written as b * abs(b): the sign is lost for a negative b",
            DIV_SIGN.replace("grad_output * a / b**2", "-grad_output * a / (b * np.abs(b))"),
        ),
        ("the gradient for b made from a's, already summed to a's shape", DIV_FROM_SUMMED_GRAD_A),
    ],
}

RIGHT_ANSWERS = {
    "ch03.mul": [("keeps copies of a and b as attributes", MUL_COPIES)],
    "ch03.div": [
        ("saves b and the output y, the gradient for b is -g * y / b", DIV_SAVES_OUTPUT),
        # right since every output of a Function written outside the kit is a copy: a later in-place
        # change to the output Variable leaves the attribute as forward made it
        ("keeps its output as an attribute", DIV_KEEPS_ITS_OUTPUT),
        ("g / b computed once, the gradient for b made from it", DIV_FROM_G_OVER_B),
    ],
}
