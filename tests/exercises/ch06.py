"""Plausible wrong answers to chapter 06's exercises, each must fail its check; other right answers pass."""


def _clip_hook(logged: str, returned: str) -> str:
    """A make_clip_hook whose hook appends logged to log and returns returned."""
    return (
        "def make_clip_hook(limit, log):\n"
        "    def hook(grad):\n"
        f"        log.append({logged})\n"
        f"        return {returned}\n"
        "    return hook\n"
    )


WRONG_ANSWERS = {
    "ch06.accumulate": [
        (
            "the code run, each .grad copied",
            """
x = Variable(np.array([1.0, -2.0, 3.0]))
y = (x * x).sum()
y.backward()
grad_after_one = x.grad.copy()
y.backward()
grad_after_two = x.grad.copy()
x.grad = None
(x * 3).sum().backward()
grad_after_reset = x.grad.copy()
""",
        ),
        (
            "thinks a second backward overwrites .grad",
            "grad_after_one = [2.0, -4.0, 6.0]\ngrad_after_two = [2.0, -4.0, 6.0]\n"
            "grad_after_reset = [3.0, 3.0, 3.0]\n",
        ),
        (
            "thinks x.grad = None does not reset the sum",
            "grad_after_one = [2.0, -4.0, 6.0]\ngrad_after_two = [4.0, -8.0, 12.0]\n"
            "grad_after_reset = [7.0, -5.0, 15.0]\n",
        ),
        (
            "forgets the factor 2 of d(x^2)/dx",
            "grad_after_one = [1.0, -2.0, 3.0]\ngrad_after_two = [2.0, -4.0, 6.0]\n"
            "grad_after_reset = [3.0, 3.0, 3.0]\n",
        ),
        (
            "sign lost: the derivative of x*x taken as 2|x|",
            "grad_after_one = [2.0, 4.0, 6.0]\n"
            "grad_after_two = [4.0, 8.0, 12.0]\n"
            "grad_after_reset = [3.0, 3.0, 3.0]\n",
        ),
        (
            "reset thought to give zeros",
            "grad_after_one = [2.0, -4.0, 6.0]\n"
            "grad_after_two = [4.0, -8.0, 12.0]\n"
            "grad_after_reset = [0.0, 0.0, 0.0]\n",
        ),
        (
            "reset written as one number",
            "grad_after_one = [2.0, -4.0, 6.0]\ngrad_after_two = [4.0, -8.0, 12.0]\ngrad_after_reset = 3.0\n",
        ),
        (
            "second backward squares (gradient of the gradient)",
            "grad_after_one = [2.0, -4.0, 6.0]\n"
            "grad_after_two = [4.0, 16.0, 36.0]\n"
            "grad_after_reset = [3.0, 3.0, 3.0]\n",
        ),
        (
            "the values of x*x instead of the gradient",
            "grad_after_one = [1.0, 4.0, 9.0]\n"
            "grad_after_two = [2.0, 8.0, 18.0]\n"
            "grad_after_reset = [3.0, 3.0, 3.0]\n",
        ),
        (
            "reset gradient taken as 3x",
            "grad_after_one = [2.0, -4.0, 6.0]\n"
            "grad_after_two = [4.0, -8.0, 12.0]\n"
            "grad_after_reset = [3.0, -6.0, 9.0]\n",
        ),
    ],
    "ch06.clip_hook": [
        ("logs max |g| as an int", _clip_hook("int(np.abs(grad).max())", "np.clip(grad, -limit, limit)")),
        (
            "logs max |g| as a NumPy scalar (no float(...))",
            _clip_hook("np.abs(grad).max()", "np.clip(grad, -limit, limit)"),
        ),
        (
            "returns the clipped gradient as float32",
            _clip_hook("float(np.abs(grad).max())", "np.clip(grad, -limit, limit).astype(np.float32)"),
        ),
        (
            "logs max |g| rounded",
            _clip_hook("round(float(np.abs(grad).max()))", "np.clip(grad, -limit, limit)"),
        ),
        (
            "clips to the limit made an int",
            _clip_hook("float(np.abs(grad).max())", "np.clip(grad, -int(limit), int(limit))"),
        ),
        (
            "a Python loop over the elements: right for 1-D gradients only",
            _clip_hook(
                "float(max(abs(g) for g in grad))", "np.array([max(-limit, min(limit, g)) for g in grad])"
            ),
        ),
        (
            "logs the largest |g| so far, not this call's",
            _clip_hook("max(log + [float(np.abs(grad).max())])", "np.clip(grad, -limit, limit)"),
        ),
        (
            "logs minus the smallest entry for the largest |g|",
            _clip_hook("float(-grad.min())", "np.clip(grad, -limit, limit)"),
        ),
        (
            "keeps the first call's clipped array and returns it at every call",
            "def make_clip_hook(limit, log):\n"
            "    kept = []\n"
            "    def hook(grad):\n"
            "        log.append(float(np.abs(grad).max()))\n"
            "        if not kept:\n"
            "            kept.append(np.clip(grad, -limit, limit))\n"
            "        return kept[0]\n"
            "    return hook\n",
        ),
        (
            "clips in place",
            "def make_clip_hook(limit, log):\n"
            "    def hook(grad):\n"
            "        log.append(float(np.abs(grad).max()))\n"
            "        np.clip(grad, -limit, limit, out=grad)\n"
            "        return grad\n"
            "    return hook\n",
        ),
        (
            "clips a copy but returns nothing",
            "def make_clip_hook(limit, log):\n"
            "    def hook(grad):\n"
            "        log.append(float(np.abs(grad).max()))\n"
            "        clipped = np.clip(grad, -limit, limit)\n"
            "    return hook\n",
        ),
        (
            "records after clipping",
            "def make_clip_hook(limit, log):\n"
            "    def hook(grad):\n"
            "        clipped = np.clip(grad, -limit, limit)\n"
            "        log.append(float(np.abs(clipped).max()))\n"
            "        return clipped\n"
            "    return hook\n",
        ),
        (
            "clips only from above",
            _clip_hook("float(np.abs(grad).max())", "np.minimum(grad, limit)"),
        ),
        (
            "logs max(grad), not max |grad|",
            _clip_hook("float(np.max(grad))", "np.clip(grad, -limit, limit)"),
        ),
        (
            "logs the norm",
            _clip_hook("float(np.linalg.norm(grad))", "np.clip(grad, -limit, limit)"),
        ),
        (
            "rescales the whole gradient by max |g| / limit",
            _clip_hook("float(np.abs(grad).max())", "grad / max(1.0, np.abs(grad).max() / limit)"),
        ),
        (
            "soft clip with tanh",
            _clip_hook("float(np.abs(grad).max())", "limit * np.tanh(grad / limit)"),
        ),
        (
            "log += [...] inside the hook (log made local)",
            "def make_clip_hook(limit, log):\n"
            "    def hook(grad):\n"
            "        log += [float(np.abs(grad).max())]\n"
            "        return np.clip(grad, -limit, limit)\n"
            "    return hook\n",
        ),
        (
            "returns a list",
            _clip_hook("float(np.abs(grad).max())", "np.clip(grad, -limit, limit).tolist()"),
        ),
        (
            "returns a Variable",
            _clip_hook("float(np.abs(grad).max())", "Variable(np.clip(grad, -limit, limit))"),
        ),
        (
            "clip bounds swapped",
            _clip_hook("float(np.abs(grad).max())", "np.clip(grad, limit, -limit)"),
        ),
        (
            "logs the index of the largest |g|",
            _clip_hook("float(np.abs(grad).argmax())", "np.clip(grad, -limit, limit)"),
        ),
        (
            "a new log list made inside make_clip_hook",
            "def make_clip_hook(limit, log):\n"
            "    log = []\n"
            "    def hook(grad):\n"
            "        log.append(float(np.abs(grad).max()))\n"
            "        return np.clip(grad, -limit, limit)\n"
            "    return hook\n",
        ),
        (
            "logs |g| of the first entry only",
            _clip_hook("float(abs(grad[0]))", "np.clip(grad, -limit, limit)"),
        ),
        (
            "flattens the clipped gradient",
            _clip_hook("float(np.abs(grad).max())", "np.clip(grad, -limit, limit).ravel()"),
        ),
        (
            "logs only when it clips",
            "def make_clip_hook(limit, log):\n"
            "    def hook(grad):\n"
            "        if np.abs(grad).max() > limit:\n"
            "            log.append(float(np.abs(grad).max()))\n"
            "        return np.clip(grad, -limit, limit)\n"
            "    return hook\n",
        ),
        (
            "rounds the clipped gradient",
            _clip_hook("float(np.abs(grad).max())", "np.round(np.clip(grad, -limit, limit), 2)"),
        ),
    ],
    "ch06.inplace": [
        (
            "each snippet run with the check's own snippet_raises",
            "from varfunc.grading.ch06 import INPLACE_SNIPPETS, snippet_raises\n\n"
            "predicted_raises = {k for k, source in INPLACE_SNIPPETS.items() if snippet_raises(source)}\n",
        ),
        ("thinks writes through .data[...] are caught", 'predicted_raises = {"A", "D", "E", "F", "G"}\n'),
        ("misses tanh_ and .data assignment", 'predicted_raises = {"A", "D"}\n'),
        ("thinks a leaf may change in place", 'predicted_raises = {"D", "E", "G"}\n'),
        ("thinks every in-place op raises", 'predicted_raises = {"A", "C", "D", "E", "G"}\n'),
        ("a frozenset that misses tanh_ and .data assignment", 'predicted_raises = frozenset({"A", "D"})\n'),
        ("one string holding the right letters", 'predicted_raises = {"A, D, E, G"}\n'),
        ("the right letters and one no snippet has", 'predicted_raises = {"A", "D", "E", "G", "H"}\n'),
        (
            "a dict of letter: raises?",
            'predicted_raises = {"A": True, "B": False, "C": False, "D": True,\n'
            '                    "E": True, "F": False, "G": True}\n',
        ),
        ("one string of letters", 'predicted_raises = "ADEG"\n'),
        ("a string in brackets (no tuple)", 'predicted_raises = ("A")\n'),
        (
            "thinks a leaf without grad may not change either",
            'predicted_raises = {"A", "B", "D", "E", "G"}\n',
        ),
        ("thinks MulConstant saves its output too", 'predicted_raises = {"A", "C", "D", "E", "G"} - {"G"}\n'),
        ("the snippet numbers instead of letters", "predicted_raises = {1, 4, 5, 7}\n"),
        ("an empty dict for none", "predicted_raises = {}\n"),
    ],
}

RIGHT_ANSWERS = {
    "ch06.accumulate": [
        (
            "NumPy arrays computed from x by hand",
            """
x_values = np.array([1.0, -2.0, 3.0])
grad_after_one = 2 * x_values
grad_after_two = grad_after_one + 2 * x_values
grad_after_reset = np.full(3, 3.0)
""",
        ),
        (
            "tuples of ints",
            """
grad_after_one = (2, -4, 6)
grad_after_two = (4, -8, 12)
grad_after_reset = (3, 3, 3)
""",
        ),
        (
            "a list comprehension over x by hand",
            "xs = [1.0, -2.0, 3.0]\n"
            "grad_after_one = [2 * v for v in xs]\n"
            "grad_after_two = [4 * v for v in xs]\n"
            "grad_after_reset = [3] * 3\n",
        ),
        (
            "np.array literals of ints",
            "grad_after_one = np.array([2, -4, 6])\n"
            "grad_after_two = np.array([4, -8, 12])\n"
            "grad_after_reset = np.array([3, 3, 3])\n",
        ),
    ],
    "ch06.clip_hook": [
        (
            "np.minimum(np.maximum(...)), and max(|min|, |max|) for the log",
            """
def make_clip_hook(limit, log):
    def clip_and_record(g):
        log.append(float(max(abs(g.min()), abs(g.max()))))
        return np.minimum(np.maximum(g, -limit), limit)
    return clip_and_record
""",
        ),
        (
            "a copy clipped in place with boolean masks",
            """
def make_clip_hook(limit, log):
    def hook(grad):
        log.append(np.max(np.abs(grad)).item())
        clipped = grad.copy()
        clipped[clipped > limit] = limit
        clipped[clipped < -limit] = -limit
        return clipped
    return hook
""",
        ),
        (
            "a small class with __call__, and grad.clip",
            """
class ClipHook:
    def __init__(self, limit, log):
        self.limit = limit
        self.log = log

    def __call__(self, grad):
        self.log.append(float(np.abs(grad).max()))
        return grad.clip(-self.limit, self.limit)

def make_clip_hook(limit, log):
    return ClipHook(limit, log)
""",
        ),
        (
            "np.sign times np.minimum of |g|",
            _clip_hook("float(np.abs(grad).max())", "np.sign(grad) * np.minimum(np.abs(grad), limit)"),
        ),
        (
            "np.where with the sign",
            _clip_hook(
                "float(abs(grad).max())", "np.where(np.abs(grad) > limit, np.sign(grad) * limit, grad)"
            ),
        ),
        (
            "np.fmin(np.fmax(...)), log by np.amax(...).item()",
            _clip_hook("np.amax(np.absolute(grad)).item()", "np.fmin(np.fmax(grad, -limit), limit)"),
        ),
        (
            "a lambda with a tuple trick",
            "def make_clip_hook(limit, log):\n"
            "    return lambda g: (log.append(float(np.abs(g).max())), np.clip(g, -limit, limit))[1]\n",
        ),
        (
            "functools.partial of a module-level function",
            "import functools\n"
            "def _clip(grad, limit, log):\n"
            "    log.append(float(np.abs(grad).max()))\n"
            "    return grad.clip(min=-limit, max=limit)\n"
            "\n"
            "def make_clip_hook(limit, log):\n"
            "    return functools.partial(_clip, limit=limit, log=log)\n",
        ),
        (
            "log.extend, np.clip into a fresh out array",
            "def make_clip_hook(limit, log):\n"
            "    def hook(grad):\n"
            "        log.extend([float(np.abs(grad).max())])\n"
            "        out = np.empty_like(grad)\n"
            "        np.clip(grad, -limit, limit, out=out)\n"
            "        return out\n"
            "    return hook\n",
        ),
    ],
    "ch06.inplace": [
        (
            "a list of letters",
            """
predicted_raises = ["A", "D", "E", "G"]
""",
        ),
        (
            "set() of a string, lower case",
            """
predicted_raises = set("adeg")
""",
        ),
        (
            "a frozenset",
            """
predicted_raises = frozenset({"A", "D", "E", "G"})
""",
        ),
        ("a tuple of letters with spaces", 'predicted_raises = (" A", "D ", "e", "G")\n'),
        ("set union of two sets", 'predicted_raises = {"A"} | {"D", "E", "G"}\n'),
    ],
}
