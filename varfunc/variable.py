"""Variable: an array, the gradient backward computes for it, and the Function that created it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .backend import as_array, check_flag, device_of, get_array_module
from .engine import ExecutionEngine
from .errors import BackwardError, DeviceError, DTypeError, InplaceError, ShapeError
from .functions import CpuTransfer, CudaTransfer
from .habits import TodaysHabits, refuse_todays_backward_keywords
from .leaf import Leaf, leaf_requires_grad
from .methods import VariableMethods
from .modern import ModernVariableNames
from .operators import VariableOperators
from .shape_methods import ShapeMethods


class Variable(VariableMethods, ShapeMethods, VariableOperators, ModernVariableNames, TodaysHabits):
    """Wraps an array and records how it was computed, so backward() can find its gradient.

    ``Variable(data, creator=None, volatile=False, requires_grad=None)``: v0.1.3's signature.
    ``requires_grad`` left at None means True for floating-point data (v0.1.3's default) and False
    for integer or boolean data, so targets and indices just work.
    """

    __slots__ = ("_data", "_grad", "_version", "_requires_grad", "creator", "volatile", "__weakref__")

    # One engine for every Variable, as in v0.1.3; backward(engine=...) can pass another.
    _execution_engine = ExecutionEngine()

    # NumPy defers to Variable's reflected operators: ndarray * Variable calls Variable.__rmul__.
    __array_ufunc__ = None

    def __init__(
        self, data: Any, creator: Any = None, volatile: bool = False, requires_grad: bool | None = None
    ) -> None:
        if creator is None:  # made by the user: check and convert (a Function's outputs are arrays)
            if isinstance(data, Variable):
                raise DTypeError("Variable(...) got a Variable; pass its .data, or use .clone()")
            check_flag("Variable", "volatile", volatile)
            data = as_array(data)
        elif creator is True or creator is False:  # Variable(x, True): requires_grad in creator's place
            raise DTypeError(
                f"Variable: the second argument is creator (v0.1.3's signature), got {creator}; "
                f"write Variable(data, requires_grad={creator})"
            )
        self._data = data
        self._grad = None
        self._version = [0]  # bumped by every in-place change; saved tensors remember it
        self._requires_grad = None  # set to False for outputs marked non-differentiable
        self.volatile = volatile
        if creator is None and not volatile:
            creator = Leaf(self, leaf_requires_grad(data, requires_grad))
        self.creator = creator

    # --- data and grad ---------------------------------------------------------------------------

    @property
    def data(self) -> Any:
        """The wrapped array (changes made through it are not tracked by the graph)."""
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        if value is not self._data:  # x.data -= lr * g hands back the same array: nothing to check
            value = self._checked_array("data", value)
            if value.dtype.kind not in "fc" and self.requires_grad:
                raise DTypeError(
                    f"data: got {value.dtype} data for a Variable that requires grad; its gradient "
                    f"would be truncated to integers: assign floating-point data (value.astype("
                    f"{self._data.dtype})), or make a Variable that does not require grad"
                )
            if self._grad is not None and self._grad.dtype != value.dtype:  # .grad keeps the data's dtype
                self._grad = self._grad.astype(value.dtype)
            self._data = value
        self._version[0] += 1  # x.data -= lr * g ends with this assignment: saved copies see it

    @property
    def grad(self) -> Any:
        """The accumulated gradient: zeros until a backward reaches this leaf (None if no grad needed)."""
        if self._grad is None and self.requires_grad:
            self._grad = get_array_module(self._data).zeros_like(self._data)
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is not None:
            value = self._checked_array("grad", value)
            if value.dtype != self._data.dtype:
                raise DTypeError(
                    f"grad: got {value.dtype} for a Variable of {self._data.dtype}; the gradient has "
                    f"the data's dtype: assign value.astype({self._data.dtype}) or None"
                )
            # backward adds into .grad in place, so it gets an array of its own when value is a
            # broadcast view (read-only in NumPy, writable in CuPy: a zero stride) or shares memory
            # with the data (w.grad = w.data: backward would change the weights)
            shares = get_array_module(value).may_share_memory(value, self._data)
            if shares or not getattr(value.flags, "writeable", True) or 0 in value.strides:
                value = value.copy()
        self._grad = value

    def _checked_array(self, name: str, value: Any) -> Any:
        """value for .data or .grad: an array of this Variable's shape, on its device."""
        if isinstance(value, Variable):
            raise DTypeError(f"{name}: got a Variable; assign its array ({name} = other.data)")
        value = as_array(value)
        if value.shape != self._data.shape:
            raise ShapeError(
                f"{name}: got shape {value.shape} for a Variable of shape {self._data.shape}; "
                f"assign an array of the Variable's shape (make a new Variable for another shape)"
            )
        if device_of(value) != self.device:
            raise DeviceError(
                f"{name}: got an array on {device_of(value)} for a Variable on {self.device}; "
                "move it with backend.to_device first"
            )
        return value

    def _move_arrays(self, data: Any, grad: Any) -> None:
        """Module.to's move of a parameter: its data and .grad for copies on another device (the
        .data and .grad setters refuse a device change: any other Variable would leave its graph)."""
        self._data, self._grad = data, grad
        self._version[0] += 1

    def _accumulate_grad(self, grad: Any) -> None:
        """Add grad into .grad; the first one becomes .grad (the engine hands over arrays it owns)."""
        on_host = type(grad) is np.ndarray and type(self._data) is np.ndarray  # the usual case: quick
        if not on_host and device_of(grad) != self.device:  # a kit op's backward lost the device
            raise DeviceError(
                f"backward: a gradient on {device_of(grad)} reached a leaf of shape {self.shape} on "
                f"{self.device}; the backward that made it must make it where its input lives, with "
                "get_array_module(grad_output) (chapter 09)"
            )
        if self._grad is None and getattr(grad, "shape", None) == self._data.shape:
            if type(grad) is type(self._data) and grad.dtype == self._data.dtype:
                self._grad = grad  # kept, not copied: a 784 x 512 float32 weight's is 1.6 MB
            else:  # a NumPy scalar or another dtype: converted, a new array anyway
                self._grad = get_array_module(self._data).array(grad, dtype=self._data.dtype)
            return
        if self._grad is None:
            self._grad = get_array_module(self._data).zeros_like(self._data)
        self._grad += grad

    @property
    def requires_grad(self) -> bool:
        """Whether backward computes a gradient for this Variable."""
        if self.volatile:
            return False
        if self._requires_grad is not None:
            return self._requires_grad
        return self.creator.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.creator is None:
            raise BackwardError("requires_grad: a volatile Variable never requires grad")
        if not isinstance(self.creator, Leaf):
            raise BackwardError(
                f"requires_grad can only be set on Variables you created (their creator is a Leaf); this "
                f"one was made by {self.creator!r} (its is_leaf, today's name, is True when it needs no "
                "grad). For a leaf with its values, use Variable(x.data.copy(), requires_grad=True)"
            )
        check_flag("Variable", "requires_grad", value)  # (None would mean "the default" to the constructor)
        self.creator.requires_grad = leaf_requires_grad(self._data, value)

    # --- shape and device ------------------------------------------------------------------------

    @property
    def shape(self) -> tuple:
        """The shape of the data."""
        return self._data.shape

    @property
    def dtype(self) -> Any:
        """The dtype of the data."""
        return self._data.dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._data.ndim

    @property
    def device(self) -> str:
        """'cpu' or 'cuda:N'."""
        return device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        """True when the data lives on a GPU."""
        return self.device != "cpu"

    def cuda(self, device: int | None = None) -> Variable:
        """This Variable on a GPU (the current one, or device N); gradients flow back across the move."""
        target = "cuda" if device is None else f"cuda:{device}"
        if self.is_cuda and (device is None or self.device == target):
            return self
        return CudaTransfer(target)(self)

    def cpu(self) -> Variable:
        """This Variable on the CPU; gradients flow back to the GPU it came from."""
        return self if not self.is_cuda else CpuTransfer()(self)

    # --- backward and hooks ----------------------------------------------------------------------

    def backward(
        self, gradient: Any = None, *, engine: Any = None, recorder: Any = None, **todays: Any
    ) -> None:
        """Compute the gradient of this Variable w.r.t. every leaf that requires grad, into .grad."""
        if todays:  # retain_graph=True, ...: today's keywords (habits.py says what to write here)
            refuse_todays_backward_keywords(todays)
        self._check_differentiable()
        gradient = self._seed(gradient)
        _check_engine_and_recorder(engine, recorder)
        (engine or self._execution_engine).run_backward(self, gradient, recorder)

    def _check_differentiable(self) -> None:
        """Raise v0.1.3's errors (and clearer ones) where no gradient can flow back from this Variable."""
        if self.volatile:
            raise BackwardError(
                "backward: called on a volatile Variable; volatile Variables record no graph "
                "(make the inputs with volatile=False to get gradients)"
            )
        if self._requires_grad is False and self.creator.requires_grad:
            why = (
                "integer or boolean data" if self._data.dtype.kind not in "fc" else "mark_non_differentiable"
            )
            raise BackwardError(
                f"backward: this output of {self.creator!r} is not differentiable ({why}: indices, "
                "masks), so no gradient flows from it; call backward on the values"
            )
        if not self.requires_grad:
            raise BackwardError(
                "backward: called on a Variable that doesn't require grad; no input of its graph "
                "requires grad (create a leaf with requires_grad=True), or the path passes through "
                "integer or boolean data, which has no gradient"
            )

    def _seed(self, gradient: Any) -> Any:
        """The gradient backward starts from: ones for a 1-element Variable, else the caller's, checked."""
        if gradient is None:
            if self._data.size != 1:
                raise BackwardError(
                    f"backward: should be called only on a scalar (1-element Variable) or with a "
                    f"gradient of the Variable's shape; this one has shape {self.shape}: "
                    f"pass backward(np.ones({self.shape}))"
                )
            return get_array_module(self._data).ones_like(self._data)
        gradient = as_array(gradient._data if isinstance(gradient, Variable) else gradient)
        if gradient.shape != self._data.shape:
            raise ShapeError(
                f"backward: the gradient has shape {gradient.shape} but the Variable has shape "
                f"{self._data.shape}; they must match"
            )
        if device_of(gradient) != self.device:
            raise DeviceError(
                f"backward: the gradient is on {device_of(gradient)} but the Variable is on "
                f"{self.device}; move the gradient with the same .cuda() / .cpu() first"
            )
        if gradient.dtype != self._data.dtype:  # as torch does: a bool or int seed would sum wrongly
            gradient = gradient.astype(self._data.dtype)
        return gradient

    def register_hook(self, name: str, hook: Callable | None = None) -> None:
        """Call hook(grad) with this Variable's gradient during backward; a returned array replaces it.

        Return a new array rather than changing grad in place: the engine may hand the same array on
        to other Functions.
        """
        if self.volatile:
            raise BackwardError("register_hook: cannot register a hook on a volatile Variable")
        if not self.requires_grad:
            raise BackwardError(
                "register_hook: this Variable doesn't require grad, so no gradient will reach the hook"
            )
        self.creator.register_hook(name, hook, self)

    def remove_hook(self, name: str) -> None:
        """Remove the hook registered under name."""
        if self.creator is None:
            raise BackwardError(f"remove_hook: a volatile Variable has no hooks (asked for {name!r})")
        self.creator.remove_hook(name, self)

    # --- used by Function ------------------------------------------------------------------------

    def _make_output(self, array: Any, creator: Any) -> Variable:
        """A new Variable for a Function's output (volatile when there is no creator)."""
        return Variable(array, creator, creator is None)  # positional: a keyword costs more per op

    def _constant(self, value: Any) -> Variable:
        """An array operand wrapped as a Variable that needs no grad, where _array_here puts it."""
        return Variable(self._array_here(value), requires_grad=False)

    def _check_inplace_target(self, op_name: str, inputs: tuple) -> None:
        """Raise before an in-place op writes into this Variable, if that would go wrong."""
        if isinstance(self.creator, Leaf) and self.creator.requires_grad:
            raise InplaceError(
                f"{op_name}: a leaf Variable that requires grad cannot be changed in place (its "
                "gradient would no longer match its data); update parameters through .data "
                "(w.data -= lr * w.grad) or use the out-of-place op"
            )
        if not getattr(self._data.flags, "writeable", True):
            raise InplaceError(f"{op_name}: the Variable's data is read-only; clone() it first")
        shapes = [getattr(v, "shape", ()) for v in inputs]
        try:
            result = _broadcast_shapes(shapes)
        except ValueError:
            result = None
        if result != self._data.shape:
            raise ShapeError(
                f"{op_name}: the result (shapes {shapes} broadcast) would not fit into the "
                f"Variable's shape {self._data.shape}; use the out-of-place op"
            )

    # --- printing and copying --------------------------------------------------------------------

    def __repr__(self) -> str:
        if self.volatile:
            flags = ", volatile"
        elif self.requires_grad:
            flags = ", requires_grad"
        else:
            flags = ""
        made_by = (
            "" if isinstance(self.creator, Leaf) or self.creator is None else f", creator={self.creator!r}"
        )
        return (
            f"Variable containing:\n{self._data}\n"
            f"[{self.dtype} of size {self.shape} on {self.device}{flags}{made_by}]"
        )

    def __copy__(self) -> Variable:
        raise TypeError(
            "copy.copy of a Variable is not supported: use x.clone() (a copy inside the graph) or "
            "copy.deepcopy(x) (a new leaf with copied data)"
        )

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(
            "a Variable cannot be pickled (its graph is not data); pickle its array, x.data, and "
            "wrap it again with Variable(...) after loading; for a model (its parameters are "
            "Variables): nn.save(model, path), then model.load_state_dict(nn.load(path))"
        )

    def __deepcopy__(self, memo: dict) -> Variable:
        if self.creator is None:  # volatile: a user-created Variable that records no graph
            copy = Variable(self._data.copy(), volatile=True)
            memo[id(self)] = copy
            return copy
        if not isinstance(self.creator, Leaf):
            raise BackwardError(
                "Only Variables created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment"
            )
        copy = type(self).__new__(type(self))
        Variable.__init__(copy, self._data.copy(), requires_grad=self.requires_grad)
        if self._grad is not None:
            copy._grad = self._grad.copy()
        memo[id(self)] = copy
        return copy


def _broadcast_shapes(shapes: list) -> tuple:
    return np.broadcast_shapes(*shapes)  # shapes only, no arrays: NumPy's rule holds for CuPy too


def _check_engine_and_recorder(engine: Any, recorder: Any) -> None:
    """Refuse an engine or a recorder that backward could not use (a class, or something else)."""
    if engine is not None and (isinstance(engine, type) or not hasattr(engine, "run_backward")):
        raise BackwardError(
            f"backward: engine must be an ExecutionEngine object, got {engine!r}; for the FIFO order "
            "pass engine=ExecutionEngine(order='fifo')"
        )
    if recorder is not None and (
        isinstance(recorder, type) or not callable(getattr(recorder, "record", None))
    ):
        raise BackwardError(
            f"backward: recorder must be an object with a record(kind, function, **details) method, "
            f"got {recorder!r}; pass recorder=EventLog() (chapter 04)"
        )
