"""Function and InplaceFunction: one differentiable operation and its place in the graph.

A Function's forward and backward work on plain arrays. ``__call__`` wraps them: ``_do_forward``
unpacks the input Variables, runs ``forward``, wraps the results as Variables whose ``creator`` is
this Function and records the graph (``previous_functions``, ``output_ids``, ``needs_input_grad``);
the engine later calls ``_do_backward`` with one gradient per output.

This module never imports variable.py (which imports the ops, which import this module): output
Variables are made by asking an input Variable for them (``_make_output``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .backend import as_array, check_same_device, device_of
from .dirty import DirtyInputs, is_one_of
from .errors import DTypeError, InplaceError, VarfuncError
from .gradient_checks import GradientChecks
from .guards import BACKWARD_FIX, call_on_read_only, read_only_views, refuse_value_equality
from .hooks import FunctionHooks
from .modern import ModernFunctionNames

_NUMPY_NUMBERS = (np.floating, np.integer, np.bool_)  # what an op on 0-d data returns


# One (needs_input_grad, input_shapes, input_dtypes) object per distinct value, shared by every
# Function that has it: a long graph then holds no tuples of these per op, so it takes less memory
# and the garbage collector has fewer objects to visit on each pass over it.
_SHARED: dict = {}
_SHARED_LIMIT = 4096  # then it starts again: a program whose shapes never repeat must not fill it


def _shared(records: tuple) -> tuple:
    if len(_SHARED) >= _SHARED_LIMIT:
        _SHARED.clear()
    return _SHARED.setdefault(records, records)


class Function(FunctionHooks, DirtyInputs, GradientChecks, ModernFunctionNames):
    """A differentiable operation: subclass it and write ``forward(*arrays)`` and ``backward(*grads)``."""

    # Graph fields, set by _do_forward. Class-level defaults keep a subclass that forgets
    # super().__init__() working, and keep instances small.
    previous_functions: tuple | None = None  # one (creator, id(input)) pair per input
    output_ids: dict | None = None  # {id(output Variable): output index}
    needs_input_grad: tuple | None = None  # one bool per input
    requires_grad: bool = False  # any(needs_input_grad)
    to_save: tuple | None = None  # what forward passed to save_for_backward, until it is saved
    dirty_tensors: tuple | None = None  # arrays forward changed in place (mark_dirty)
    non_differentiable: tuple | None = None  # outputs that never get a gradient
    _saved: tuple = ()  # (array, version counter, version when saved) per saved tensor
    input_shapes: tuple | None = None  # for checking the shapes backward returns
    input_dtypes: tuple | None = None  # for casting the gradients backward returns, as torch does
    input_devices: tuple | None = None  # where a student's backward must put its gradients (below)
    _held_inputs: tuple = ()  # (input index, version counter, version) of inputs kept as attributes
    # True where backward always returns arrays it has just computed, never one it holds or was
    # handed: the engine then lets a Leaf keep them as .grad without a copy (the matrix products).
    backward_makes_new_arrays: bool = False
    # True for a Function class written outside the kit (a student's): its forward must leave its
    # inputs as they were unless it marks them dirty (checked against copies), and its backward gets
    # read-only views of its gradients and saved tensors, which other Functions and Variables share,
    # and must return each gradient on its input's device. The kit's own ops skip these checks.
    outside_the_kit: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A promise about backward's arrays holds for the backward it was made for, not an override.
        if "backward" in cls.__dict__ and "backward_makes_new_arrays" not in cls.__dict__:
            cls.backward_makes_new_arrays = False
        cls.outside_the_kit = not cls.__module__.startswith("varfunc.")
        if any(isinstance(cls.__dict__.get(name), staticmethod) for name in ("forward", "backward")):
            raise TypeError(
                f"{cls.__name__}: forward and backward are @staticmethods with ctx, today's "
                "torch.autograd.Function style; a v0.1 Function's are methods on self: "
                "def forward(self, a): self.save_for_backward(a) ..., then MyFunction()(x) (chapter 07)"
            )

    def __call__(self, *input: Any) -> Any:
        """Run the op on Variables: forward on their arrays, then record the graph."""
        return self._do_forward(*input)

    def forward(self, *input: Any) -> Any:
        """Compute the outputs from the input arrays (override this)."""
        raise NotImplementedError(f"{type(self).__name__} has no forward(); define forward(self, *arrays)")

    def backward(self, *grad_output: Any) -> Any:
        """Return one gradient array per input, given one per output (override this)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no backward(); define backward(self, *grad_outputs)"
        )

    # --- helpers for forward -------------------------------------------------------------------

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep input or output arrays for backward; later in-place changes to them are caught."""
        self.to_save = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        """Declare that forward changed these input arrays in place."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Declare outputs that never get a gradient (indices, masks)."""
        self.non_differentiable = tensors

    @property
    def saved_tensors(self) -> tuple:
        """The arrays given to save_for_backward; an error if one was changed in place since.

        A Function written outside the kit gets read-only views: writing into one would change a
        Variable's data behind the graph's back.
        """
        tensors = []
        for index, record in enumerate(self._saved):
            if record is None:
                tensors.append(None)
                continue
            array, counter, version = record
            if counter[0] != version:
                raise InplaceError(
                    f"{self!r}: saved tensor {index} (shape {array.shape}) was modified by an "
                    f"in-place operation after forward saved it (version {version}, now "
                    f"{counter[0]}), so its gradient would be wrong; use the out-of-place op "
                    "(add instead of add_) or .clone() the Variable before changing it"
                )
            tensors.append(array)
        if self.outside_the_kit:  # a Function you wrote: these are its inputs' (or outputs') own data
            return read_only_views(*tensors)
        return tuple(tensors)

    # --- forward: run the op and record the graph ---------------------------------------------

    def _do_forward(self, *input: Any) -> Any:
        if self.output_ids is not None:
            raise VarfuncError(
                f"{self!r} was already called: a Function object is one node of one graph, so it "
                f"runs once; create a new one for each call ({type(self).__name__}()(...))"
            )
        arrays = self._unpack(input)
        copies = None
        if self.outside_the_kit:  # a Function you wrote: its inputs are compared with copies after forward
            refuse_value_equality(self)
            copies = self._copies_to_compare(arrays)
            self.input_devices = tuple(device_of(array) for array in arrays)
        try:
            result = self.forward(*arrays)
        except BaseException as error:  # Ctrl-C too: an in-place write it interrupted is counted
            self._forward_failed(input, arrays, copies, error)  # raises a clearer error where it has one
            raise
        raw_outputs = result if type(result) is tuple else (result,)
        try:
            if copies is not None:  # a Function you wrote: no unmarked input changed, none kept writable
                self._check_forward(input, arrays, raw_outputs, copies)
            dirty, marked = self.dirty_tensors, self.non_differentiable
            if dirty is not None or marked is not None or copies is not None:
                self._check_declared(input, raw_outputs, dirty)
        except VarfuncError as error:  # refused: a Function you wrote gets its inputs put back
            self._forward_failed(input, arrays, copies, error)
            raise
        # One plain loop over the inputs collects the graph fields: this runs for every op, and a
        # loop costs about half of what one generator expression per field would.
        volatile = False
        needs, previous, shapes, dtypes = [], [], [], []
        for v, array in zip(input, arrays):
            volatile = volatile or v.volatile
            needs.append(v.requires_grad)
            previous.append((v.creator, id(v)))
            shapes.append(array.shape)
            dtypes.append(array.dtype)
        if not volatile:
            # _shared: one shared tuple per distinct value, so a long graph takes less memory
            self.needs_input_grad, self.input_shapes, self.input_dtypes = _shared(
                (tuple(needs), tuple(shapes), tuple(dtypes))
            )
            self.requires_grad = any(needs)
            self.previous_functions = tuple(previous)  # v0.1.3 kept a list: docs/differences.md row 32
        try:
            outputs = self._wrap_outputs(input, arrays, raw_outputs, dirty, None if volatile else self)
        except VarfuncError as error:  # an output refused after forward changed an input: as above
            self._forward_failed(input, arrays, copies, error)
            raise
        if dirty is not None:  # accepted: the change stays, and saved copies of the input must see it
            self.dirty_tensors = None  # (reset only when set: a new attribute on every op costs time)
            self._count_in_place_change(input, dirty)
        if volatile:
            self.to_save = self.non_differentiable = None
        else:
            # {id(output Variable): output index}; most ops have one output, and a literal is cheaper
            if len(outputs) == 1:
                self.output_ids = {id(outputs[0]): 0}
            else:
                self.output_ids = {id(v): i for i, v in enumerate(outputs)}
            if marked is not None:
                self._mark_outputs_non_differentiable(outputs, raw_outputs)
            if self.to_save is not None:
                self._save(input, arrays, outputs, raw_outputs)
        return outputs[0] if len(outputs) == 1 else outputs

    def _forward_failed(self, input: tuple, arrays: tuple, copies: list | None, error: BaseException) -> None:
        """forward (or a check after it) failed: undo or count an in-place write, explain an overflow.

        What forward asked for (save_for_backward, mark_dirty, ...) is forgotten: the Function may
        be called again, and must not carry it over.
        """
        # NumPy refuses a number or a cast that does not fit, and modulo.py an integer division by
        # zero, before writing; NumPy's FloatingPointError (np.errstate(all="raise")) comes after it.
        before_writing = (OverflowError, TypeError, ZeroDivisionError)
        dirty = None if isinstance(error, before_writing) else self.dirty_tensors
        self._put_back_or_count(input, arrays, copies, dirty)
        self.to_save = self.dirty_tensors = self.non_differentiable = None
        if isinstance(error, OverflowError) and "out of bounds" in str(error):  # (not math.exp's overflow)
            dtypes = ", ".join(str(a.dtype) for a in arrays)  # "Python integer 300 out of bounds for uint8"
            raise DTypeError(
                f"{type(self).__name__}: {error} (input dtype{'s' if len(arrays) > 1 else ''} {dtypes}); "
                "a number must fit the Variable's dtype: convert the data first, e.g. "
                "Variable(x.data.astype(np.int64))"
            ) from None

    def _unpack(self, input: tuple) -> tuple:
        if not input:
            raise VarfuncError(
                f"{type(self).__name__} was called with no inputs; a Function computes its outputs from "
                "Variables (wrap a constant array as Variable(array, requires_grad=False))"
            )
        try:
            # One input (most ops) needs no comprehension, which costs a call of its own before Python 3.12
            arrays = (input[0]._data,) if len(input) == 1 else tuple([v._data for v in input])
        except AttributeError:
            kinds = ", ".join(f"input {i}: {type(v).__name__}" for i, v in enumerate(input))
            raise DTypeError(
                f"{type(self).__name__}: every input must be a Variable ({kinds}); "
                "wrap arrays with varfunc.Variable(array, requires_grad=False)"
            ) from None
        if len(arrays) > 1:
            check_same_device(type(self).__name__, arrays)
        return arrays

    def _wrap_outputs(self, input, arrays, raw_outputs, dirty, creator) -> tuple:
        outputs = []
        rebase = None  # positions of inputs forward changed in place (mark_dirty)
        first = None if len(raw_outputs) == 1 else _first_positions(raw_outputs)  # read from output 2 on
        for raw in raw_outputs:
            if isinstance(raw, _NUMPY_NUMBERS):
                array = np.asarray(raw)  # a number, from an op on 0-d data: made into a new 0-d array
            else:
                try:
                    array = raw if type(raw) is np.ndarray else _as_output_array(raw)
                except DTypeError:
                    raise self._not_an_array(raw) from None
                if dirty is not None and is_one_of(raw, dirty):
                    if rebase is None:
                        rebase = []
                    rebase.append(len(outputs))
                    outputs.append(raw)  # rebased below, once every output has passed its checks
                    continue
                # Every output owns its memory: a view, an input returned as is or an array returned
                # twice is copied, so an in-place change to one Variable can never change another. So
                # is every output of a Function you wrote: it may return an array it keeps (a cache).
                if (
                    array.base is not None
                    or is_one_of(array, arrays)
                    or (outputs and first[id(raw)] != len(outputs))  # returned before
                    or self.outside_the_kit
                ):
                    array = array.copy()
            kind = array.dtype.kind
            if kind not in "fbiu":  # (a complex output would get real gradients: its imaginary part lost)
                raise DTypeError(
                    f"{type(self).__name__}: forward gave an array of dtype {array.dtype}, which a Variable "
                    "cannot hold; give it real numbers (floats, integers or booleans): convert a constant "
                    "with float(c)"
                )
            output = input[0]._make_output(array, creator)
            if kind != "f":  # integers and booleans have no gradient, as in torch
                output._requires_grad = False
            outputs.append(output)
        if rebase:  # the graph changes only now: an error above left it as it was
            for position in rebase:
                outputs[position] = self._rebase_dirty_input(input, outputs[position], creator)
        return tuple(outputs)

    def _not_an_array(self, raw: Any) -> DTypeError:
        """The error for a forward that returned None, a Variable, a list: anything but arrays."""
        got = "a Variable (return its .data)" if hasattr(raw, "creator") else f"a {type(raw).__name__}"
        if isinstance(raw, (list, tuple)):
            got += ", which NumPy would stack into one array"
        return DTypeError(
            f"{type(self).__name__}.forward returned {got}; forward returns an array, or a tuple of "
            "arrays for several outputs, (a, b)"
        )

    def _mark_outputs_non_differentiable(self, outputs, raw_outputs) -> None:
        for variable, raw in zip(outputs, raw_outputs):
            if is_one_of(raw, self.non_differentiable):
                variable._requires_grad = False
        self.non_differentiable = None

    def _save(self, input, arrays, outputs, raw_outputs) -> None:
        records = []
        for position, tensor in enumerate(self.to_save):
            if tensor is None:  # save_for_backward(a, None): kept as None, no owner to find
                records.append(None)
                continue
            owner = None
            for variable, raw in zip(outputs, raw_outputs):  # outputs first: an in-place op saves its result
                if tensor is raw or tensor is variable._data:
                    owner = variable
                    break
            else:
                for variable, array in zip(input, arrays):
                    if tensor is array:
                        owner = variable
                        break
            if owner is None:
                raise self._not_input_or_output(position, tensor)
            records.append((owner._data, owner._version, owner._version[0]))
        self._saved = tuple(records)
        self.to_save = None

    # --- backward ------------------------------------------------------------------------------

    def _do_backward(self, *grad_output: Any) -> tuple:
        if self.backward_hooks:
            grad_output = self._run_variable_hooks(grad_output)
        if self.outside_the_kit:  # a Function you wrote gets read-only views: its gradients are shared
            self._check_held_inputs()
            views = read_only_views(*grad_output)
            grad_input = call_on_read_only(self.backward, views, "backward of", self, BACKWARD_FIX)
            devices = self.input_devices  # and must put each gradient where its input lives
        else:
            grad_input = self.backward(*grad_output)
            devices = None
        if type(grad_input) is not tuple:
            grad_input = (grad_input,)
        grad_input = self._checked_grad_input(grad_input, devices)
        if self.backward_hooks:
            grad_input = self._run_function_hooks(grad_input, grad_output)
        return grad_input

    def extra_repr(self) -> str:
        """The op's settings, shown inside its repr (e.g. the constant of MulConstant)."""
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.extra_repr()})"


def _as_output_array(raw: Any) -> Any:
    """An output of forward that is not an ndarray, as one; a list or a namedtuple is refused."""
    if isinstance(raw, (list, tuple)):
        raise DTypeError("a sequence, not an array")
    return as_array(raw)


class InplaceFunction(Function):
    """A Function that can write its result into its first input (``inplace=True``)."""

    inplace: bool = False  # a subclass that forgets super().__init__() runs out of place
    float_result: bool = False  # True where the result is a float whatever the input's dtype (exp)

    def __init__(self, inplace: bool = False) -> None:
        self.inplace = inplace

    def __call__(self, *input: Any) -> Any:
        """Run the op; in place, first check that the result may be written into the first input."""
        if not self.inplace:  # (here, not in _do_forward: one call less for every out-of-place op)
            return self._do_forward(*input)
        input[0]._check_inplace_target(type(self).__name__, input)
        if self.float_result and input[0].dtype.kind != "f":  # (NumPy's own refusal names no op for bool)
            raise DTypeError(
                f"{type(self).__name__}: the in-place result cannot be stored in the Variable's "
                f"{input[0].dtype} data (it is a float); use the out-of-place op, or convert the data "
                "first (for example .double())"
            )
        try:
            return self._do_forward(*input)
        except TypeError as error:
            if "cast" not in str(error):  # NumPy and CuPy refuse the write before changing anything
                raise
            raise DTypeError(
                f"{type(self).__name__}: the in-place result cannot be stored in the Variable's "
                f"{input[0].dtype} data ({error}); use the out-of-place op, or convert the data "
                "first (for example .double())"
            ) from None


def _first_positions(raw_outputs: tuple) -> dict:
    """{id(array): the first position forward returned it at}: one look-up per output finds an array
    returned twice, where scanning the earlier outputs made k outputs cost k * k."""
    first: dict = {}
    for position, raw in enumerate(raw_outputs):
        first.setdefault(id(raw), position)  # a later position of the same array is not kept
    return first
