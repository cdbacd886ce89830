"""More rules of the core that a full mutation audit found no other test pinning down.

A second, complete pass over every single-token mutant of varfunc/engine.py, function.py, leaf.py
and variable.py (the first sampled them; test_core_mutants.py holds its tests). Each test below
fails if one token changes in a way that the rest of the suite let through: the note a stopped
backward adds, an op that returns one array twice, an in-place op whose forward raises its own
TypeError, the dtypes an out-of-range number's error names, a kit op that saves a stranger, a bool
seed, requires_grad's type, an assigned .grad, a list as data, in-place shapes that do not
broadcast, the repr's flags, cuda() on the GPU, a leaf's first gradient on another device or in
another dtype.
"""

import re
import sys

import numpy as np
import pytest

from varfunc import DeviceError, DTypeError, Function, InplaceFunction, ShapeError, VarfuncError, Variable
from varfunc.grading.fake_gpu import FakeGpuArray, fake_gpu

# --- engine.py: the note of a backward that stopped part-way --------------------------------------


def _stopped_backward(n_leaves):
    """A backward that fails in a hook after n_leaves leaves (shapes (1,) ... (n,)) have accumulated."""
    leaves = [Variable(np.ones(k)) for k in range(1, n_leaves + 1)]
    z = Variable(np.ones(9))
    h = z * 2
    h.register_hook("fails", lambda g: 1 / 0)
    y = h.sum()
    for leaf in leaves:
        y = y + leaf.sum()
    with pytest.raises(ZeroDivisionError) as caught:
        y.backward()
    assert all(leaf.grad.tolist() == [1.0] * leaf.shape[0] for leaf in leaves) and z.grad.sum() == 0
    (note,) = caught.value.__notes__
    return note


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")
@pytest.mark.parametrize("n_leaves", [1, 5, 6, 7])
def test_the_note_of_a_stopped_backward_counts_the_leaves_and_lists_at_most_five(n_leaves):
    """The note names how many leaves changed, in the singular for one, and the shapes of five at most."""
    note = _stopped_backward(n_leaves)
    noun = "leaf Variable" if n_leaves == 1 else "leaf Variables"
    assert note.startswith(f"backward stopped part-way, after {n_leaves} {noun} (shape ")
    listed = note.split("(shape ", 1)[1].split(" had added", 1)[0]
    shapes = re.findall(r"\((\d+),\)", listed)
    assert len(shapes) == min(n_leaves, 5) and set(shapes) <= {str(k) for k in range(1, n_leaves + 1)}
    assert listed.endswith(", ...)") == (n_leaves > 5)


# --- function.py: outputs, in-place calls, errors --------------------------------------------------


class DoublesTwice(Function):
    """2x, returned twice as the very same array: (y, y)."""

    def forward(self, x):
        y = x * 2
        return y, y

    def backward(self, grad_first, grad_second):
        return 2 * (grad_first + grad_second)


class KitDoublesTwice(DoublesTwice):
    """The same op as the kit's own (a Function written outside the kit has every output copied)."""


KitDoublesTwice.outside_the_kit = False


@pytest.mark.parametrize("op", [DoublesTwice, KitDoublesTwice])
def test_an_array_returned_twice_gives_two_outputs_that_share_no_memory(op):
    """An op returning one array twice makes two Variables: changing one in place leaves the other."""
    x = Variable(np.array([1.0, 2.0]))
    first, second = op()(x)
    assert not np.shares_memory(first.data, second.data)
    second.data[0] = 100.0  # as an in-place op would, behind the graph's back
    assert first.data.tolist() == [2.0, 4.0]
    (first * 3 + second).sum().backward()
    assert x.grad.tolist() == [8.0, 8.0]


class RaisesItsOwnTypeError(InplaceFunction):
    """An in-place op whose forward fails with a TypeError of its own, not NumPy's cast refusal."""

    def forward(self, a):
        raise TypeError("unsupported operand for the student's op")

    def backward(self, grad_output):
        return grad_output


def test_an_inplace_ops_own_type_error_is_raised_as_it_is():
    """Only NumPy's refusal to cast becomes a DTypeError; any other TypeError comes out unchanged."""
    x = Variable(np.array([1.0, 2.0]), requires_grad=False)
    with pytest.raises(TypeError, match="unsupported operand for the student's op") as caught:
        RaisesItsOwnTypeError(inplace=True)(x)
    assert not isinstance(caught.value, DTypeError)
    assert x.data.tolist() == [1.0, 2.0]


class AddsTooLargeANumber(Function):
    """forward adds 300 to its first input: out of range for uint8 data."""

    def forward(self, a, *others):
        return a + 300

    def backward(self, grad_output):
        return grad_output


@pytest.mark.parametrize(
    ("inputs", "named"),
    [
        ((np.array([1], np.uint8),), "(input dtype uint8)"),
        ((np.array([1], np.uint8), np.array([1.0])), "(input dtypes uint8, float64)"),
    ],
)
def test_a_number_out_of_range_names_the_input_dtype_or_dtypes(inputs, named):
    """The DTypeError for a number that does not fit names each input's dtype, "dtypes" for several."""
    variables = [Variable(a, requires_grad=False) for a in inputs]
    with pytest.raises(DTypeError, match="AddsTooLargeANumber: Python integer 300 out of bounds") as caught:
        AddsTooLargeANumber()(*variables)
    assert named in str(caught.value)


class KitSavesAStranger(Function):
    """An op the kit counts as its own that saves an array forward neither received nor returned."""

    def forward(self, x):
        self.save_for_backward(x * 3)
        return x * 2

    def backward(self, grad_output):
        return grad_output * 2


KitSavesAStranger.outside_the_kit = False


def test_a_kit_op_saving_an_array_that_is_neither_input_nor_output_is_refused():
    """A stranger given to save_for_backward is refused by name also for a kit op (no forward checks)."""
    with pytest.raises(
        VarfuncError, match=r"save_for_backward: argument 0 is neither an input nor an output"
    ):
        KitSavesAStranger()(Variable(np.ones(2)))


# --- variable.py: the seed, requires_grad, .data and .grad, repr, devices ---------------------------


def test_a_bool_seed_is_cast_to_the_data_dtype_before_the_roots_backward_gets_it():
    """backward(bool mask) works as torch's: Sub's backward negates the seed, which a bool cannot be."""
    torch = pytest.importorskip("torch")
    seed = np.array([True, False])
    a, b = Variable(np.array([1.0, 2.0])), Variable(np.array([3.0, 4.0]))
    (a - b).backward(seed)
    ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in ([1.0, 2.0], [3.0, 4.0]))
    (ta - tb).backward(torch.from_numpy(seed))
    np.testing.assert_allclose(a.grad, ta.grad.numpy())
    np.testing.assert_allclose(b.grad, tb.grad.numpy())
    assert a.grad.dtype == b.grad.dtype == np.float64


def test_requires_grad_is_false_not_just_falsy():
    """requires_grad is a bool: False for a volatile Variable and for an output marked non-differentiable."""
    from test_core_mutants import ClampWithMask

    volatile = Variable(np.ones(2), volatile=True)
    values, mask = ClampWithMask()(Variable(np.array([-1.0, 2.0])))
    assert volatile.requires_grad is False and mask.requires_grad is False and values.requires_grad is True


def test_an_assigned_writable_array_of_its_own_becomes_grad_itself():
    """x.grad = g keeps g (as torch does): backward then adds into the caller's array, no copy is made."""
    x = Variable(np.array([1.0, 2.0]))
    g = np.array([10.0, 20.0])
    x.grad = g
    assert x.grad is g
    (x * 3).sum().backward()
    assert g.tolist() == [13.0, 23.0]


def test_data_and_grad_take_a_list_as_an_array():
    """x.data = [...] and x.grad = [...] store NumPy arrays, as Variable([...]) does."""
    x = Variable(np.array([1.0, 2.0]))
    x.data = [3.0, 4.0]
    x.grad = [0.5, 0.5]
    assert type(x.data) is np.ndarray and x.data.tolist() == [3.0, 4.0]
    assert type(x.grad) is np.ndarray and x.grad.tolist() == [0.5, 0.5]


def test_an_in_place_op_with_a_shape_that_does_not_broadcast_is_a_shape_error():
    """Shapes that do not broadcast at all are refused as those that broadcast to another shape are."""
    h = Variable(np.ones(2)) * 1
    with pytest.raises(
        ShapeError, match=r"Add: the result \(shapes \[\(2,\), \(3,\)\] broadcast\) would not"
    ):
        h.add_(Variable(np.ones(3)))
    assert h.data.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    ("make", "flags"),
    [
        (lambda: Variable(np.ones(2), volatile=True), ", volatile]"),
        (lambda: Variable(np.ones(2)), ", requires_grad]"),
        (lambda: Variable(np.ones(2), requires_grad=False), "on cpu]"),
        (lambda: Variable(np.ones(2)) * 2, ", requires_grad, creator=MulConstant(2)]"),
        (lambda: Variable(np.ones(2), requires_grad=False) * 2, "on cpu, creator=MulConstant(2)]"),
    ],
)
def test_the_repr_shows_volatile_requires_grad_and_a_creator_that_is_an_op(make, flags):
    """The repr's last line names volatile or requires_grad, and the creator only when it is an op."""
    last = repr(make()).splitlines()[-1]
    assert last.startswith("[float64 of size (2,) on cpu") and last.endswith(flags)
    assert last.count(",") == flags.count(",") + 1  # nothing else: (2,) has the one other comma


def test_cuda_on_a_variable_already_on_that_gpu_is_the_same_variable():
    """x.cuda() and x.cuda(0) give x itself when x is on cuda:0 (the simulated GPU), as .cpu() on the CPU."""
    with fake_gpu():
        x = Variable(FakeGpuArray(np.ones(3)))
        assert x.device == "cuda:0" and x.cuda() is x and x.cuda(0) is x
        moved = Variable(np.ones(3)).cuda()
        assert moved.device == "cuda:0" and type(moved.creator).__name__ == "CudaTransfer"


def test_a_gpu_gradient_reaching_a_host_leaf_is_a_device_error():
    """The mirror of test_devices_fake_gpu's host gradient on a GPU leaf: refused, not converted."""
    with fake_gpu():
        x = Variable(np.ones(3))
        with pytest.raises(DeviceError, match=r"gradient on cuda:0 reached a leaf of shape \(3,\) on cpu"):
            x._accumulate_grad(FakeGpuArray(np.ones(3)))
    assert x._grad is None


def test_a_leafs_first_gradient_in_another_dtype_is_stored_in_the_leafs_dtype():
    """.grad keeps the data's dtype even when the first gradient a leaf gets is float32 for float64 data."""
    x = Variable(np.ones(2))
    x._accumulate_grad(np.array([0.1, 0.2], dtype=np.float32))
    assert x.grad.dtype == np.float64
    np.testing.assert_allclose(x.grad, np.array([0.1, 0.2], dtype=np.float32).astype(np.float64))


def test_a_misspelt_attribute_of_a_variable_is_an_error_not_a_new_attribute():
    """Variable has __slots__: w.requries_grad = False raises instead of silently doing nothing."""
    w = Variable(np.ones(2))
    with pytest.raises(AttributeError, match="requries_grad"):
        w.requries_grad = False
    assert w.requires_grad and not hasattr(w, "__dict__")
