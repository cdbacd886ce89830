"""Plausible wrong answers to chapter 02's exercises, each must fail its check; other right answers pass."""

ALWAYS_EQUAL = """
class Anything(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

def describe(v):
    return Anything("?")
"""

WRONG_ANSWERS = {
    "ch02.make_param": [
        (
            "wraps the values as they are (integer data cannot require grad)",
            "def make_param(values):\n    return Variable(values, requires_grad=True)\n",
        ),
        (
            "converts everything to float64 (float32 data loses its dtype)",
            "def make_param(values):\n"
            "    return Variable(np.array(values, dtype=np.float64), requires_grad=True)\n",
        ),
        (
            "converts signed integers and booleans only: unsigned data stays uint8",
            "def make_param(values):\n"
            "    data = np.array(values, copy=True)\n"
            "    if data.dtype.kind in 'ib':\n"
            "        data = data.astype(np.float64)\n"
            "    return Variable(data, requires_grad=True)\n",
        ),
        (
            "converts int64 and bool only: int32 data stays int32",
            "def make_param(values):\n"
            "    data = np.array(values, copy=True)\n"
            "    if data.dtype in (np.int64, np.bool_):\n"
            "        data = data.astype(np.float64)\n"
            "    return Variable(data, requires_grad=True)\n",
        ),
        (
            "converts only non-floats, and shares the caller's float array",
            "def make_param(values):\n"
            "    data = np.asarray(values)\n"
            "    if data.dtype.kind != 'f':\n"
            "        data = data.astype(np.float64)\n"
            "    return Variable(data, requires_grad=True)\n",
        ),
        (
            "copies and converts, but leaves requires_grad at its default for float32",
            "def make_param(values):\n"
            "    data = np.array(values)\n"
            "    if data.dtype.kind != 'f':\n"
            "        data = data.astype(np.float64)\n"
            "    return Variable(data, requires_grad=data.dtype == np.float64)\n",
        ),
        (
            "copies float32 and float16 arrays, but shares a float64 one (asarray makes no copy)",
            "def make_param(values):\n"
            "    data = np.asarray(values)\n"
            "    if data.dtype in (np.float32, np.float16):\n"
            "        return Variable(data.copy(), requires_grad=True)\n"
            "    return Variable(np.asarray(data, dtype=np.float64), requires_grad=True)\n",
        ),
        (
            "keeps float32 only: float16 data becomes float64",
            "def make_param(values):\n"
            "    data = np.array(values)\n"
            "    if data.dtype != np.float32:\n"
            "        data = data.astype(np.float64)\n"
            "    return Variable(data, requires_grad=True)\n",
        ),
        (
            "everything made float32",
            "def make_param(values):\n"
            "    return Variable(np.array(values, dtype=np.float32), requires_grad=True)\n",
        ),
        (
            "promotes with float16 (bool and uint8 become float16)",
            "def make_param(values):\n"
            "    data = np.array(values)\n"
            "    data = data.astype(np.result_type(data.dtype, np.float16))\n"
            "    return Variable(data, requires_grad=True)\n",
        ),
        (
            "converts lists and numbers only: an int array passed in stays int",
            "def make_param(values):\n"
            "    if isinstance(values, np.ndarray):\n"
            "        data = values.copy()\n"
            "    else:\n"
            "        data = np.array(values, dtype=np.float64)\n"
            "    return Variable(data, requires_grad=True)\n",
        ),
        (
            "atleast_1d: a Python number becomes shape (1,)",
            "def make_param(values):\n"
            "    data = np.atleast_1d(np.array(values))\n"
            "    if data.dtype.kind != 'f':\n"
            "        data = data.astype(np.float64)\n"
            "    return Variable(data, requires_grad=True)\n",
        ),
        (
            "returns the array, not a Variable",
            "def make_param(values):\n"
            "    data = np.array(values)\n"
            "    if data.dtype.kind != 'f':\n"
            "        data = data.astype(np.float64)\n"
            "    return data\n",
        ),
        (
            "converts integer kinds only: bool data stays bool",
            "def make_param(values):\n"
            "    data = np.array(values)\n"
            "    if np.issubdtype(data.dtype, np.integer):\n"
            "        data = data.astype(float)\n"
            "    return Variable(data, requires_grad=True)\n",
        ),
    ],
    "ch02.describe": [
        ("an object of its own class that equals everything", ALWAYS_EQUAL),
        (
            "today's rule: a leaf is a Variable whose creator is None",
            "def describe(v):\n"
            "    if v.creator is None:\n"
            "        return 'leaf, requires grad' if v.requires_grad else 'leaf, no grad'\n"
            "    return 'computed by ' + type(v.creator).__name__\n",
        ),
        (
            "asks requires_grad before volatile",
            "def describe(v):\n"
            "    if isinstance(v.creator, Leaf):\n"
            "        return 'leaf, requires grad' if v.requires_grad else 'leaf, no grad'\n"
            "    if not v.requires_grad:\n"
            "        return 'leaf, no grad'\n"
            "    if v.volatile:\n"
            "        return 'volatile'\n"
            "    return 'computed by ' + type(v.creator).__name__\n",
        ),
        (
            "treats every Variable that needs no grad as a leaf without grad",
            "def describe(v):\n"
            "    if v.volatile:\n"
            "        return 'volatile'\n"
            "    if not v.requires_grad:\n"
            "        return 'leaf, no grad'\n"
            "    if isinstance(v.creator, Leaf):\n"
            "        return 'leaf, requires grad'\n"
            "    return 'computed by ' + type(v.creator).__name__\n",
        ),
        (
            "decides 'requires grad' from .grad is not None",
            "def describe(v):\n"
            "    if v.volatile:\n"
            "        return 'volatile'\n"
            "    if isinstance(v.creator, Leaf):\n"
            "        return 'leaf, requires grad' if v.grad is not None else 'leaf, no grad'\n"
            "    return 'computed by ' + type(v.creator).__name__\n",
        ),
        (
            "leaf test before volatile, but volatile decided by requires_grad False",
            "def describe(v):\n"
            "    if not v.requires_grad and not isinstance(v.creator, Leaf):\n"
            "        return 'volatile'\n"
            "    if isinstance(v.creator, Leaf):\n"
            "        return 'leaf, requires grad' if v.requires_grad else 'leaf, no grad'\n"
            "    return 'computed by ' + type(v.creator).__name__\n",
        ),
        (
            "the modern node name (fn.name())",
            "def describe(v):\n"
            "    if v.volatile:\n"
            "        return 'volatile'\n"
            "    if isinstance(v.creator, Leaf):\n"
            "        return 'leaf, requires grad' if v.requires_grad else 'leaf, no grad'\n"
            "    return 'computed by ' + v.creator.name()\n",
        ),
        (
            "prints instead of returning",
            "def describe(v):\n"
            "    if v.volatile:\n"
            "        print('volatile')\n"
            "    elif isinstance(v.creator, Leaf):\n"
            "        print('leaf, requires grad' if v.requires_grad else 'leaf, no grad')\n"
            "    else:\n"
            "        print('computed by ' + type(v.creator).__name__)\n",
        ),
        (
            "leaf without grad decided by the dtype",
            "def describe(v):\n"
            "    if v.volatile:\n"
            "        return 'volatile'\n"
            "    if isinstance(v.creator, Leaf):\n"
            "        return 'leaf, requires grad' if v.data.dtype.kind == 'f' else 'leaf, no grad'\n"
            "    return 'computed by ' + type(v.creator).__name__\n",
        ),
        (
            "no volatile test: a volatile Variable (creator None) 'computed by NoneType'",
            "def describe(v):\n"
            "    if isinstance(v.creator, Leaf):\n"
            "        return 'leaf, requires grad' if v.requires_grad else 'leaf, no grad'\n"
            "    return 'computed by ' + type(v.creator).__name__\n",
        ),
    ],
    "ch02.predict_grad": [
        (
            "the code run, its .grad copied",
            """
a = Variable(np.array([1.0, 2.0]))
a.backward(np.array([3.0, 4.0]))
a.backward(np.array([0.5, 0.5]))
b = Variable(np.array([1, 2]))
predicted_a_grad = a.grad.tolist()
predicted_b_grad = b.grad
""",
        ),
        ("the second backward replaces .grad", "predicted_a_grad = [0.5, 0.5]\npredicted_b_grad = None\n"),
        ("only the first backward counts", "predicted_a_grad = [3.0, 4.0]\npredicted_b_grad = None\n"),
        (
            "an integer Variable gets a zero .grad too",
            "predicted_a_grad = [3.5, 4.5]\npredicted_b_grad = [0, 0]\n",
        ),
        ("b.grad predicted as an empty list", "predicted_a_grad = [3.5, 4.5]\npredicted_b_grad = []\n"),
        ("b.grad as the string 'None'", "predicted_a_grad = [3.5, 4.5]\npredicted_b_grad = 'None'\n"),
        ("a.grad summed into one number", "predicted_a_grad = 8.0\npredicted_b_grad = None\n"),
        ("a.grad the seeds averaged", "predicted_a_grad = [1.75, 2.25]\npredicted_b_grad = None\n"),
        ("a.grad as the data plus the seeds", "predicted_a_grad = [4.5, 6.5]\npredicted_b_grad = None\n"),
        (
            "a.grad None (thinks a leaf made without requires_grad=True has none)",
            "predicted_a_grad = None\npredicted_b_grad = None\n",
        ),
        ("a.grad as a nested list (one row)", "predicted_a_grad = [[3.5, 4.5]]\npredicted_b_grad = None\n"),
    ],
}

RIGHT_ANSWERS = {
    "ch02.make_param": [
        (
            "asarray, then astype (which copies) or copy",
            """
def make_param(values):
    data = np.asarray(values)
    if np.issubdtype(data.dtype, np.floating):
        data = data.copy()
    else:
        data = data.astype(np.float64)
    return Variable(data, requires_grad=True)
""",
        ),
        (
            "one astype with the dtype chosen first",
            """
def make_param(values):
    arr = np.asarray(values)
    dtype = arr.dtype if arr.dtype.kind == 'f' else np.float64
    return Variable(arr.astype(dtype, copy=True), requires_grad=True)
""",
        ),
        (
            "np.array copies, integer and bool kinds listed, requires_grad set afterwards",
            """
def make_param(values):
    data = np.array(values, copy=True)
    if data.dtype.kind in 'biu':
        data = np.array(data, dtype=float)
    p = Variable(data)
    p.requires_grad = True
    return p
""",
        ),
        (
            "multiplied by 1.0 (NumPy keeps float32 and float16, promotes the rest)",
            "def make_param(values):\n    return Variable(np.array(values) * 1.0, requires_grad=True)\n",
        ),
        (
            "np.issubdtype(np.inexact) test, np.copy, float(...) dtype",
            "def make_param(values):\n"
            "    arr = np.copy(values)\n"
            "    if not np.issubdtype(arr.dtype, np.inexact):\n"
            "        arr = arr.astype(float)\n"
            "    return Variable(arr, requires_grad=True)\n",
        ),
        (
            "Variable(data) alone, floats requiring grad by default",
            "def make_param(values):\n"
            "    data = np.array(values)\n"
            "    if data.dtype.kind in 'biu':\n"
            "        data = data.astype('float64')\n"
            "    return Variable(data)\n",
        ),
    ],
    "ch02.describe": [
        (
            "compares the creator's class name with 'Leaf'",
            """
def describe(v):
    name = type(v.creator).__name__
    if v.volatile:
        return 'volatile'
    elif name == 'Leaf':
        if v.requires_grad:
            return 'leaf, requires grad'
        return 'leaf, no grad'
    else:
        return 'computed by ' + name
""",
        ),
        (
            "asks the Leaf whether it requires grad, via __class__",
            """
def describe(v):
    if v.volatile:
        return "volatile"
    creator = v.creator
    if not isinstance(creator, Leaf):
        return "computed by %s" % creator.__class__.__name__
    return "leaf, " + ("requires grad" if creator.requires_grad else "no grad")
""",
        ),
        (
            "only a volatile Variable has no creator: asks creator is None",
            """
def describe(v):
    if v.creator is None:
        return 'volatile'
    if isinstance(v.creator, Leaf):
        return 'leaf, requires grad' if v.requires_grad else 'leaf, no grad'
    return 'computed by ' + type(v.creator).__name__
""",
        ),
        (
            "Leaf test first, then volatile",
            "def describe(v):\n"
            "    kind = v.creator\n"
            "    if isinstance(kind, Leaf):\n"
            "        return 'leaf, ' + ('requires grad' if v.requires_grad else 'no grad')\n"
            "    if v.volatile:\n"
            "        return 'volatile'\n"
            "    return 'computed by {}'.format(kind.__class__.__name__)\n",
        ),
        (
            "type(...) is Leaf, a match statement",
            "def describe(v):\n"
            "    match (v.volatile, type(v.creator) is Leaf, v.requires_grad):\n"
            "        case (True, _, _):\n"
            "            return 'volatile'\n"
            "        case (False, True, True):\n"
            "            return 'leaf, requires grad'\n"
            "        case (False, True, False):\n"
            "            return 'leaf, no grad'\n"
            "    return 'computed by ' + type(v.creator).__qualname__\n",
        ),
    ],
    "ch02.predict_grad": [
        (
            "a tuple of floats",
            """
predicted_a_grad = (3.5, 4.5)
predicted_b_grad = None
""",
        ),
        (
            "a NumPy array, written as sums",
            """
predicted_a_grad = np.array([3 + 0.5, 4 + 0.5])
predicted_b_grad = None
""",
        ),
        ("halves written as fractions", "predicted_a_grad = [7 / 2, 9 / 2]\npredicted_b_grad = None\n"),
        (
            "np.add of the two seeds",
            "predicted_a_grad = np.add([3.0, 4.0], [0.5, 0.5])\npredicted_b_grad = None\n",
        ),
    ],
}
