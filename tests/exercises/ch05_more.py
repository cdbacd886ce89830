"""More plausible wrong answers to chapter 05's exercises (ch05.py merges them into its WRONG_ANSWERS)."""

_SIGMOID = """
class MySigmoid(Function):
    def forward(self, a):
        y = FORWARD
        self.save_for_backward(y)
        return y

    def backward(self, grad_output):
        (y,) = self.saved_tensors
        return BACKWARD
"""


def _sigmoid(forward: str = "1 / (1 + np.exp(-a))", backward: str = "grad_output * y * (1 - y)") -> str:
    return _SIGMOID.replace("FORWARD", forward).replace("BACKWARD", backward)


_MATMUL = """
class MyMatmul(Function):
    def forward(self, a, b):
        SAVE
        return FORWARD

    def backward(self, grad_output):
        a, b = LOAD
        grad_a = grad_output @ b.T if self.needs_input_grad[0] else None
        grad_b = a.T @ grad_output if self.needs_input_grad[1] else None
        return grad_a, grad_b
"""


def _matmul(forward: str = "a @ b", on_the_class: bool = False) -> str:
    save, load = "self.save_for_backward(a, b)", "self.saved_tensors"
    if on_the_class:  # copies in a dict on the class: two nodes in one graph share it
        save = "MyMatmul.saved = {'a': a.copy(), 'b': b.copy()}"
        load = "MyMatmul.saved['a'], MyMatmul.saved['b']"
    return _MATMUL.replace("SAVE", save).replace("LOAD", load).replace("FORWARD", forward)


# a right my_sum_to_shape, for the BroadcastMul answers here and in ch05.py
GOOD_SUM = """
def my_sum_to_shape(grad, shape):
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True)
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

BROADCAST_ON_THE_CLASS = GOOD_SUM + BROADCAST_MUL.replace(
    "    def forward", "    saved = {}\n\n    def forward"
).replace("self.save_for_backward(a, b)", 'self.saved["a"], self.saved["b"] = a.copy(), b.copy()').replace(
    "a, b = self.saved_tensors", 'a, b = self.saved["a"], self.saved["b"]'
)

# right on every case but one: for a shape of 1s only it sums everything into a 0-d array, which
# drops the kept dims (shape (1, 1, 1) needs three)
SUM_ALL_ONES_TO_0D = (
    GOOD_SUM.replace(
        "    extra = ", "    if all(n == 1 for n in shape):\n        return grad.sum()\n    extra = "
    )
    + BROADCAST_MUL
)


def _sum(body: str) -> str:
    """A my_sum_to_shape with this body, and the right BroadcastMul."""
    return "def my_sum_to_shape(grad, shape):\n" + body + BROADCAST_MUL


def _matmul_backward(grads: str) -> str:
    """A MyMatmul whose backward returns grads (from a, b and grad_output)."""
    head, _ = _MATMUL.split("        grad_a =")
    return (
        head.replace("SAVE", "self.save_for_backward(a, b)")
        .replace("LOAD", "self.saved_tensors")
        .replace("FORWARD", "a @ b")
        + f"        return {grads}\n"
    )


MORE_WRONG_ANSWERS = {
    "ch05.sigmoid": [
        ("exp(a) / (1 + exp(a)): inf / inf = nan past a = 709", _sigmoid("np.exp(a) / (1 + np.exp(a))")),
        (
            "backward clips the saved y to [1e-7, 1 - 1e-7]",
            _sigmoid(backward="grad_output * np.clip(y, 1e-7, 1 - 1e-7) * (1 - np.clip(y, 1e-7, 1 - 1e-7))"),
        ),
        (
            "forward computes in float64 whatever a's dtype",
            _sigmoid("1 / (1 + np.exp(-a.astype(np.float64)))"),
        ),
        (
            "backward (1 / y - 1) * y**2: 1 / 0 = inf at a = -1000",
            _sigmoid(backward="grad_output * (1 / y - 1) * y**2"),
        ),
        (
            "backward applies the sigmoid to y again",
            _sigmoid(backward="grad_output * y * (1 - y) / (1 + np.exp(-y))"),
        ),
        (
            "backward multiplies by the sum of grad_output",
            _sigmoid(backward="grad_output.sum() * y * (1 - y)"),
        ),
        (
            "backward as a 1-D Jacobian, grad_output @ diag",
            _sigmoid(backward="grad_output @ np.diag(y * (1 - y))"),
        ),
    ],
    "ch05.broadcast": [
        ("BroadcastMul keeps a and b in a dict on the class: two nodes share it", BROADCAST_ON_THE_CLASS),
        ("a shape of 1s only summed into a 0-d array (the kept dims dropped)", SUM_ALL_ONES_TO_0D),
        (
            "one leading dim summed (axis=0 once), () handled apart",
            _sum(
                "    if shape == ():\n        return grad.sum()\n    if grad.ndim > len(shape):\n"
                "        grad = grad.sum(axis=0)\n"
                "    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)\n"
                "    return grad.sum(axis=stretched, keepdims=True)\n"
            ),
        ),
        ("grad.reshape(-1, *shape).sum(axis=0)", _sum("    return grad.reshape(-1, *shape).sum(axis=0)\n")),
        (
            "keepdims on the leading dims too",
            _sum(
                "    extra = grad.ndim - len(shape)\n"
                "    grad = grad.sum(axis=tuple(range(extra)), keepdims=True)\n"
                "    return grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)\n"
            ),
        ),
        (
            "BroadcastMul sums only b's gradient back (a taken as the larger)",
            GOOD_SUM + BROADCAST_MUL.replace("my_sum_to_shape(grad_output * b, a.shape)", "grad_output * b"),
        ),
    ],
    "ch05.matmul": [
        ("keeps a and b in a dict on the class: two nodes share it", _matmul(on_the_class=True)),
        ("forward casts its result to float64", _matmul("(a @ b).astype(np.float64)")),
        (
            "grad_a always, and zeros, not None, for an unneeded grad_b",
            _matmul_backward(
                "grad_output @ b.T, a.T @ grad_output if self.needs_input_grad[1] else np.zeros_like(b)"
            ),
        ),
        (
            "needs_input_grad[1] read for a and [0] for b",
            _matmul_backward(
                "grad_output @ b.T if self.needs_input_grad[1] else None, "
                "a.T @ grad_output if self.needs_input_grad[0] else None"
            ),
        ),
    ],
}
