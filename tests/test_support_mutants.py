"""Rules of the kit's support modules that a mutation audit found no other test pinning down.

Each test below fails if one token of varfunc/dirty.py, guards.py, operators.py, methods.py,
gradcheck.py, gradient_checks.py, backend.py, inference.py or modern.py changes in a way that the
rest of the suite let through: a Function that keeps its output as an attribute, an integer leaf
changed in place coming back requiring grad, a read-only input that a failed forward cannot put
back, a student's own TypeError reported as a None gradient, a list on the left of % or //, a
number on the left of &, the add-product methods' default factors, gradcheck's sign check under a
scalar output and its report, a kit op's gradient in another dtype, an np.matrix gradient reaching
a kit op, a model with no parameters evaluated, the region a decision boundary draws, the modern
names of x / 2.
"""

import numpy as np
import pytest
from test_fit_checks import Recording, spiral_problem
from test_student_functions import AddsInPlace, Returns
from test_torch_names import _our_nodes, _torch_nodes

from varfunc import DTypeError, Function, GradcheckError, VarfuncError, Variable, gradcheck, nn
from varfunc.inference import evaluate, plot_decision_boundary

# --- dirty.py: what a student's forward changed or kept --------------------------------------------


class KeepsItsOutput(Function):
    """exp(x), keeping the output as an attribute (self.y = y) rather than saving it."""

    def forward(self, x):
        self.y = np.exp(x)
        return self.y

    def backward(self, grad_output):
        return grad_output * self.y


def test_a_function_that_keeps_its_output_as_an_attribute_gets_the_right_gradient():
    # Only the inputs a forward keeps have their version checked: an output's position is past them
    assert gradcheck(lambda x: KeepsItsOutput()(x), (np.array([0.5, -1.0, 2.0]),))


def test_an_integer_leaf_changed_in_place_by_an_op_that_requires_grad_still_requires_no_grad():
    counts = Variable(np.array([1, 2]))  # a leaf: the Function's output becomes its creator
    out = AddsInPlace()(counts, Variable(np.array([0.6, 1.4]), requires_grad=True))
    assert out is counts and out.creator is not None and not out.requires_grad


class FailsOnItsInput(Function):
    def forward(self, x):
        raise ValueError("the student's own error")


def test_a_failed_forward_on_read_only_data_keeps_its_own_error():
    # Nothing to put back into a read-only input: trying would replace the error with NumPy's
    data = np.arange(3.0)
    data.flags.writeable = False
    x = Variable(data)
    assert not x.data.flags.writeable
    with pytest.raises(ValueError, match="the student's own error"):
        FailsOnItsInput()(x)


# --- guards.py: what a student's backward raises, a Function class that hashes by value -----------


class MultipliesByNone(Function):
    """A backward that fails on a None of its own (self.scale), with every gradient present."""

    scale = None

    def forward(self, x):
        return x * 2

    def backward(self, grad_output):
        return grad_output * self.scale


def test_a_backward_failing_on_its_own_none_keeps_the_type_error():
    # The "a gradient it was given is None" explanation is only for a None that the engine handed over
    x = Variable(np.ones(2), requires_grad=True)
    y = MultipliesByNone()(x).sum()
    with pytest.raises(TypeError, match="NoneType") as caught:
        y.backward()
    assert not isinstance(caught.value, VarfuncError)


def test_a_function_class_that_defines_only_hash_is_refused_too():
    # (one that defines __eq__ has __hash__ set to None: test_student_functions refuses that one)
    cls = type("HashedOnly", (Function,), {"__hash__": lambda self: 0, "forward": lambda self, a: a * 1})
    with pytest.raises(VarfuncError, match=r"HashedOnly defines __eq__ or __hash__"):
        cls()(Variable(np.ones(2)))


# --- operators.py -----------------------------------------------------------------------------------

LEFT = [5.0, 7.0, -9.0]  # a list on the left: Python asks the Variable's reflected operator


@pytest.mark.parametrize(
    ("op", "numpy_op"), [(lambda a, x: a % x, np.remainder), (lambda a, x: a // x, np.floor_divide)]
)
def test_a_list_on_the_left_of_mod_and_floordiv_gives_numpys_values(op, numpy_op):
    x = Variable(np.array([2.0, -3.0, 4.0]), requires_grad=True)
    result = op(LEFT, x)
    assert isinstance(result, Variable)
    np.testing.assert_array_equal(result.data, numpy_op(LEFT, x.data))


def test_a_list_on_the_left_of_mod_gets_the_divisors_gradient():
    assert gradcheck(lambda x: LEFT % x, (np.array([2.0, -3.0, 4.0]),))


@pytest.mark.parametrize(
    ("op", "numpy_op"),
    [
        (lambda a, b: a & b, np.bitwise_and),
        (lambda a, b: a | b, np.bitwise_or),
        (lambda a, b: a ^ b, np.bitwise_xor),
    ],
)
def test_a_number_on_the_left_of_a_mask_operator_works_as_on_the_right(op, numpy_op):
    mask = Variable(np.array([True, False, True]))
    counts = Variable(np.array([1, 2, 3]))
    for left, right in ((True, mask), (np.bool_(False), mask), (6, counts)):
        result = op(left, right)
        assert isinstance(result, Variable)
        np.testing.assert_array_equal(result.data, numpy_op(left, right.data))


# --- methods.py -------------------------------------------------------------------------------------

RNG = np.random.default_rng(7)
M, V, B = RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal((2, 3, 4))
B2 = RNG.standard_normal((2, 4, 5))
PRODUCTS = {  # method: (self's shape, its two other operands, what NumPy makes of them)
    "addmv": ((3,), (M, V), M @ V),
    "addr": ((3, 4), (M[:, 0], V), np.outer(M[:, 0], V)),
    "addbmm": ((3, 5), (B, B2), (B @ B2).sum(axis=0)),
    "baddbmm": ((2, 3, 5), (B, B2), B @ B2),
}


@pytest.mark.parametrize("method", sorted(PRODUCTS))
def test_the_add_products_default_to_self_plus_the_product(method):
    shape, operands, product = PRODUCTS[method]
    base = RNG.standard_normal(shape)
    result = getattr(Variable(base), method)(*operands)
    np.testing.assert_allclose(result.data, base + product)


def test_an_array_of_strings_as_the_other_operand_names_its_dtype():
    # The error about what the array holds is the useful one, not "takes a Variable, a NumPy array..."
    x = Variable(np.ones(2))
    with pytest.raises(DTypeError, match=r"dtype <U1 is not supported"):
        x + np.array(["a", "b"])


# --- gradcheck.py -----------------------------------------------------------------------------------


class TriplesDroppingTheSign(Function):
    """3x, whose backward takes abs(grad_output): right for every positive gradient."""

    def forward(self, x):
        return x * 3

    def backward(self, grad_output):
        return np.abs(grad_output) * 3


def test_gradcheck_catches_a_dropped_sign_under_a_scalar_output():
    # A loss has one element: its extra backward's weight must be negative for abs(g) to show
    with pytest.raises(GradcheckError, match="weighted"):
        gradcheck(lambda x: TriplesDroppingTheSign()(x).sum(), (np.array([1.0, 2.0]),))


def test_gradcheck_given_one_array_twice_nudges_each_input_alone():
    # Each input becomes a leaf of its own copy: one array nudged in place would move both factors
    a = np.array([1.0, 2.0, 3.0])
    before = a.copy()
    assert gradcheck(lambda x, y: x * y, (a, a))
    np.testing.assert_array_equal(a, before)


class ScalesWrongly(Function):
    """2x, whose backward is wrong everywhere (3 g) or only for negative gradients (2 abs(g))."""

    def __init__(self, backward):
        self.wrong = backward

    def forward(self, x):
        return x * 2

    def backward(self, grad_output):
        return self.wrong(grad_output)


@pytest.mark.parametrize(
    ("wrong", "size"), [(lambda g: g * 3, 4), (lambda g: np.abs(g) * 2, 17), (lambda g: g * 3, 10)]
)
def test_gradcheck_lists_eight_mismatches_and_counts_the_rest(wrong, size):
    with pytest.raises(GradcheckError) as caught:
        gradcheck(lambda x: ScalesWrongly(wrong)(x), (np.arange(1.0, size + 1),))
    lines = str(caught.value).splitlines()
    total = int(lines[0].split(" at ")[1].split()[0])  # "... disagrees ... at N place(s):"
    rows = [line for line in lines[2:] if line.startswith("  ") and not line.startswith("  ...")]
    more = [line for line in lines if line.startswith("  ... and")]
    assert len(rows) == min(total, 8)
    assert more == ([f"  ... and {total - 8} more"] if total > 8 else [])
    assert lines[-1].startswith("Look at the backward of the ops that touch that input")


# --- gradient_checks.py -----------------------------------------------------------------------------


def test_a_kit_ops_gradient_in_another_dtype_is_cast_to_its_inputs():
    # h * b for float32 h and float64 b: Mul's backward computes h's gradient in float64
    a = Variable(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    b = Variable(np.array([3.0, 4.0]))
    h = a * 1
    seen = []
    h.register_hook("dtype", lambda grad: seen.append(grad.dtype))
    (h * b).sum().backward()
    assert seen == [np.float32] and a.grad.dtype == np.float32
    np.testing.assert_array_equal(a.grad, b.data.astype(np.float32))


# --- backend.py -------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.asmatrix: what a student might write
def test_an_np_matrix_gradient_reaching_a_kit_op_is_an_array_there():
    # The matrix's * is a matrix product: Mul's backward (g * w) would give x a wrong gradient
    x = Variable(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    w = Variable(np.array([[5.0, 6.0], [7.0, 8.0]]))
    Returns(np.asmatrix)(x * w).sum().backward()
    assert type(x.grad) is np.ndarray
    np.testing.assert_array_equal(x.grad, 2 * w.data)


# --- inference.py -----------------------------------------------------------------------------------


def test_a_model_without_parameters_is_evaluated_on_its_datas_own_dtype():
    # No parameter to take a dtype from: float32 data stays float32 (astype(None) would make float64)
    X = np.array([[-1.0, 2.0], [3.0, -4.0]], dtype=np.float32)
    seen = []
    metrics = {"dtype": lambda output, target: seen.append(output.data.dtype) or 0.0}
    evaluate(nn.Sequential(nn.ReLU()), X, np.array([0, 1]), metrics=metrics)
    assert seen == [np.float32]


def test_a_decision_boundary_spans_the_points_and_their_margin_and_scatters_them_where_they_are():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y, model, _ = spiral_problem(dropout=False)
    recording, margin = Recording(model), 0.5
    ax = plot_decision_boundary(recording, Variable(X), Variable(y), resolution=20, margin=margin)
    low, high = X.min(axis=0) - margin, X.max(axis=0) + margin
    grid = recording.seen[-1]  # the points whose classes colour the plane
    np.testing.assert_allclose([grid.min(axis=0), grid.max(axis=0)], [low, high])
    np.testing.assert_allclose([ax.get_xlim(), ax.get_ylim()], np.transpose([low, high]))
    assert ax.get_aspect() == 1.0
    regions, points = ax.collections[0], ax.collections[-1]
    np.testing.assert_array_equal(regions.levels, np.arange(int(y.max()) + 2) - 0.5)  # one band a class
    np.testing.assert_array_equal(points.get_offsets(), X)
    plot_decision_boundary(model, X[:1], y[:1], resolution=5)  # one point is enough
    plt.close("all")


# --- modern.py ----------------------------------------------------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize("expression", ["x / 2", "(x / 2) * (2 / x)"])
def test_only_a_number_divided_by_a_variable_stands_for_a_reciprocal_node(expression):
    torch = pytest.importorskip("torch")
    data = np.arange(1.0, 4.0)
    ours = eval(expression, {"x": Variable(data)})
    theirs = eval(expression, {"x": torch.tensor(data, requires_grad=True)})
    assert _our_nodes(ours) == _torch_nodes(theirs.grad_fn)
