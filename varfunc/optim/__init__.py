"""varfunc.optim: SGD (momentum, Nesterov, weight decay) and Adam, with torch.optim's update rules."""

from .adam import Adam
from .optimizer import Optimizer, required
from .sgd import SGD

__all__ = ["SGD", "Adam", "Optimizer", "required"]
