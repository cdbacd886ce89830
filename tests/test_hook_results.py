"""What a hook returns, and how it is called: a mask or integers by mistake are refused (a cast would
make them a gradient of zeros and ones, silently); a hook of the other kind's signature is named."""

import numpy as np
import pytest

from varfunc import DTypeError, Function, VarfuncError, Variable


@pytest.mark.parametrize("replace", [lambda g: g > 0, lambda g: g.astype(np.int64)])
def test_a_variable_hook_that_returns_a_mask_or_integers_is_refused(replace):
    x = Variable(np.array([1.0, -2.0, 3.0]))
    y = x * 2
    y.register_hook("mask", replace)
    with pytest.raises(DTypeError, match=r"a hook on output 0 of MulConstant.*returned (bool|int64) data"):
        (y * y).sum().backward()
    assert x._grad is None


def test_a_function_hook_that_returns_a_mask_is_refused():
    x = Variable(np.array([1.0, -2.0, 3.0]))
    y = x * 2
    y.creator.register_hook("mask", lambda grad_input, grad_output: (grad_input[0] > 0,))
    with pytest.raises(DTypeError, match=r"hook 'mask' on MulConstant.*returned bool data"):
        y.sum().backward()
    assert x._grad is None


def test_a_hook_that_returns_a_float_of_another_width_is_cast():
    x = Variable(np.array([1.0, -2.0], dtype=np.float32))
    y = x * 2
    y.register_hook("wide", lambda g: g.astype(np.float64) * 3)
    y.sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [6.0, 6.0]


def test_a_hook_with_the_other_kinds_signature_says_which_takes_what():
    x = Variable(np.array([1.0, 2.0]))
    y = x * 2
    y.register_hook("two_arguments", lambda grad_input, grad_output: None)
    with pytest.raises(
        VarfuncError, match=r"could not be called .*hook\(grad\); a Function's hook takes two"
    ):
        y.sum().backward()
    z = x * 3
    z.creator.register_hook("one_argument", lambda grad: None)
    with pytest.raises(VarfuncError, match=r"hook 'one_argument' on MulConstant\(3\) could not be called"):
        z.sum().backward()


def test_a_type_error_inside_a_hook_keeps_its_own_message():
    x = Variable(np.array([1.0, 2.0]))
    y = x * 2
    y.register_hook("broken", lambda grad: grad + "1")
    with pytest.raises(TypeError, match="ufunc 'add'|unsupported operand|cannot perform"):
        y.sum().backward()


class Halves(Function):
    """Two outputs, a / 2 and a * 2."""

    def forward(self, a):
        return a / 2, a * 2

    def backward(self, g1, g2):
        return g1 / 2 + g2 * 2


def test_a_hook_name_taken_by_a_sibling_output_says_so():
    low, high = Halves()(Variable(np.array([1.0, 2.0])))
    low.register_hook("h", lambda g: None)
    with pytest.raises(
        VarfuncError, match=r"already registered on Halves\(\) by its output 0, and its outputs share"
    ):
        high.register_hook("h", lambda g: None)
    taken = r"already registered on Halves\(\); call remove_hook\('h'\) first"
    with pytest.raises(VarfuncError, match=taken):
        low.register_hook("h", lambda g: None)
