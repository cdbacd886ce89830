"""A verdict names the slip the student made (found by a red-team pass, where the hint was about
another mistake): a sum that never reached its slot, a gradient summed to the other input's shape,
needs_input_grad read in forward, a 0-d case with no code to run it; and a count written 1.0."""

from __future__ import annotations

from exercises.ch08_more import MORE_WRONG_ANSWERS, _recorded
from test_exercises import verdict


def test_an_add_grad_whose_copy_never_goes_back_into_the_slot_is_told_so():
    source = (
        "def add_grad(need_copy, buffer, output_nr, grad):\n"
        "    slot = (id(buffer), output_nr)\n"
        "    if buffer[output_nr] is None:\n"
        "        buffer[output_nr] = grad\n"
        "        need_copy.add(slot)\n"
        "        return\n"
        "    stored = buffer[output_nr]\n"
        "    if slot in need_copy:\n"
        "        stored = stored.copy()\n"
        "        need_copy.discard(slot)\n"
        "    stored += grad\n"
    )
    result = verdict("ch04.add_grad", source)
    assert not result.passed and result.case.endswith("slot 1"), str(result)
    assert result.hint.startswith("the slot still holds only the first gradient: the sum never reached it")


def test_a_gradient_summed_to_the_other_inputs_shape_is_told_so():
    source = (
        "class Mul(Function):\n"
        "    def forward(self, a, b):\n"
        "        self.save_for_backward(a, b)\n"
        "        return a * b\n"
        "    def backward(self, grad_output):\n"
        "        a, b = self.saved_tensors\n"
        "        return sum_to_shape(grad_output * b, b.shape), sum_to_shape(grad_output * a, a.shape)\n"
    )
    result = verdict("ch03.mul", source)
    assert not result.passed and result.case.endswith(": backward"), str(result)
    assert result.hint.startswith("a's gradient was summed to b's shape: sum each input's gradient to"), str(
        result
    )


def test_needs_input_grad_read_in_forward_is_told_it_is_set_after_forward():
    source = (
        "class MulAdd(Function):\n"
        "    def forward(self, a, b, c):\n"
        "        self.needs = list(self.needs_input_grad)\n"
        "        return a * b + c\n"
        "    def backward(self, grad_output):\n"
        "        return grad_output, grad_output, grad_output\n"
    )
    result = verdict("ch07.mul_add", source)
    assert not result.passed and result.case == "forward: your code raised an error", str(result)
    assert result.hint.startswith("self.needs_input_grad is None while forward runs"), str(result)


def test_a_softplus_failing_on_a_0d_input_is_given_a_cell_that_runs_that_case():
    source = (
        "class Softplus(Function):\n"
        "    def forward(self, a):\n"
        "        self.save_for_backward(a)\n"
        "        return np.maximum(a, 0) + np.log1p(np.exp(-np.abs(a)))\n"
        "    def backward(self, grad_output):\n"
        "        (a,) = self.saved_tensors\n"
        "        t = a / 2\n"
        "        np.tanh(t, out=t)\n"
        "        return grad_output * (t + 1) / 2\n"
    )
    result = verdict("ch07.softplus", source)
    assert not result.passed and result.case == "gradcheck on shape (): your code raised an error"
    assert "y = Softplus()(Variable(np.full((), 0.5))); y.backward(np.ones(y.shape))" in result.hint


def test_a_dependency_count_written_as_a_whole_float_counts_as_in_a_list():
    counts = 'predicted_counts = {{"Sum#5": 0, "Mul#4": 1, "Add#3": {}, "Mul#2": 2, "x": 2, "y": 1}}\n'
    order = 'predicted_order = ["Sum#5", "Mul#4", "Add#3", "Mul#2", "y", "x"]\n'
    for count in ("1", "1.0", "[1.0]"):
        assert verdict("ch04.dependencies", counts.format(count) + order).passed, count
    assert not verdict("ch04.dependencies", counts.format("1.5") + order).passed  # no count


def test_a_loop_that_appends_a_running_mean_is_told_to_append_each_steps_loss():
    """The losses are compared before the parameters, and the hint blamed the update, which was right."""
    source = _recorded("total / (k + 1)")
    result = verdict("ch08.training_loop", source)
    assert not result.passed and result.case.endswith("the losses, one per step"), str(result)
    assert result.hint.startswith("the parameters after the loop are right but the losses are not"), str(
        result
    )


def test_a_loop_on_volatile_data_is_told_the_kits_error_not_the_checks_own():
    """The check's watch on each step's graph took a weak reference to a volatile output's creator,
    None, and its TypeError was reported as the student's."""
    source = next(
        s for label, s in MORE_WRONG_ANSWERS["ch08.training_loop"] if label.startswith("X made volatile")
    )
    result = verdict("ch08.training_loop", source)
    assert not result.passed and result.got.startswith("BackwardError: backward: called on a volatile"), str(
        result
    )
