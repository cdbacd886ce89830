"""varfunc.nn: a small torch.nn of 2017 (Module, Linear, Sequential, activations, Dropout, losses),
with ModuleList and ModuleDict from later torch.nn.

Importing it loads only NumPy and the core; the training helper (varfunc.train) imports tqdm and
matplotlib only inside the functions that need them.
"""

from .containers import ModuleDict, ModuleList, Sequential
from .layers import (
    Dropout,
    Linear,
    ReLU,
    Sigmoid,
    Tanh,
    default_rng,
    dropout,
    linear,
    manual_seed,
)
from .loss_modules import CrossEntropyLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss
from .losses import (
    accuracy,
    classes_from_scores,
    cross_entropy,
    l1_loss,
    log_softmax,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from .module import Module, Parameter, load, save

__all__ = [
    "CrossEntropyLoss",
    "Dropout",
    "L1Loss",
    "Linear",
    "MSELoss",
    "Module",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "Parameter",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "SmoothL1Loss",
    "Tanh",
    "accuracy",
    "classes_from_scores",
    "cross_entropy",
    "default_rng",
    "dropout",
    "l1_loss",
    "linear",
    "load",
    "log_softmax",
    "manual_seed",
    "mse_loss",
    "nll_loss",
    "save",
    "smooth_l1_loss",
]
