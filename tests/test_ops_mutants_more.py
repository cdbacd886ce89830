"""More rules of the ops that a second mutation audit found no other test pinning down.

Each test below fails if one token of varfunc/functions/*.py changes in a way that the rest of the
suite let through: clamp's refusal of no bound; mean and sum along a dim of data that take NumPy's
slower path (float16, integers, unsigned integers); mode's default dim, and mode along a dim that is
not the last; mul, div, pow, matmul, remainder, fmod and addmm (also addmm by default), mm and bmm
with one operand that needs no gradient; mm, mv and bmm refusing other dims, bmm refusing batches of
different sizes, and a product's error for shapes that do not fit; integer division refused only for
an integer zero, and refused for shapes that do not broadcast; the error for a float subtracted in
place from boolean data; expand's -1; a gradient moved back to the device its input came from; a
ragged list key; a GPU index beside a host mask or an Ellipsis, range-checked on the axis it
indexes; the gradient of a size-1 dim broadcast against a size-0 one; the dims a 0-d Variable takes;
relu as threshold's default, softmax's default dim and softmax of values whose exp overflows; and
how an op shows its arguments.
"""

import functools

import numpy as np
import pytest

from varfunc import Variable
from varfunc import functions as F
from varfunc.errors import DTypeError, ShapeError


def _torch():
    return pytest.importorskip("torch")


def _ints(values, dtype=np.int64):
    return Variable(np.array(values, dtype=dtype), requires_grad=False)


# --- clamp with no bound ------------------------------------


def test_clamp_without_a_bound_is_refused():
    with pytest.raises(ValueError, match="give min, max or both"):
        F.Clamp()


# --- reductions ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float16, np.int64, np.int8])
@pytest.mark.parametrize("dim, keepdim", [(1, False), (0, True), ((0, 2), False), (-1, True)])
def test_mean_along_a_dim_of_float16_or_integer_data_is_numpys(dtype, dim, keepdim):
    a = np.arange(24).reshape(2, 3, 4).astype(dtype)
    y = F.Mean(dim, keepdim)(Variable(a, requires_grad=False))
    expected = a.mean(axis=dim, keepdims=keepdim)
    assert y.data.shape == expected.shape
    assert y.data.dtype == expected.dtype
    np.testing.assert_array_equal(y.data, expected)


@pytest.mark.parametrize("dim, keepdim", [(1, False), (0, True), ((0, 2), False), (-1, True)])
def test_the_sum_along_a_dim_of_unsigned_data_is_torchs(dim, keepdim):
    torch = _torch()
    a = (np.arange(24).reshape(2, 3, 4) * 20).astype(np.uint8)  # sums past 255
    y = F.Sum(dim, keepdim)(_ints(a, np.uint8))
    expected = torch.tensor(a).sum(dim, keepdim=keepdim).numpy()
    assert y.data.dtype == expected.dtype
    np.testing.assert_array_equal(y.data, expected)


MODE_DATA = np.random.default_rng(1).integers(0, 3, (3, 4, 5)).astype(float)  # slices with repeats


def test_mode_by_default_works_along_the_last_dim_as_torch():
    torch = _torch()
    values, indices = F.Mode()(Variable(MODE_DATA))
    t_values, _ = torch.tensor(MODE_DATA).mode()
    np.testing.assert_array_equal(values.data, t_values.numpy())
    assert indices.shape == MODE_DATA.shape[:-1]


@pytest.mark.parametrize("dim", [0, 1, -2])
def test_mode_along_a_dim_that_is_not_the_last_is_torchs(dim):
    torch = _torch()
    values, indices = Variable(MODE_DATA).mode(dim)
    t_values, _ = torch.tensor(MODE_DATA).mode(dim)
    np.testing.assert_array_equal(values.data, t_values.numpy())
    # the indices pick the values (torch may pick another of equal ones)
    picked = np.take_along_axis(MODE_DATA, np.expand_dims(indices.data, dim), axis=dim)
    np.testing.assert_array_equal(picked.squeeze(dim), values.data)


# --- basic ops -----------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["mul", "div", "pow", "matmul", "remainder", "fmod"])
@pytest.mark.parametrize("needs", [(True, False), (False, True)], ids=["first", "second"])
def test_a_binary_op_with_one_operand_that_needs_no_gradient_is_torchs(op, needs):
    torch = _torch()
    functions = {"mul": F.Mul, "div": F.Div, "pow": F.Pow, "matmul": F.Matmul, "remainder": F.Remainder}
    function = functools.partial(F.Remainder, fmod=True) if op == "fmod" else functions[op]
    a, b = np.array([2.0, 3.0, 0.5]), np.array([0.75, -1.25, 1.5])
    x, y = Variable(a, requires_grad=needs[0]), Variable(b, requires_grad=needs[1])
    function()(x, y).sum().backward()
    tx, ty = torch.tensor(a, requires_grad=needs[0]), torch.tensor(b, requires_grad=needs[1])
    getattr(torch, op)(tx, ty).sum().backward()
    leaf, t_leaf = (x, tx) if needs[0] else (y, ty)
    np.testing.assert_allclose(leaf.grad, t_leaf.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "subtract",
    [
        lambda x: F.SubConstant(1.5, inplace=True)(x),
        lambda x: F.Sub(inplace=True)(x, Variable(np.array([1.5, 2.0]), requires_grad=False)),
    ],
    ids=["constant", "variable"],
)
def test_a_float_subtracted_in_place_from_boolean_data_cannot_be_stored(subtract):
    # not the error for boolean minus boolean: the operand here is a float
    x = Variable(np.array([True, False]), requires_grad=False)
    with pytest.raises(DTypeError, match="cannot be stored in the Variable's bool data") as error:
        subtract(x)
    assert "boolean data minus boolean data" not in str(error.value)


@pytest.mark.parametrize("needs", [0, 1, 2], ids=["m", "a", "b"])
def test_addmm_by_default_and_with_one_operand_that_needs_a_gradient_is_torchs(needs):
    torch = _torch()
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape) for shape in ((2, 4), (2, 3), (3, 4))]
    variables = [Variable(a, requires_grad=k == needs) for k, a in enumerate(arrays)]
    tensors = [torch.tensor(a, requires_grad=k == needs) for k, a in enumerate(arrays)]
    y = F.Addmm()(*variables)
    ty = torch.addmm(*tensors)
    np.testing.assert_allclose(y.data, ty.detach().numpy(), rtol=1e-12)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(variables[needs].grad, tensors[needs].grad.numpy(), rtol=1e-12)


INT_DATA = np.array([7, -5, 9])


@pytest.mark.parametrize("op", [F.RemainderConstant, F.FloorDivideConstant])
def test_integer_data_by_an_integer_constant_zero_is_refused(op):
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        op(0)(_ints(INT_DATA))


@pytest.mark.parametrize("divisor", [1, 0.0, np.array([1, 2, -1]), np.array([0.0, 1.0, 2.0])])
@pytest.mark.parametrize("op", ["remainder", "floor_divide"])
def test_integer_data_by_one_or_by_a_float_zero_is_numpys(op, divisor):
    # only an integer zero divisor of integer data is refused
    if isinstance(divisor, np.ndarray):
        y = {"remainder": F.Remainder(), "floor_divide": F.FloorDivide()}[op](
            _ints(INT_DATA), _ints(divisor, divisor.dtype)
        )
    else:
        y = {"remainder": F.RemainderConstant, "floor_divide": F.FloorDivideConstant}[op](divisor)(
            _ints(INT_DATA)
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = getattr(np, op)(INT_DATA, divisor)
    assert y.data.dtype == expected.dtype
    np.testing.assert_array_equal(y.data, expected)


@pytest.mark.parametrize("op", [F.Remainder, F.FloorDivide])
def test_remainder_and_floor_divide_of_shapes_that_do_not_broadcast_are_refused(op):
    with pytest.raises(ShapeError, match=r"shapes \(2,\) and \(3,\) cannot be broadcast"):
        op()(Variable(np.ones(2)), Variable(np.ones(3)))


@pytest.mark.parametrize(
    "op, shapes, ndims",
    [
        (F.Mv, ((2, 3), (3, 4)), "2 and 1"),
        (F.Bmm, ((2, 3), (3, 4)), "3 and 3"),
        (F.Mm, ((3,), (3,)), "2 and 2"),
    ],
)
def test_mm_mv_and_bmm_refuse_operands_of_other_dims(op, shapes, ndims):
    with pytest.raises(ShapeError, match=f"expects operands with {ndims} dims"):
        op()(*(Variable(np.ones(shape)) for shape in shapes))


@pytest.mark.parametrize("needs", [(True, False), (False, True)], ids=["first", "second"])
def test_mm_and_bmm_with_one_operand_that_needs_a_gradient_are_torchs(needs):
    torch = _torch()
    rng = np.random.default_rng(0)
    for op, shapes in ((F.Mm, ((2, 3), (3, 4))), (F.Bmm, ((2, 3, 4), (2, 4, 5)))):
        arrays = [rng.standard_normal(shape) for shape in shapes]
        xs = [Variable(a, requires_grad=n) for a, n in zip(arrays, needs)]
        ts = [torch.tensor(a, requires_grad=n) for a, n in zip(arrays, needs)]
        y, ty = op()(*xs), (torch.mm if op is F.Mm else torch.bmm)(*ts)
        np.testing.assert_allclose(y.data, ty.detach().numpy(), rtol=1e-12)
        (y * y).sum().backward()
        (ty * ty).sum().backward()
        k = needs.index(True)
        np.testing.assert_allclose(xs[k].grad, ts[k].grad.numpy(), rtol=1e-12)


def test_bmm_refuses_batches_of_different_sizes_naming_them():
    with pytest.raises(ShapeError, match=r"different batch sizes \(2 and 3\)"):
        F.Bmm()(Variable(np.ones((2, 3, 4))), Variable(np.ones((3, 4, 5))))


@pytest.mark.parametrize(
    "op, shapes, which",
    [
        (F.Matmul, ((2, 3), (4,)), r"\(3\) must equal the first dim of the second \(4\)"),
        (F.Matmul, ((2, 3), (4, 5)), r"\(3\) must equal the second-to-last dim of the second \(4\)"),
        (
            F.Baddbmm,
            ((2, 3, 5), (2, 3, 4), (2, 6, 5)),
            r"\(4\) must equal the second-to-last dim of the second \(6\)",
        ),
    ],
)
def test_a_product_of_shapes_that_do_not_fit_names_the_dims_that_differ(op, shapes, which):
    with pytest.raises(ShapeError, match=r"do not fit: the last dim of the first " + which):
        op()(*(Variable(np.ones(shape)) for shape in shapes))


# --- shape ops: expand's -1, and moves between devices ---------------------------


@pytest.mark.parametrize(
    "shape, sizes",
    [((2, 1), (-1, 3)), ((2, 1), (4, -1, 3)), ((3, 1, 2), (5, -1, 4, -1)), ((1, 2), (3, -1, -1))],
)
def test_expand_with_minus_one_keeps_that_dim_as_torch(shape, sizes):
    torch = _torch()
    a = np.arange(float(np.prod(shape))).reshape(shape)
    seed = np.random.default_rng(0).standard_normal(torch.zeros(shape).expand(*sizes).shape)
    x = Variable(a)
    y = F.Expand(*sizes)(x)
    y.backward(seed)
    t = torch.tensor(a, requires_grad=True)
    ty = t.expand(*sizes)
    ty.backward(torch.tensor(seed))
    np.testing.assert_array_equal(y.data, ty.detach().numpy())
    np.testing.assert_allclose(x.grad, t.grad.numpy(), rtol=1e-12)


def test_cuda_and_cpu_move_the_data_and_the_gradient_back_on_a_simulated_gpu():
    from varfunc import backend
    from varfunc.grading.fake_gpu import FakeGpuArray, fake_gpu

    with fake_gpu():
        x = Variable(np.array([1.0, 2.0, 3.0]))
        on_gpu = F.CudaTransfer()(x)
        assert backend.device_of(on_gpu.data) == "cuda:0"
        (on_gpu * on_gpu).sum().backward()
        assert backend.device_of(x.grad) == "cpu"
        np.testing.assert_array_equal(x.grad, 2 * x.data)

        g = Variable(FakeGpuArray(np.array([1.0, -2.0])))
        on_cpu = F.CpuTransfer()(g)
        assert backend.device_of(on_cpu.data) == "cpu"
        (on_cpu * on_cpu).sum().backward()
        assert backend.device_of(g.grad) == "cuda:0"
        np.testing.assert_array_equal(g.grad.get(), [2.0, -4.0])


# --- indexing: keys NumPy cannot read, and GPU keys mixed with host lists ---------------------------


def test_a_ragged_list_key_is_refused_as_numpy_refuses_it():
    x = Variable(np.array([[1.0, 2.0]]))
    with pytest.raises(ShapeError, match=r"Variable\[\[\[0, 1\], \[0\]\]\]: .*inhomogeneous"):
        x[[[0, 1], [0]]]


MASK_2D = [[True, False, True], [False, True, False]]  # a short host list that indexes two axes


@pytest.mark.parametrize(
    "host_key",
    [
        (MASK_2D, [1, 0, 1]),
        (MASK_2D, [2, 0, 2]),
        (MASK_2D, [-3]),
        ([[False] * 3] * 2, [5]),
        (0, Ellipsis, [1]),
        (Ellipsis, 0, [4, 5]),
    ],
    ids=["in range", "out of range", "negative", "picks nothing", "ellipsis", "ellipsis out of range"],
)
def test_a_gpu_index_beside_host_parts_is_range_checked_as_numpy_checks_it(host_key):
    # the GPU index (the last part) is checked against the axis it indexes (a mask takes two, an
    # Ellipsis those left over), and only where NumPy reads it (not where the mask picks nothing)
    from varfunc.grading.fake_gpu import FakeGpuArray, fake_gpu

    a = np.arange(12.0).reshape(2, 3, 2)
    try:
        expected = a[host_key]
    except IndexError:
        expected = None
    with fake_gpu():
        x = Variable(FakeGpuArray(a))
        gpu_key = (*host_key[:-1], FakeGpuArray(np.array(host_key[-1], dtype=np.int64)))
        if expected is None:
            with pytest.raises(ShapeError, match=r"index -?\d is out of bounds for axis \d with size \d"):
                x[gpu_key]
        else:
            np.testing.assert_array_equal(x[gpu_key].data.get(), expected)


# --- sum_to_shape and dims of a 0-d Variable -------------------------------------------------------


def test_a_size_one_dim_broadcast_against_a_size_zero_dim_gets_a_zero_gradient_as_in_torch():
    torch = _torch()
    x, empty = Variable(np.ones((1, 3))), Variable(np.ones((0, 3)))
    F.Add()(x, empty).sum().backward()
    t, t_empty = (
        torch.ones(1, 3, dtype=torch.float64, requires_grad=True),
        torch.ones(0, 3, dtype=torch.float64),
    )
    (t + t_empty).sum().backward()
    assert x.grad.shape == (1, 3)
    np.testing.assert_array_equal(x.grad, t.grad.numpy())


def test_a_dim_out_of_range_for_a_0d_variable_names_the_dims_it_takes():
    # a 0-d Variable takes dim -1 or 0, as in PyTorch
    x = Variable(np.array(2.0))
    for dim in (-1, 0):
        np.testing.assert_array_equal(x.sum(dim).data, 2.0)
    with pytest.raises(ShapeError, match="use a dim from -1 to 0"):
        x.sum(2)


# --- activations: their defaults, and inputs whose exp overflows ---------------------------------


def test_threshold_by_default_is_relu_as_torch():
    torch = _torch()
    a = np.array([-1.5, 0.0, 0.5, 2.0])
    x = Variable(a)
    y = F.Threshold()(x)
    y.backward(np.ones(4))
    t = torch.tensor(a, requires_grad=True)
    ty = torch.relu(t)
    ty.backward(torch.ones(4, dtype=torch.float64))
    np.testing.assert_array_equal(y.data, ty.detach().numpy())
    np.testing.assert_array_equal(x.grad, t.grad.numpy())


ROWS_OF_DIFFERENT_SCALES = np.array([[0.0, 1.0, 2.0], [1000.0, 1001.0, 999.0]])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_by_default_works_along_the_last_dim_as_torch(name):
    torch = _torch()
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    y = {"softmax": F.Softmax, "log_softmax": F.LogSoftmax}[name]()(Variable(a))
    np.testing.assert_allclose(y.data, getattr(torch, name)(torch.tensor(a), -1).numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_of_large_values_and_of_rows_of_different_scales_is_torchs(name, dim):
    # each slice is shifted by its own max: exp of a + max, or of a - the max of all, overflows
    torch = _torch()
    a = ROWS_OF_DIFFERENT_SCALES if dim == 1 else ROWS_OF_DIFFERENT_SCALES.T
    y = {"softmax": F.Softmax, "log_softmax": F.LogSoftmax}[name](dim)(Variable(a))
    np.testing.assert_allclose(y.data, getattr(torch, name)(torch.tensor(a), dim).numpy(), rtol=1e-12)


# --- how an op shows itself (its node in a graph, its errors) --------------------------------------


@pytest.mark.parametrize(
    "function, shown",
    [
        (F.Sum(1, True), "Sum(dim=1, keepdim=True)"),
        (F.Sum((0, 2)), "Sum(dim=(0, 2))"),
        (F.Mean(-1, True), "Mean(dim=-1, keepdim=True)"),
        (F.Clamp(0, 1.5), "Clamp(min=0, max=1.5)"),
        (F.CmaxConstant(0.5), "CmaxConstant(0.5)"),
        (F.CminConstant(2), "CminConstant(2)"),
        (F.SubConstant(2, sub_tensor=True), "SubConstant(2, sub_tensor=True)"),
        (F.SubConstant(2), "SubConstant(2)"),
        (F.DivConstant(3.0, div_by_tensor=True), "DivConstant(3.0, div_by_tensor=True)"),
        (F.DivConstant(3.0), "DivConstant(3.0)"),
        (F.PowConstant(2, tensor_power=True), "PowConstant(2, tensor_power=True)"),
        (F.PowConstant(2), "PowConstant(2)"),
        (F.Concat(1), "Concat(dim=1)"),
        (F.Softmax(0), "Softmax(dim=0)"),
        (F.Addmm(0.5, 2), "Addmm(alpha=0.5, beta=2)"),
        (F.Remainder(fmod=True), "Remainder(fmod=True)"),
        (
            F.RemainderConstant(2, tensor_divisor=True, fmod=True),
            "RemainderConstant(2, tensor_divisor=True, fmod=True)",
        ),
        (F.FloorDivideConstant(2, tensor_divisor=True), "FloorDivideConstant(2, tensor_divisor=True)"),
        (F.LogSoftmax(1), "LogSoftmax(dim=1)"),
        (F.CudaTransfer("cuda:1"), "CudaTransfer('cuda:1')"),
        (F.CpuTransfer(), "CpuTransfer('cpu')"),
        (F.Type("foo"), "Type('foo')"),
        (F.Index((1,)), "Index((1,))"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_an_op_shows_its_arguments_as_a_call(function, shown):
    assert repr(function) == shown
