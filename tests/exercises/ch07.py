"""Plausible wrong answers to chapter 07's exercises, each must fail its check; other right answers pass."""


def _softplus(forward: str, backward: str) -> str:
    return (
        "class Softplus(Function):\n"
        "    def forward(self, a):\n"
        "        self.save_for_backward(a)\n"
        f"        return {forward}\n"
        "\n"
        "    def backward(self, grad_output):\n"
        "        (a,) = self.saved_tensors\n"
        f"        return {backward}\n"
    )


STABLE = "np.maximum(a, 0) + np.log1p(np.exp(-np.abs(a)))"
SIGMOID = "grad_output * 0.5 * (1 + np.tanh(a / 2))"


def _clamp(forward_body: str, backward: str = "grad_output", signature: str = "grad_output, grad_mask=None"):
    return (
        "class ClampSTE(Function):\n"
        "    def __init__(self, lo, hi):\n"
        "        self.lo = lo\n"
        "        self.hi = hi\n"
        "\n"
        "    def forward(self, a):\n"
        f"{forward_body}"
        "\n"
        f"    def backward(self, {signature}):\n"
        f"        return {backward}\n"
    )


MARKED = (
    "        mask = ((a < self.lo) | (a > self.hi)).astype(a.dtype)\n"
    "        self.mark_non_differentiable(mask)\n"
    "        return np.clip(a, self.lo, self.hi), mask\n"
)


def _mul_add(backward_body: str) -> str:
    return (
        "class MulAdd(Function):\n"
        "    def forward(self, a, b, c):\n"
        "        self.save_for_backward(a, b)\n"
        "        return a * b + c\n"
        "\n"
        "    def backward(self, grad_output):\n"
        "        a, b = self.saved_tensors\n"
        "        need_a, need_b, need_c = self.needs_input_grad\n"
        f"{backward_body}"
    )


WRONG_ANSWERS = {
    "ch07.softplus": [
        ("naive log(1 + exp(a))", _softplus("np.log(1 + np.exp(a))", SIGMOID)),
        (
            "backward computes the sigmoid in float32",
            _softplus(STABLE, "grad_output * np.exp(-np.logaddexp(0, -a.astype(np.float32)))"),
        ),
        ("log1p(exp(a)): still overflows", _softplus("np.log1p(np.exp(a))", SIGMOID)),
        ("backward exp(a) / (1 + exp(a))", _softplus(STABLE, "grad_output * np.exp(a) / (1 + np.exp(a))")),
        ("backward uses softplus itself", _softplus(STABLE, f"grad_output * ({STABLE})")),
        ("backward forgets grad_output", _softplus(STABLE, "0.5 * (1 + np.tanh(a / 2))")),
        ("backward forgets grad_output, another sigmoid", _softplus(STABLE, "1 / (1 + np.exp(-a))")),
        ("backward is sigmoid(-a)", _softplus(STABLE, "grad_output / (1 + np.exp(a))")),
        ("backward has the wrong sign", _softplus(STABLE, f"-{SIGMOID}")),
        (
            "a for a > 5, exact only where the check's points were",
            _softplus("np.where(a > 5, a, np.log1p(np.exp(np.minimum(a, 5))))", SIGMOID),
        ),
        (
            "keeps a copy of a on the class: the second node of a graph overwrites the first's",
            "class Softplus(Function):\n"
            "    def forward(self, a):\n"
            "        Softplus.a = a.copy()\n"
            f"        return {STABLE}\n"
            "\n"
            "    def backward(self, grad_output):\n"
            "        return grad_output * 0.5 * (1 + np.tanh(Softplus.a / 2))\n",
        ),
        (
            "switches to a past 700: right in float64, inf and nan in float32",
            "class Softplus(Function):\n"
            "    def forward(self, a):\n"
            "        self.save_for_backward(a)\n"
            "        return np.where(a > 700, a, np.log1p(np.exp(np.minimum(a, 700))))\n"
            "\n"
            "    def backward(self, grad_output):\n"
            "        (a,) = self.saved_tensors\n"
            "        e = np.exp(np.minimum(a, 700))\n"
            "        return grad_output * np.where(a > 700, 1.0, e / (1 + e))\n",
        ),
        (
            "computes in float64 whatever a's dtype (a float32 input, a float64 result)",
            _softplus("np.logaddexp(0, a.astype(np.float64))", "grad_output * 0.5 * (1 + np.tanh(a / 2))"),
        ),
        (
            "keeps a as an attribute instead of save_for_backward",
            "class Softplus(Function):\n"
            "    def forward(self, a):\n"
            "        self.a = a\n"
            f"        return {STABLE}\n"
            "\n"
            "    def backward(self, grad_output):\n"
            "        return grad_output * 0.5 * (1 + np.tanh(self.a / 2))\n",
        ),
        (
            "tanh written in place into a / 2: for a 0-d a, a / 2 is a NumPy scalar that out= refuses",
            _softplus(STABLE, SIGMOID).replace(
                "return grad_output * 0.5 * (1 + np.tanh(a / 2))",
                "t = a / 2\n        np.tanh(t, out=t)\n        return grad_output * 0.5 * (1 + t)",
            ),
        ),
    ],
    "ch07.clamp_ste": [
        (
            "a mask of the values above hi only",
            _clamp(MARKED.replace("(a < self.lo) | (a > self.hi)", "a > self.hi")),
        ),
        (
            "mask from the distance to the midpoint of [lo, hi]",
            _clamp(
                MARKED.replace(
                    "((a < self.lo) | (a > self.hi))",
                    "(np.abs(a - (self.lo + self.hi) / 2) > (self.hi - self.lo) / 2)",
                )
            ),
        ),
        (
            "clamped values cast to float64",
            _clamp(
                MARKED.replace(
                    "np.clip(a, self.lo, self.hi)", "np.clip(a, self.lo, self.hi).astype(np.float64)"
                )
            ),
        ),
        (
            "lo and hi made ints in __init__",
            _clamp(MARKED).replace("= lo\n", "= int(lo)\n").replace("= hi\n", "= int(hi)\n"),
        ),
        (
            "lo and hi rounded in __init__",
            _clamp(MARKED).replace("= lo\n", "= round(lo)\n").replace("= hi\n", "= round(hi)\n"),
        ),
        (
            "lo and hi kept on the class: the last ClampSTE made sets them for all",
            _clamp(MARKED)
            .replace("self.lo = lo", "type(self).lo = lo")
            .replace("self.hi = hi", "type(self).hi = hi"),
        ),
        (
            "clamps to [-hi, hi]: ignores lo",
            _clamp(
                "        mask = (np.abs(a) > self.hi).astype(a.dtype)\n"
                "        self.mark_non_differentiable(mask)\n"
                "        return np.clip(a, -self.hi, self.hi), mask\n"
            ),
        ),
        (
            "forgets mark_non_differentiable",
            _clamp(
                "        mask = ((a < self.lo) | (a > self.hi)).astype(a.dtype)\n"
                "        return np.clip(a, self.lo, self.hi), mask\n"
            ),
        ),
        (
            "the true clamp gradient instead of straight-through",
            _clamp(
                "        outside = (a < self.lo) | (a > self.hi)\n"
                "        self.inside = ~outside\n"
                "        mask = outside.astype(a.dtype)\n"
                "        self.mark_non_differentiable(mask)\n"
                "        return np.clip(a, self.lo, self.hi), mask\n",
                "grad_output * self.inside",
            ),
        ),
        ("backward takes only one gradient", _clamp(MARKED, "grad_output", "grad_output")),
        (
            "backward passes |grad_output|: right for positive gradients only",
            _clamp(MARKED, "np.abs(grad_output)"),
        ),
        (
            "a mask with <= and >=: a value on a bound counts as clipped",
            _clamp(
                "        mask = ((a <= self.lo) | (a >= self.hi)).astype(a.dtype)\n"
                "        self.mark_non_differentiable(mask)\n"
                "        return np.clip(a, self.lo, self.hi), mask\n"
            ),
        ),
        (
            "a boolean mask (it needs no mark, but it is not the 0/1 mask asked for)",
            _clamp(
                "        mask = (a < self.lo) | (a > self.hi)\n"
                "        return np.clip(a, self.lo, self.hi), mask\n"
            ),
        ),
        (
            "a float64 mask for every input dtype",
            _clamp(
                "        mask = ((a < self.lo) | (a > self.hi)).astype(float)\n"
                "        self.mark_non_differentiable(mask)\n"
                "        return np.clip(a, self.lo, self.hi), mask\n"
            ),
        ),
    ],
    "ch07.mul_add": [
        (
            "keeps copies of a and b on the class: the second node of a graph overwrites the first's",
            "class MulAdd(Function):\n"
            "    def forward(self, a, b, c):\n"
            "        MulAdd.ab = (a.copy(), b.copy())\n"
            "        return a * b + c\n"
            "\n"
            "    def backward(self, grad_output):\n"
            "        a, b = MulAdd.ab\n"
            "        need_a, need_b, need_c = self.needs_input_grad\n"
            "        return (\n"
            "            grad_output * b if need_a else None,\n"
            "            grad_output * a if need_b else None,\n"
            "            grad_output if need_c else None,\n"
            "        )\n",
        ),
        (
            "keeps a and b as attributes instead of save_for_backward",
            "class MulAdd(Function):\n"
            "    def forward(self, a, b, c):\n"
            "        self.a, self.b = a, b\n"
            "        return a * b + c\n"
            "\n"
            "    def backward(self, grad_output):\n"
            "        need_a, need_b, need_c = self.needs_input_grad\n"
            "        grad_a = grad_output * self.b if need_a else None\n"
            "        grad_b = grad_output * self.a if need_b else None\n"
            "        return grad_a, grad_b, grad_output if need_c else None\n",
        ),
        (
            "ignores needs_input_grad",
            _mul_add("        return grad_output * b, grad_output * a, grad_output\n"),
        ),
        (
            "swapped gradients of a and b",
            _mul_add(
                "        grad_a = grad_output * a if need_a else None\n"
                "        grad_b = grad_output * b if need_b else None\n"
                "        return grad_a, grad_b, grad_output if need_c else None\n"
            ),
        ),
        (
            "returns no gradient for c",
            _mul_add(
                "        grad_a = grad_output * b if need_a else None\n"
                "        grad_b = grad_output * a if need_b else None\n"
                "        return grad_a, grad_b\n"
            ),
        ),
        (
            "needs_input_grad read in the wrong order",
            _mul_add(
                "        grad_a = grad_output * b if need_c else None\n"
                "        grad_b = grad_output * a if need_b else None\n"
                "        return grad_a, grad_b, grad_output if need_a else None\n"
            ),
        ),
    ],
}

E = "np.exp(-np.abs(a))"

SAVES_OUTPUT = (
    "class Softplus(Function):\n"
    "    def forward(self, a):\n"
    f"        y = {STABLE}\n"
    "        self.save_for_backward(y)\n"
    "        return y\n"
    "\n"
    "    def backward(self, grad_output):\n"
    "        (y,) = self.saved_tensors\n"
    "        return -grad_output * np.expm1(-y)  # sigmoid(a) = 1 - exp(-softplus(a))\n"
)

RIGHT_ANSWERS = {
    "ch07.softplus": [
        (
            "backward with np.where on the sign of a",
            _softplus(STABLE, f"grad_output * np.where(a >= 0, 1 / (1 + {E}), {E} / (1 + {E}))"),
        ),
        (
            "backward 1 / (1 + exp(-a)), which is 1 / inf = 0 at -1000",
            _softplus(STABLE, "grad_output / (1 + np.exp(-a))"),
        ),
        ("backward 0.5 * (1 + tanh(a / 2))", _softplus(STABLE, SIGMOID)),
        ("backward from the saved output: -expm1(-y)", SAVES_OUTPUT),
    ],
    "ch07.clamp_ste": [
        (
            "the mask from np.clip(a, lo, hi) != a",
            _clamp(MARKED.replace("((a < self.lo) | (a > self.hi))", "(np.clip(a, self.lo, self.hi) != a)")),
        ),
        (
            "np.logical_or and np.where for the mask, min/max for the clamp, *grads in backward",
            """
class ClampSTE(Function):
    def __init__(self, lo, hi):
        super().__init__()
        self.lo = lo
        self.hi = hi

    def forward(self, a):
        outside = np.logical_or(a < self.lo, a > self.hi)
        mask = np.where(outside, 1, 0).astype(a.dtype)
        self.mark_non_differentiable(mask)
        return np.minimum(np.maximum(a, self.lo), self.hi), mask

    def backward(self, *grads):
        return grads[0]
""",
        ),
        (
            "a zero mask with ones written where clipped, backward returns a copy",
            """
class ClampSTE(Function):
    def __init__(self, lo, hi):
        super().__init__()
        self.lo, self.hi = lo, hi

    def forward(self, a):
        mask = np.zeros_like(a)
        mask[(a < self.lo) | (a > self.hi)] = 1.0
        self.mark_non_differentiable(mask)
        clamped = a.clip(self.lo, self.hi)
        return clamped, mask

    def backward(self, grad_output, grad_mask):
        return grad_output.copy()
""",
        ),
        (
            "the mask as the sum of a below-lo and an above-hi mask",
            """
class ClampSTE(Function):
    def __init__(self, lo, hi):
        super().__init__()
        self.lo = lo
        self.hi = hi

    def forward(self, a):
        below = (a < self.lo).astype(a.dtype)
        above = (a > self.hi).astype(a.dtype)
        mask = below + above  # never both: lo <= hi
        self.mark_non_differentiable(mask)
        return np.clip(a, self.lo, self.hi), mask

    def backward(self, grad_output, grad_mask=None):
        return grad_output
""",
        ),
    ],
    "ch07.mul_add": [
        (
            "a list filled by index, returned as a tuple",
            """
class MulAdd(Function):
    def forward(self, a, b, c):
        self.save_for_backward(a, b)
        return a * b + c

    def backward(self, grad_output):
        a, b = self.saved_tensors
        grads = [None, None, None]
        if self.needs_input_grad[0]:
            grads[0] = grad_output * b
        if self.needs_input_grad[1]:
            grads[1] = grad_output * a
        if self.needs_input_grad[2]:
            grads[2] = grad_output
        return tuple(grads)
""",
        ),
        (
            "saves all three inputs, a generator over the candidates",
            """
class MulAdd(Function):
    def forward(self, a, b, c):
        self.save_for_backward(a, b, c)
        return np.add(np.multiply(a, b), c)

    def backward(self, grad_output):
        a, b, _ = self.saved_tensors
        makers = (lambda: grad_output * b, lambda: grad_output * a, lambda: grad_output.copy())
        return tuple(make() if need else None for make, need in zip(makers, self.needs_input_grad))
""",
        ),
    ],
}
