"""Plausible wrong answers to chapter 10's exercises (each must fail its check); other right answers pass."""

WRONG_ANSWERS = {
    "ch10.predict_modern": [
        (
            "walked from q.grad_fn with the kit, not predicted",
            """
x = Variable(np.array([1.0, 2.0]), requires_grad=True)
c = Variable(np.array([3.0, 4.0]), requires_grad=False)
q = (x * c).exp() + x
predicted_next = {}
todo = [q.grad_fn]
while todo:
    fn = todo.pop()
    if fn is None or fn.name() == "AccumulateGrad" or fn.name() in predicted_next:
        continue
    predicted_next[fn.name()] = [(None if g is None else g.name(), nr) for g, nr in fn.next_functions]
    todo += [g for g, _ in fn.next_functions]
""",
        ),
        (
            "v0.1 names (Leaf, Mul) instead of today's",
            """
predicted_next = {
    "Add": [("Exp", 0), ("Leaf", 0)],
    "Exp": [("Mul", 0)],
    "Mul": [("Leaf", 0), ("Leaf", 0)],
}
""",
        ),
        (
            "the constant c gets an AccumulateGrad",
            """
predicted_next = {
    "AddBackward0": [("ExpBackward0", 0), ("AccumulateGrad", 0)],
    "ExpBackward0": [("MulBackward0", 0)],
    "MulBackward0": [("AccumulateGrad", 0), ("AccumulateGrad", 0)],
}
""",
        ),
        (
            "the constant left out instead of (None, 0)",
            """
predicted_next = {
    "AddBackward0": [("ExpBackward0", 0), ("AccumulateGrad", 0)],
    "ExpBackward0": [("MulBackward0", 0)],
    "MulBackward0": [("AccumulateGrad", 0)],
}
""",
        ),
        (
            "the template with one next function still ...",
            """
predicted_next = {
    "AddBackward0": [("ExpBackward0", 0), ("AccumulateGrad", 0)],
    "ExpBackward0": [("MulBackward0", 0)],
    "MulBackward0": [("AccumulateGrad", 0), ...],
}
""",
        ),
        (
            "inputs of the Add in the wrong order",
            """
predicted_next = {
    "AddBackward0": [("AccumulateGrad", 0), ("ExpBackward0", 0)],
    "ExpBackward0": [("MulBackward0", 0)],
    "MulBackward0": [("AccumulateGrad", 0), (None, 0)],
}
""",
        ),
        (
            "names without the 0 (AddBackward)",
            "predicted_next = {\n"
            '    "AddBackward": [("ExpBackward", 0), ("AccumulateGrad", 0)],\n'
            '    "ExpBackward": [("MulBackward", 0)],\n'
            '    "MulBackward": [("AccumulateGrad", 0), (None, 0)],\n'
            "}\n",
        ),
        (
            "x's second use counted as output 1 of its AccumulateGrad",
            "predicted_next = {\n"
            '    "AddBackward0": [("ExpBackward0", 0), ("AccumulateGrad", 1)],\n'
            '    "ExpBackward0": [("MulBackward0", 0)],\n'
            '    "MulBackward0": [("AccumulateGrad", 0), (None, 0)],\n'
            "}\n",
        ),
        (
            "(None, None) for the constant",
            "predicted_next = {\n"
            '    "AddBackward0": [("ExpBackward0", 0), ("AccumulateGrad", 0)],\n'
            '    "ExpBackward0": [("MulBackward0", 0)],\n'
            '    "MulBackward0": [("AccumulateGrad", 0), (None, None)],\n'
            "}\n",
        ),
        (
            "AccumulateGrad listed as a key with no inputs",
            "predicted_next = {\n"
            '    "AddBackward0": [("ExpBackward0", 0), ("AccumulateGrad", 0)],\n'
            '    "ExpBackward0": [("MulBackward0", 0)],\n'
            '    "MulBackward0": [("AccumulateGrad", 0), (None, 0)],\n'
            '    "AccumulateGrad": [],\n'
            "}\n",
        ),
        (
            "a dict of next name: output_nr per node",
            "predicted_next = {\n"
            '    "AddBackward0": {"ExpBackward0": 0, "AccumulateGrad": 0},\n'
            '    "ExpBackward0": {"MulBackward0": 0},\n'
            '    "MulBackward0": {"AccumulateGrad": 0, None: 0},\n'
            "}\n",
        ),
        (
            "the Mul by a constant named MulConstantBackward0 (v0.1's MulConstant)",
            "predicted_next = {\n"
            '    "AddBackward0": [("ExpBackward0", 0), ("AccumulateGrad", 0)],\n'
            '    "ExpBackward0": [("MulConstantBackward0", 0)],\n'
            '    "MulConstantBackward0": [("AccumulateGrad", 0)],\n'
            "}\n",
        ),
    ],
    "ch10.next_functions": [
        (
            "a function made from the kit's getter's code before the check",
            """
import types

from varfunc.modern import ModernFunctionNames

_getter = ModernFunctionNames.next_functions.fget
_kit = types.FunctionType(_getter.__code__, _getter.__globals__)


def next_functions_of(fn):
    return _kit(fn)
""",
        ),
        (
            "the kit's property, kept before the check switches it off",
            """
from varfunc.modern import ModernFunctionNames

_kit = ModernFunctionNames.next_functions


def next_functions_of(fn):
    return _kit.fget(fn)
""",
        ),
        (
            "the input's position instead of the output number",
            """
def next_functions_of(fn):
    return tuple(
        (prev_fn, i) if needed else (None, 0)
        for i, ((prev_fn, arg_id), needed) in enumerate(zip(fn.previous_functions, fn.needs_input_grad))
    )
""",
        ),
        (
            "(None, None) for an input that needs no gradient",
            """
def next_functions_of(fn):
    return tuple(
        (prev_fn, prev_fn.output_ids[arg_id]) if needed else (None, None)
        for (prev_fn, arg_id), needed in zip(fn.previous_functions, fn.needs_input_grad)
    )
""",
        ),
        (
            "output number always 0",
            """
def next_functions_of(fn):
    return tuple(
        (prev_fn, 0) if needed else (None, 0)
        for (prev_fn, arg_id), needed in zip(fn.previous_functions, fn.needs_input_grad)
    )
""",
        ),
        (
            "keeps inputs that need no gradient",
            """
def next_functions_of(fn):
    return tuple((prev_fn, prev_fn.output_ids[arg_id]) for prev_fn, arg_id in fn.previous_functions)
""",
        ),
        (
            "asks the producer (prev_fn.requires_grad) instead of needs_input_grad",
            """
def next_functions_of(fn):
    return tuple(
        (prev_fn, prev_fn.output_ids[arg_id]) if prev_fn.requires_grad else (None, 0)
        for prev_fn, arg_id in fn.previous_functions
    )
""",
        ),
        (
            "asks the producer too (needed and prev_fn.requires_grad): a leaf frozen after forward",
            """
def next_functions_of(fn):
    return tuple(
        (prev_fn, prev_fn.output_ids[arg_id]) if needed and prev_fn.requires_grad else (None, 0)
        for (prev_fn, arg_id), needed in zip(fn.previous_functions, fn.needs_input_grad)
    )
""",
        ),
        (
            "returns the kit's own property",
            """
def next_functions_of(fn):
    return fn.next_functions
""",
        ),
        (
            "reads the kit's property through the class",
            """
def next_functions_of(fn):
    return type(fn).next_functions.fget(fn)
""",
        ),
        (
            "returns a list",
            """
def next_functions_of(fn):
    return [
        (prev_fn, prev_fn.output_ids[arg_id]) if needed else (None, 0)
        for (prev_fn, arg_id), needed in zip(fn.previous_functions, fn.needs_input_grad)
    ]
""",
        ),
        (
            "the arg_id itself as the output number",
            "def next_functions_of(fn):\n"
            "    pairs = zip(fn.previous_functions, fn.needs_input_grad)\n"
            "    return tuple((p, a) if n else (None, 0) for (p, a), n in pairs)\n",
        ),
        (
            "inputs used twice counted once (a dict keyed by Function)",
            "def next_functions_of(fn):\n"
            "    seen = {}\n"
            "    for (p, a), n in zip(fn.previous_functions, fn.needs_input_grad):\n"
            "        seen[p] = (p, p.output_ids[a]) if n else (None, 0)\n"
            "    return tuple(seen.values())\n",
        ),
        (
            "a not-needed input keeps its Function, output 0",
            "def next_functions_of(fn):\n"
            "    pairs = zip(fn.previous_functions, fn.needs_input_grad)\n"
            "    return tuple((p, p.output_ids[a]) if n else (p, 0) for (p, a), n in pairs)\n",
        ),
        (
            "a Leaf given its own pair",
            "def next_functions_of(fn):\n"
            "    if not fn.previous_functions:\n"
            "        return ((fn, 0),)\n"
            "    pairs = zip(fn.previous_functions, fn.needs_input_grad)\n"
            "    return tuple((p, p.output_ids[a]) if n else (None, 0) for (p, a), n in pairs)\n",
        ),
        (
            "names instead of the Function objects",
            "def next_functions_of(fn):\n"
            "    pairs = zip(fn.previous_functions, fn.needs_input_grad)\n"
            "    return tuple((type(p).__name__, p.output_ids[a]) if n else (None, 0)\n"
            "                 for (p, a), n in pairs)\n",
        ),
    ],
    "ch10.double_count": [
        (
            "computed with viz.compare_orders and viz.naive_recursive_backward",
            """
def reused_graph():
    a = Variable(np.array([2.0]), requires_grad=True)
    b = a * a
    return (b * 3 + b).sum(), {"a": a}

results = viz.compare_orders(reused_graph).results
wrong_orders = {name for name, r in results.items() if r.leaf_grads["a"][0] != 16.0} | {"naive"}
loss, leaves = reused_graph()
naive_grad_a = float(viz.naive_recursive_backward(loss, params=leaves).leaf_grads["a"][0])
""",
        ),
        ("micrograd's sort blamed too", 'wrong_orders = {"naive", "topo"}\nnaive_grad_a = 32.0\n'),
        ("naive recursion thought correct", "wrong_orders = set()\nnaive_grad_a = 16.0\n"),
        ("right ordering, gradient counted once too few", 'wrong_orders = {"naive"}\nnaive_grad_a = 24.0\n'),
        ("the stack engine blamed", 'wrong_orders = {"stack", "naive"}\nnaive_grad_a = 32.0\n'),
        (
            "a frozenset that blames micrograd's sort too",
            'wrong_orders = frozenset({"naive", "topo"})\nnaive_grad_a = 32.0\n',
        ),
        ("capitalised name", 'wrong_orders = {"Naive"}\nnaive_grad_a = 32.0\n'),
        ("one name in brackets (a string, no tuple)", 'wrong_orders = ("naive")\nnaive_grad_a = 32.0\n'),
        ("fifo blamed too", 'wrong_orders = {"naive", "fifo"}\nnaive_grad_a = 32.0\n'),
        ("b's slot counted three times", 'wrong_orders = {"naive"}\nnaive_grad_a = 48.0\n'),
        ("the gradient of b, not a", 'wrong_orders = {"naive"}\nnaive_grad_a = 8.0\n'),
        (
            "naive_grad_a as a list of the two deliveries",
            'wrong_orders = {"naive"}\nnaive_grad_a = [12.0, 20.0]\n',
        ),
    ],
}

RIGHT_ANSWERS = {
    "ch10.next_functions": [
        (
            "a generator over zip, turned into a tuple",
            """
def next_functions_of(fn):
    pairs = zip(fn.previous_functions, fn.needs_input_grad)
    return tuple((prev, prev.output_ids[arg_id]) if needed else (None, 0) for (prev, arg_id), needed in pairs)
""",
        ),
        (
            "output_ids.get, a for loop with enumerate and indexing",
            "def next_functions_of(fn):\n"
            "    out = []\n"
            "    for i, (prev, arg_id) in enumerate(fn.previous_functions):\n"
            "        if fn.needs_input_grad[i]:\n"
            "            out.append((prev, prev.output_ids.get(arg_id)))\n"
            "        else:\n"
            "            out.append((None, 0))\n"
            "    return tuple(out)\n",
        ),
        (
            "tuple(map(...)) with a helper",
            "def _pair(entry, needed):\n"
            "    prev_fn, arg_id = entry\n"
            "    return (prev_fn, prev_fn.output_ids[arg_id]) if needed else (None, 0)\n"
            "\n"
            "def next_functions_of(fn):\n"
            "    return tuple(map(_pair, fn.previous_functions, fn.needs_input_grad))\n",
        ),
    ],
    "ch10.predict_modern": [
        (
            "lists for the pairs, keys from the leaves up",
            """
predicted_next = {
    "MulBackward0": [["AccumulateGrad", 0], [None, 0]],
    "ExpBackward0": [["MulBackward0", 0]],
    "AddBackward0": [["ExpBackward0", 0], ["AccumulateGrad", 0]],
}
""",
        ),
        (
            "tuples of tuples, as PyTorch prints next_functions",
            """
predicted_next = {
    "AddBackward0": (("ExpBackward0", 0), ("AccumulateGrad", 0)),
    "ExpBackward0": (("MulBackward0", 0),),
    "MulBackward0": (("AccumulateGrad", 0), (None, 0)),
}
""",
        ),
        (
            "built up key by key",
            "predicted_next = {}\n"
            'predicted_next["MulBackward0"] = [("AccumulateGrad", 0), (None, 0)]\n'
            'predicted_next["ExpBackward0"] = [("MulBackward0", 0)]\n'
            'predicted_next["AddBackward0"] = [("ExpBackward0", 0), ("AccumulateGrad", 0)]\n',
        ),
        (
            "dict() with keywords",
            "predicted_next = dict(\n"
            '    AddBackward0=[("ExpBackward0", 0), ("AccumulateGrad", 0)],\n'
            '    ExpBackward0=[("MulBackward0", 0)],\n'
            '    MulBackward0=[("AccumulateGrad", 0), (None, 0)],\n'
            ")\n",
        ),
    ],
    "ch10.double_count": [
        (
            "the gradient as a one-element list, as the chapter prints a=[8]",
            'wrong_orders = {"naive"}\nnaive_grad_a = [32.0]\n',
        ),
        (
            "the gradient as a one-element array",
            'wrong_orders = {"naive"}\nnaive_grad_a = np.array([32.0])\n',
        ),
        (
            "a list and an int",
            """
wrong_orders = ["naive"]
naive_grad_a = 32
""",
        ),
        (
            "a frozenset, the gradient as a product",
            """
wrong_orders = frozenset({"naive"})
naive_grad_a = 2 * 16.0
""",
        ),
        (
            "a tuple with one name, the gradient as 16 * 2",
            'wrong_orders = ("naive",)\nnaive_grad_a = 16 * 2\n',
        ),
        ("set() of a list, a float written 32.", 'wrong_orders = set(["naive"])\nnaive_grad_a = 32.\n'),
    ],
}
