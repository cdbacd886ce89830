"""What the nn tests share: a constant Variable and a small two-layer model with every kind of field."""

import numpy as np

import varfunc.nn as nn
from varfunc import Variable


def const(array):
    """array as a Variable that needs no gradient (data, targets)."""
    return Variable(np.asarray(array), requires_grad=False)


class TwoLayer(nn.Module):
    """Linear, Tanh, Linear and a Parameter of its own, plus an attribute that is not registered."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(4, 2)
        self.scale = nn.Parameter(np.ones(2))
        self.note = "not registered"

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale
