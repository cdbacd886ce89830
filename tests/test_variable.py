"""Variable: construction, requires_grad and volatile rules, grad, backward errors, repr, copying."""

import copy
import pickle

import numpy as np
import pytest

import varfunc as vf
from varfunc import Leaf, Variable


@pytest.mark.parametrize(
    "data, dtype",
    [(3.5, np.float64), ([1.0, 2.0], np.float64), ([[1, 2]], np.int64), (np.float32(2), np.float32)],
)
def test_array_likes_and_scalars_become_arrays(data, dtype):
    v = Variable(data)
    assert isinstance(v.data, np.ndarray) and v.data.dtype == dtype
    np.testing.assert_array_equal(v.data, np.asarray(data))


def test_user_created_variables_have_a_leaf_creator():
    x = Variable(np.ones(2))
    assert isinstance(x.creator, Leaf) and x.creator.variable is x
    assert x.creator.output_ids == {id(x): 0} and x.creator.previous_functions == ()


def test_float_data_requires_grad_by_default_as_in_v013():
    assert Variable(np.ones(2)).requires_grad is True
    assert Variable(np.ones(2), requires_grad=False).requires_grad is False


@pytest.mark.parametrize("data", [np.arange(3), np.array([True, False]), np.arange(3, dtype=np.uint8)])
def test_integer_and_boolean_data_need_no_grad_by_default(data):
    v = Variable(data)
    assert v.requires_grad is False and v.grad is None


def test_integer_data_with_explicit_requires_grad_is_a_clear_error():
    with pytest.raises(vf.DTypeError, match=r"int64 data cannot require grad.*astype"):
        Variable(np.arange(3), requires_grad=True)


@pytest.mark.parametrize("data", [np.array(["a"]), np.array([1 + 2j]), {"a": 1}])
def test_non_numeric_data_is_a_clear_error(data):
    with pytest.raises(vf.DTypeError, match="Variable"):
        Variable(data)


def test_a_variable_is_not_wrapped_twice():
    with pytest.raises(vf.DTypeError, match=r"\.data"):
        Variable(Variable(np.ones(1)))


def test_requires_grad_can_be_set_on_leaves_only():
    x = Variable(np.ones(2), requires_grad=False)
    x.requires_grad = True
    assert (x * 2).requires_grad
    with pytest.raises(vf.BackwardError, match="only be set on Variables you created"):
        (x * 2).requires_grad = False
    with pytest.raises(vf.DTypeError):
        Variable(np.arange(2)).requires_grad = True


def test_requires_grad_spreads_to_outputs():
    a = Variable(np.ones(2), requires_grad=False)
    b = Variable(np.ones(2))
    assert not (a * 2).requires_grad
    assert (a * b).requires_grad
    assert (a * b).creator.needs_input_grad == (False, True)


def test_volatile_spreads_and_records_no_graph():
    v = Variable(np.ones(2), volatile=True)
    w = Variable(np.ones(2))
    out = (v * w).exp()
    assert out.volatile and out.creator is None and not out.requires_grad
    assert v.creator is None and not v.requires_grad and v.grad is None
    with pytest.raises(vf.BackwardError, match="volatile"):
        out.sum().backward()


@pytest.mark.parametrize("target", ["a leaf that needs no grad", "a computed Variable"])
def test_volatile_spreads_through_an_in_place_op_too(target):
    v = Variable(np.ones(2), volatile=True)
    x = Variable(np.ones(2))
    y = Variable(np.ones(2), requires_grad=False) if target == "a leaf that needs no grad" else x * 2
    out = y.add_(v)
    assert out is y and y.volatile and y.creator is None and not y.requires_grad
    with pytest.raises(vf.BackwardError, match="volatile"):
        y.sum().backward()


def test_grad_is_lazy_zeros_with_the_data_shape_and_dtype():
    x = Variable(np.ones((2, 3), dtype=np.float32))
    assert x._grad is None
    assert x.grad.shape == (2, 3) and x.grad.dtype == np.float32 and not x.grad.any()


def test_only_leaves_get_their_grad_filled():
    x = Variable(np.array([1.0, 2.0]))
    h = x * 3
    h.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert not h.grad.any()


def test_backward_twice_accumulates_into_leaves():
    x = Variable(np.array([1.0, 2.0]))
    loss = (x * x).sum()
    loss.backward()
    loss.backward()
    assert x.grad.tolist() == [4.0, 8.0]
    x.grad = None
    loss.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_backward_on_a_variable_that_needs_no_grad_is_an_error():
    with pytest.raises(vf.BackwardError, match="doesn't require grad"):
        (Variable(np.ones(1), requires_grad=False) * 2).backward()


def test_backward_on_a_non_scalar_needs_a_gradient():
    x = Variable(np.ones(3))
    with pytest.raises(vf.BackwardError, match=r"scalar.*shape \(3,\)"):
        (x * 2).backward()
    (x * 2).backward(np.array([1.0, 2.0, 3.0]))
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_a_gradient_of_the_wrong_shape_is_rejected_before_anything_runs():
    x = Variable(np.ones(3))
    with pytest.raises(vf.ShapeError, match=r"\(2,\).*\(3,\)"):
        (x * 2).backward(np.ones(2))
    assert x._grad is None


def test_backward_on_a_leaf_accumulates_the_seed():
    x = Variable(np.array([2.0, 3.0]))
    x.backward(np.array([1.0, 0.5]))
    assert x.grad.tolist() == [1.0, 0.5]


def test_repr_is_readable_and_has_no_address():
    x = Variable(np.array([1.0, 2.0]))
    text = repr(x * 2)
    assert text.startswith("Variable containing:\n[2. 4.]")
    assert "float64 of size (2,) on cpu" in text and "creator=MulConstant(2)" in text
    assert "0x" not in text and "0x" not in repr(Variable(np.ones(1), volatile=True))


def test_shape_helpers():
    x = Variable(np.zeros((2, 3)))
    assert x.size() == (2, 3) and x.size(1) == 3 and x.dim() == 2 and x.numel() == 6
    assert len(x) == 2 and [row.shape for row in x] == [(3,), (3,)]
    assert Variable(np.array([4.0])).item() == 4.0 and float(Variable(np.array(2.5))) == 2.5
    with pytest.raises(vf.ShapeError, match="item"):
        x.item()


def test_assigning_data_counts_as_an_in_place_change():
    w = Variable(np.array([1.0, 2.0]))
    x = Variable(np.array([3.0, 4.0]), requires_grad=False)
    h = w * 1
    loss = (h * x).sum()
    h.data -= 1  # changes what Mul saved for w's gradient
    with pytest.raises(vf.InplaceError, match="modified by an in-place operation"):
        loss.backward()


def test_parameter_update_through_data_between_steps_is_fine():
    w = Variable(np.array([1.0, 2.0]))
    for _ in range(2):
        loss = (w * w).sum()
        loss.backward()
        w.data -= 0.1 * w.grad
        w.grad = None
    np.testing.assert_allclose(w.data, np.array([1.0, 2.0]) * 0.8**2)


def test_deepcopy_of_leaves_only():
    x = Variable(np.array([1.0]))
    (x * 2).backward()
    clone = copy.deepcopy(x)
    assert clone is not x and clone.data is not x.data and clone.grad.tolist() == [2.0]
    assert clone.requires_grad and isinstance(clone.creator, Leaf) and clone.creator.variable is clone
    with pytest.raises(vf.BackwardError, match="graph leaves"):
        copy.deepcopy(x * 2)


def test_item_assignment_is_refused_with_a_pointer():
    x = Variable(np.zeros(3))
    with pytest.raises(TypeError, match="item assignment"):
        x[0] = 1.0


def test_numpy_arrays_defer_to_variable_operators():
    x = Variable(np.array([1.0, 2.0]))
    out = np.array([3.0, 4.0]) * x
    assert isinstance(out, Variable) and out.data.tolist() == [3.0, 8.0]
    out.sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


def test_modern_aliases():
    x = Variable(np.array([1.0]))
    y = x * 2
    assert x.grad_fn is None and x.is_leaf
    assert y.grad_fn is y.creator and not y.is_leaf
    assert y.grad_fn.next_functions == ((x.creator, 0),)
    assert y.grad_fn.name() == "MulBackward0" and x.creator.name() == "AccumulateGrad"
    const = Variable(np.array([1.0]), requires_grad=False)
    assert (const * 2).is_leaf  # today's convention: no grad needed means leaf
    assert (x * const).grad_fn.next_functions[1] == (None, 0)


def test_an_inplace_result_that_does_not_fit_the_dtype_is_a_clear_error_and_changes_nothing():
    index = Variable(np.arange(3))
    for call in (lambda: index.add_(0.5), lambda: index.exp_(), lambda: index.div_(2)):
        with pytest.raises(vf.DTypeError, match=r"in-place result cannot be stored in the Variable's int64"):
            call()
    assert index.data.tolist() == [0, 1, 2] and index._version == [0]
    assert index.add_(2).data.tolist() == [2, 3, 4]  # an integer result fits
    mask = Variable(np.array([True, False]))
    for name in ("exp_", "tanh_", "sigmoid_"):  # NumPy's own error for sigmoid_ named no op
        with pytest.raises(
            vf.DTypeError,
            match=r"(Exp|Tanh|Sigmoid): the in-place result cannot be stored in the Variable's bool",
        ):
            getattr(mask, name)()
    assert mask.data.tolist() == [True, False] and mask._version == [0]


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_t_takes_at_most_two_dims_as_in_torch(shape):
    data = np.arange(float(np.prod(shape))).reshape(shape) + 1
    x = Variable(data)
    y = x.t()
    assert y.data.tolist() == data.T.tolist() and y.creator is not x.creator  # a node of its own
    (y * Variable(data.T.copy(), requires_grad=False)).sum().backward()
    assert x.grad.tolist() == data.tolist()


def test_method_argument_errors_are_varfunc_errors():
    x = Variable(np.ones((2, 2, 2)))
    with pytest.raises(
        vf.ShapeError, match=r"t: expects at most 2 dims, got shape \(2, 2, 2\); use transpose"
    ):
        x.t()
    h = x * 1
    for name in ("mul_", "div_"):
        with pytest.raises(vf.DTypeError, match=rf"{name} only supports .* a number"):
            getattr(h, name)(h)
    assert h.data.tolist() == x.data.tolist()


def test_a_gradient_of_the_wrong_shape_cannot_be_assigned():
    x = Variable(np.ones(3))
    with pytest.raises(vf.ShapeError, match=r"grad: got shape \(2,\) for a Variable of shape \(3,\)"):
        x.grad = np.ones(2)
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_data_and_grad_assignments_are_checked_before_anything_changes():
    x = Variable(np.array([1.0, 2.0]))
    with pytest.raises(vf.ShapeError, match=r"data: got shape \(3,\) for a Variable of shape \(2,\)"):
        x.data = np.zeros(3)
    with pytest.raises(vf.DTypeError, match=r"grad: got a Variable; assign its array \(grad = other.data\)"):
        x.grad = Variable(np.zeros(2))
    with pytest.raises(vf.DTypeError, match="grad: got int64 for a Variable of float64"):
        x.grad = np.zeros(2, dtype=np.int64)
    assert x.data.tolist() == [1.0, 2.0] and x._version[0] == 0 and x._grad is None
    x.data = np.array([3.0, 4.0], dtype=np.float32)  # a new dtype is fine: same shape
    assert x.dtype == np.float32 and x._version[0] == 1


def test_volatile_and_non_differentiable_variables_explain_themselves():
    v = Variable(np.ones(2), volatile=True)
    with pytest.raises(vf.BackwardError, match="a volatile Variable never requires grad"):
        v.requires_grad = True
    copied = copy.deepcopy(v)
    assert copied.volatile and copied.data is not v.data and copied.data.tolist() == [1.0, 1.0]
    values, indices = Variable(np.array([[1.0, 3.0]])).max(1)
    with pytest.raises(vf.BackwardError, match=r"this output of Max\(.*\) is not differentiable"):
        indices.backward()


def test_backward_with_an_engine_name_instead_of_an_engine():
    x = Variable(np.ones(1))
    with pytest.raises(vf.BackwardError, match=r"engine=ExecutionEngine\(order='fifo'\)"):
        (x * 2).backward(engine="fifo")
    assert x._grad is None


def test_shallow_copies_and_pickles_are_refused_clearly():
    x = Variable(np.ones(2))
    with pytest.raises(TypeError, match=r"x.clone\(\).*copy.deepcopy\(x\)"):
        copy.copy(x)
    with pytest.raises(TypeError, match=r"pickle its array, x.data"):
        pickle.dumps(x)


def test_a_hook_on_a_leafs_creator_is_called():
    x = Variable(np.array([1.0, 2.0]))
    seen = []
    x.creator.register_hook("h", lambda grad_input, grad_output: seen.append((grad_input, grad_output)))
    (x * 3).sum().backward()
    assert len(seen) == 1 and seen[0][0] == () and seen[0][1][0].tolist() == [3.0, 3.0]


@pytest.mark.parametrize("seed", [np.array([True]), np.array([200], np.uint8), np.array([1])])
def test_a_seed_of_another_dtype_is_cast_to_the_variables(seed):
    """torch casts the seed too; summed as given, bools would be OR-ed and uint8 would wrap."""
    x, y = Variable(np.array([2.0])), Variable(np.array([3.0]))
    (x * y + (x + y)).backward(seed)
    value = float(seed[0])
    assert x.grad.tolist() == [4.0 * value] and y.grad.tolist() == [3.0 * value]
    assert x.grad.dtype == np.float64


def test_integer_data_for_a_variable_that_requires_grad_is_refused():
    x = Variable(np.array([1.0, 2.0]))
    with pytest.raises(vf.DTypeError, match="int64 data for a Variable that requires grad"):
        x.data = np.array([1, 2])
    assert x.dtype == np.float64 and x.data.tolist() == [1.0, 2.0]
    labels = Variable(np.array([0, 1]))  # needs no grad: any dtype will do
    labels.data = np.array([1, 0])
    assert labels.data.tolist() == [1, 0]


def test_a_read_only_grad_is_copied_so_backward_can_add_into_it():
    x = Variable(np.ones(2))
    x.grad = np.broadcast_to(np.zeros(1), (2,))
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_a_writable_grad_whose_elements_share_memory_is_copied_too():
    """A zero-stride view CuPy's broadcast_to gives (NumPy's is read-only): backward added every
    element's gradient into one shared number."""
    x = Variable(np.ones(3))
    shared = np.zeros(1)
    x.grad = np.lib.stride_tricks.as_strided(shared, (3,), (0,))  # writable, one element underneath
    (x * Variable(np.array([1.0, 2.0, 3.0]))).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0] and shared.tolist() == [0.0]


def test_a_grad_that_is_the_data_itself_is_copied_so_backward_leaves_the_data_alone():
    """w.grad = w.data: backward added into the weights (and their version did not move)."""
    w = Variable(np.ones(3))
    w.grad = w.data[::1]  # a view of the data too
    (w * 2).sum().backward()
    assert w.data.tolist() == [1.0, 1.0, 1.0] and w.grad.tolist() == [3.0, 3.0, 3.0]


def test_data_of_another_dtype_takes_its_grad_along():
    """Before: float64 data kept a float32 .grad, a pair the .grad setter itself refuses."""
    w = Variable(np.ones(2, dtype=np.float32))
    (w * 2).sum().backward()
    w.data = w.data.astype(np.float64)
    assert w.grad.dtype == np.float64 and w.grad.tolist() == [2.0, 2.0]
    (w * 3).sum().backward()
    assert w.grad.dtype == np.float64 and w.grad.tolist() == [5.0, 5.0]
