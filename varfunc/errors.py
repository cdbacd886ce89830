"""The errors varfunc raises: each one names the operation, the shapes or devices involved, and the fix."""


class VarfuncError(RuntimeError):
    """Base class of the kit's own errors (a RuntimeError, as in v0.1.x).

    Misuse of a Python protocol (len() of a 0-d Variable, copy.copy) is a TypeError and a bad option
    value (an unknown engine order, clamp() with no bound) a ValueError, as in Python itself.
    """


class BackwardError(VarfuncError):
    """backward(), a hook, requires_grad or deepcopy was asked of a Variable that cannot have it."""


class ShapeError(VarfuncError, ValueError):
    """An operation got arrays, or a backward returned gradients, of the wrong shape."""


class DTypeError(VarfuncError, TypeError):
    """Data of a type the operation cannot use (integers asked to require grad, strings, ...)."""


class DeviceError(VarfuncError):
    """Arrays on different devices met in one operation, or a GPU was asked for where there is none."""


class InplaceError(VarfuncError):
    """An in-place change that would make a gradient wrong (a saved array changed, a leaf overwritten)."""


class GradcheckError(VarfuncError, AssertionError):
    """gradcheck found an analytical gradient that disagrees with the numerical one."""
