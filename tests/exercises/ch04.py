"""Plausible wrong answers to chapter 04's exercises, each must fail its check; other right answers pass."""

COUNTS_ONCE = """
predicted_counts = {"Sum#5": [0], "Mul#4": [1], "Add#3": [1], "Mul#2": [1], "x": [1], "y": [1]}
predicted_order = ["Sum#5", "Mul#4", "Add#3", "Mul#2", "y", "x"]
"""

COUNTS_ROOT_ONE = """
predicted_counts = {"Sum#5": [1], "Mul#4": [1], "Add#3": [1], "Mul#2": [2], "x": [2], "y": [1]}
predicted_order = ["Sum#5", "Mul#4", "Add#3", "Mul#2", "y", "x"]
"""

ORDER_FIFO = """
predicted_counts = {"Sum#5": [0], "Mul#4": [1], "Add#3": [1], "Mul#2": [2], "x": [2], "y": [1]}
predicted_order = ["Sum#5", "Mul#4", "Add#3", "Mul#2", "x", "y"]
"""

ORDER_EARLY = """
predicted_counts = {"Sum#5": [0], "Mul#4": [1], "Add#3": [1], "Mul#2": [2], "x": [2], "y": [1]}
predicted_order = ["Sum#5", "Mul#4", "Mul#2", "Add#3", "y", "x"]
"""

COUNTS_AS_BOOLS = """
predicted_counts = {"Sum#5": [False], "Mul#4": [True], "Add#3": True, "Mul#2": [2], "x": [2], "y": [True]}
predicted_order = ["Sum#5", "Mul#4", "Add#3", "Mul#2", "y", "x"]
"""

# every count in a list, as the template has them: [True] == [1] in Python
COUNTS_AS_BOOLS_IN_LISTS = """
predicted_counts = {"Sum#5": [0], "Mul#4": [True], "Add#3": [True], "Mul#2": [2], "x": [2], "y": [True]}
predicted_order = ["Sum#5", "Mul#4", "Add#3", "Mul#2", "y", "x"]
"""

COUNTS_FRACTIONAL = """
predicted_counts = {"Sum#5": [0], "Mul#4": [1], "Add#3": [1], "Mul#2": [2.5], "x": [2], "y": [1]}
predicted_order = ["Sum#5", "Mul#4", "Add#3", "Mul#2", "y", "x"]
"""

READY_NONE_FOR_FALSE = """
def is_ready_for_backward(dependencies, function):
    if all(n == 0 for n in dependencies[function]):
        return True  # falls off the end: None, not False
"""

READY_FIRST_OUTPUT = """
def is_ready_for_backward(dependencies, function):
    return dependencies[function][0] == 0
"""

READY_INVERTED = """
def is_ready_for_backward(dependencies, function):
    return any(dependencies[function])
"""

READY_ANY_OUTPUT = """
def is_ready_for_backward(dependencies, function):
    return 0 in dependencies[function]
"""

READY_POPS = """
def is_ready_for_backward(dependencies, function):
    counts = dependencies[function]
    if all(n == 0 for n in counts):
        del dependencies[function]
        return True
    return False
"""

ADD_V011 = """
def add_grad(need_copy, buffer, output_nr, grad):
    if buffer[output_nr] is None:
        buffer[output_nr] = grad
    else:
        buffer[output_nr] += grad
"""

ADD_V013 = """
def add_grad(need_copy, buffer, output_nr, grad):
    if buffer[output_nr] is None:
        buffer[output_nr] = grad
        need_copy.add(id(grad))  # marks the array, as v0.1.3 did, not the slot
        return
    if id(buffer[output_nr]) in need_copy:
        need_copy.discard(id(buffer[output_nr]))
        buffer[output_nr] = buffer[output_nr].copy()
    buffer[output_nr] += grad
"""

ADD_REPLACES = """
def add_grad(need_copy, buffer, output_nr, grad):
    buffer[output_nr] = grad.copy()
"""

ADD_COPIES_NEW = """
def add_grad(need_copy, buffer, output_nr, grad):
    if buffer[output_nr] is None:
        buffer[output_nr] = grad
    else:
        grad += buffer[output_nr]  # sums into the array that just arrived
        buffer[output_nr] = grad
"""

ADD_MARKS_BUFFER = """
def add_grad(need_copy, buffer, output_nr, grad):
    slot = id(buffer)  # marks the buffer, not the slot
    if buffer[output_nr] is None:
        buffer[output_nr] = grad
        need_copy.add(slot)
        return
    if slot in need_copy:
        buffer[output_nr] = buffer[output_nr].copy()
        need_copy.discard(slot)
    buffer[output_nr] += grad
"""

ADD_ALWAYS_COPIES = """
def add_grad(need_copy, buffer, output_nr, grad):
    if buffer[output_nr] is None:
        buffer[output_nr] = grad.copy()  # copies every first gradient, though most are never summed
    else:
        buffer[output_nr] += grad
"""

ADD_OUT_OF_PLACE = """
def add_grad(need_copy, buffer, output_nr, grad):
    if buffer[output_nr] is None:
        buffer[output_nr] = grad
    else:
        buffer[output_nr] = buffer[output_nr] + grad  # a new array at every sum, no marks
"""

# A right add_grad but for how it copies the borrowed array (COPY)
_ADD_COPYING = """
def add_grad(need_copy, buffer, output_nr, grad):
    slot = (id(buffer), output_nr)
    if buffer[output_nr] is None:
        buffer[output_nr] = grad
        need_copy.add(slot)
        return
    if slot in need_copy:
        buffer[output_nr] = COPY
        need_copy.discard(slot)
    buffer[output_nr] += grad
"""

# The mark never discarded: every later sum copies again
ADD_NEVER_UNMARKS = _ADD_COPYING.replace("COPY", "buffer[output_nr].copy()").replace(
    "        need_copy.discard(slot)\n", ""
)

ADD_NEW_BUFFER = """
def add_grad(need_copy, buffer, output_nr, grad):
    buffer = list(buffer)  # writes into a copy of the list, which is lost
    buffer[output_nr] = grad
"""

READY_CALLS_THE_ENGINE = """
def is_ready_for_backward(dependencies, function):
    return ExecutionEngine._is_ready_for_backward(None, dependencies, function)
"""

READY_FIRST_AND_LAST = """
def is_ready_for_backward(dependencies, function):
    counts = dependencies[function]
    return counts[0] == 0 and counts[-1] == 0
"""

ADD_CALLS_THE_ENGINE = """
def add_grad(need_copy, buffer, output_nr, grad):
    ExecutionEngine._add_grad(None, need_copy, buffer, output_nr, grad)
"""

# Predictions computed with the kit, not predicted: right values, refused
COUNTS_BY_THE_ENGINE = """
from varfunc.engine import ExecutionEngine
from varfunc.viz import GraphView, trace

x, y = Variable(np.array([2.0])), Variable(np.array([3.0]))
a = x * y
b = a + x
loss = (b * a).sum()
view = GraphView(loss, {"x": x, "y": y})
counts = ExecutionEngine()._compute_dependencies(loss.creator)
predicted_counts = {view.name(fn): list(n) for fn, n in counts.items()}
predicted_order = ["Sum#5", "Mul#4", "Add#3", "Mul#2", "y", "x"]
"""

ORDER_BY_THE_TRACE = """
x, y = Variable(np.array([2.0])), Variable(np.array([3.0]))
a = x * y
b = a + x
loss = (b * a).sum()
predicted_counts = {"Sum#5": [0], "Mul#4": [1], "Add#3": [1], "Mul#2": [2], "x": [2], "y": [1]}
predicted_order = []
predicted_order.extend(viz.trace(loss, params={"x": x, "y": y}).visit_order)
"""


# predictions with the right counts (or order) and the other half of the answer given
def _predicted(
    counts: str = '{"Sum#5": [0], "Mul#4": [1], "Add#3": [1], "Mul#2": [2], "x": [2], "y": [1]}',
    order: str = '["Sum#5", "Mul#4", "Add#3", "Mul#2", "y", "x"]',
) -> str:
    return f"predicted_counts = {counts}\npredicted_order = {order}\n"


def _ready(expression: str) -> str:
    return f"def is_ready_for_backward(dependencies, function):\n    return {expression}\n"


WRONG_ANSWERS = {
    "ch04.dependencies": [
        ("counts computed with the engine's _compute_dependencies", COUNTS_BY_THE_ENGINE),
        ("the order copied from viz.trace's visit_order", ORDER_BY_THE_TRACE),
        ("counted each input once, not once per use", COUNTS_ONCE),
        ("gave the root a count of 1 for the seed", COUNTS_ROOT_ONE),
        ("FIFO order instead of the stack", ORDER_FIFO),
        ("popped Mul#2 before all its gradients arrived", ORDER_EARLY),
        ("True and False where the counts are 1 and 0", COUNTS_AS_BOOLS),
        ("[True] where the count is [1], in lists", COUNTS_AS_BOOLS_IN_LISTS),
        ("2.5 where the count is 2 (a count is a whole number)", COUNTS_FRACTIONAL),
        (
            "x counted three times",
            _predicted(counts='{"Sum#5": [0], "Mul#4": [1], "Add#3": [1], "Mul#2": [2], "x": [3], "y": [1]}'),
        ),
        (
            "the leaves left out of the counts",
            _predicted(counts='{"Sum#5": [0], "Mul#4": [1], "Add#3": [1], "Mul#2": [2]}'),
        ),
        ("the leaves left out of the order", _predicted(order='["Sum#5", "Mul#4", "Add#3", "Mul#2"]')),
        (
            "x popped as soon as Add#3 sends, before its second gradient",
            _predicted(order='["Sum#5", "Mul#4", "Add#3", "x", "Mul#2", "y"]'),
        ),
    ],
    "ch04.is_ready": [
        ("looks at output 0 only", READY_FIRST_OUTPUT),
        ("inverted: ready while a count is left", READY_INVERTED),
        ("ready when any output is done", READY_ANY_OUTPUT),
        ("deletes the entry from the dict", READY_POPS),
        ("returns None instead of False", READY_NONE_FOR_FALSE),
        ("calls the engine's own _is_ready_for_backward", READY_CALLS_THE_ENGINE),
        ("looks at the first and the last output only", READY_FIRST_AND_LAST),
        ("returns 1 or 0, not a bool", _ready("int(all(n == 0 for n in dependencies[function]))")),
        ("ready only when the counts are [0] (one output)", _ready("dependencies[function] == [0]")),
        ("looks at every Function's counts", _ready("all(n == 0 for c in dependencies.values() for n in c)")),
        (
            "counts output 0 down itself",
            "def is_ready_for_backward(dependencies, function):\n"
            "    counts = dependencies[function]\n"
            "    counts[0] = max(counts[0] - 1, 0)\n"
            "    return all(n == 0 for n in counts)\n",
        ),
    ],
    "ch04.add_grad": [
        ("v0.1.1: adds into the first array that arrived", ADD_V011),
        ("v0.1.3: need_copy marks the array, not the slot", ADD_V013),
        ("replaces instead of summing", ADD_REPLACES),
        (
            "puts each gradient in the slot, in place of the one there",
            "def add_grad(need_copy, buffer, output_nr, grad):\n    buffer[output_nr] = grad\n",
        ),
        ("sums into the array that just arrived", ADD_COPIES_NEW),
        ("need_copy marks the buffer, not the slot", ADD_MARKS_BUFFER),
        ("copies the first gradient instead of storing it as it is", ADD_ALWAYS_COPIES),
        ("sums out of place every time (a new array per gradient)", ADD_OUT_OF_PLACE),
        ("marks the slot but never clears the mark (copies at every sum)", ADD_NEVER_UNMARKS),
        ("writes into a copy of the buffer list", ADD_NEW_BUFFER),
        ("calls the engine's own _add_grad", ADD_CALLS_THE_ENGINE),
        (
            "copies with [:], a view for an array (a copy for a list)",
            _ADD_COPYING.replace("COPY", "buffer[output_nr][:]"),
        ),
        (
            "copies with np.asarray, which returns the array itself",
            _ADD_COPYING.replace("COPY", "np.asarray(buffer[output_nr])"),
        ),
        (
            "need_copy marks output_nr, not the slot",
            _ADD_COPYING.replace("slot = (id(buffer), output_nr)", "slot = output_nr"),
        ),
    ],
}

RIGHT_ANSWERS = {
    "ch04.dependencies": [
        (
            "dict(zip(...)) and reversed()",
            """
names = ["Sum#5", "Mul#4", "Add#3", "Mul#2", "x", "y"]
predicted_counts = dict(zip(names, [[0], [1], [1], [2], [2], [1]]))
predicted_order = list(reversed(["x", "y", "Mul#2", "Add#3", "Mul#4", "Sum#5"]))
""",
        ),
        (
            "a name for a count used often, a graph printed in the same cell",
            """
one = [1]
predicted_counts = {"Sum#5": [0], "Mul#4": one, "Add#3": one, "Mul#2": [2], "x": [2], "y": one}
predicted_order = ["Sum#5", "Mul#4", "Add#3", "Mul#2", "y", "x"]
print(viz.trace(loss, params={"x": x, "y": y}).visit_order)  # a look after predicting
""",
        ),
        (
            "tuples, keys listed from the leaves up",
            """
predicted_counts = {"x": (2,), "y": (1,), "Mul#2": (2,), "Add#3": (1,), "Mul#4": (1,), "Sum#5": (0,)}
predicted_order = ("Sum#5", "Mul#4", "Add#3", "Mul#2", "y", "x")
""",
        ),
        (
            "built up one entry at a time",
            """
predicted_counts = {}
predicted_counts["Sum#5"] = [0]
for name in ["Mul#4", "Add#3", "y"]:
    predicted_counts[name] = [1]
predicted_counts["Mul#2"] = [2]
predicted_counts["x"] = [2]
predicted_order = "Sum#5 Mul#4 Add#3 Mul#2 y x".split()
""",
        ),
    ],
    "ch04.is_ready": [
        ("max(counts) == 0", _ready("max(dependencies[function]) == 0")),
        ("the set of the counts is {0}", _ready("set(dependencies[function]) == {0}")),
        (
            "not any(counts)",
            """
def is_ready_for_backward(dependencies, function):
    return not any(dependencies[function])
""",
        ),
        (
            "a loop with an early return",
            """
def is_ready_for_backward(dependencies, function):
    for count in dependencies[function]:
        if count != 0:
            return False
    return True
""",
        ),
        (
            "the sum of the counts is 0 (counts are never negative)",
            """
def is_ready_for_backward(dependencies, function):
    return sum(dependencies[function]) == 0
""",
        ),
    ],
    "ch04.add_grad": [
        ("copies with np.array()", _ADD_COPYING.replace("COPY", "np.array(buffer[output_nr])")),
        (
            "copies with copy.copy()",
            "import copy\n" + _ADD_COPYING.replace("COPY", "copy.copy(buffer[output_nr])"),
        ),
        (
            "a borrowed array is replaced by a new sum, not copied then summed",
            """
def add_grad(need_copy, buffer, output_nr, grad):
    key = (id(buffer), output_nr)
    if buffer[output_nr] is None:
        buffer[output_nr] = grad
        need_copy.add(key)
    elif key in need_copy:
        need_copy.remove(key)
        buffer[output_nr] = buffer[output_nr] + grad  # a new array: the borrowed one is left alone
    else:
        buffer[output_nr] += grad
""",
        ),
        (
            "np.copy and np.add(..., out=...)",
            """
def add_grad(need_copy, buffer, output_nr, grad):
    slot = (id(buffer), output_nr)
    stored = buffer[output_nr]
    if stored is None:
        buffer[output_nr] = grad
        need_copy.add(slot)
        return
    if slot in need_copy:
        stored = np.copy(stored)
        buffer[output_nr] = stored
        need_copy.discard(slot)
    np.add(stored, grad, out=stored)
""",
        ),
    ],
}
