"""Plausible wrong answers to chapter 08's exercises (each must fail its check)."""

_MOMENTUM_HEAD = """
class MomentumSGD:
    def __init__(self, params, lr, momentum=0.9):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.buffers = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad[...] = 0
"""

WRONG_ANSWERS = {
    "ch08.momentum_sgd": [
        (
            "returns the kit's own SGD",
            "from varfunc.optim import SGD\n\n"
            "def MomentumSGD(params, lr, momentum):\n"
            "    return SGD(list(params), lr=lr, momentum=momentum)\n",
        ),
        (
            "the first buffer is the .grad array itself (zero_grad wipes it)",
            _MOMENTUM_HEAD
            + """
    def step(self):
        for i, p in enumerate(self.params):
            if self.buffers[i] is None:
                self.buffers[i] = p.grad
            else:
                self.buffers[i] *= self.momentum
                self.buffers[i] += p.grad
            p.data -= self.lr * self.buffers[i]
""",
        ),
        (
            "dampened average: buf = momentum * buf + (1 - momentum) * g",
            _MOMENTUM_HEAD
            + """
    def step(self):
        for i, p in enumerate(self.params):
            if self.buffers[i] is None:
                self.buffers[i] = p.grad.copy()
            else:
                self.buffers[i] = self.momentum * self.buffers[i] + (1 - self.momentum) * p.grad
            p.data -= self.lr * self.buffers[i]
""",
        ),
        (
            "update with the old buffer, then update the buffer",
            _MOMENTUM_HEAD
            + """
    def step(self):
        for i, p in enumerate(self.params):
            if self.buffers[i] is None:
                self.buffers[i] = p.grad.copy()
                p.data -= self.lr * self.buffers[i]
            else:
                p.data -= self.lr * self.buffers[i]
                self.buffers[i] = self.momentum * self.buffers[i] + p.grad
""",
        ),
        (
            "one buffer shared by all parameters",
            """
class MomentumSGD:
    def __init__(self, params, lr, momentum=0.9):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.buf = 0.0

    def zero_grad(self):
        for p in self.params:
            p.grad[...] = 0

    def step(self):
        for p in self.params:
            self.buf = self.momentum * self.buf + p.grad
            p.data -= self.lr * self.buf
""",
        ),
        (
            "zero_grad forgets to zero (gradients pile up)",
            """
class MomentumSGD:
    def __init__(self, params, lr, momentum=0.9):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.buffers = [None] * len(self.params)

    def zero_grad(self):
        pass

    def step(self):
        for i, p in enumerate(self.params):
            if self.buffers[i] is None:
                self.buffers[i] = p.grad.copy()
            else:
                self.buffers[i] = self.momentum * self.buffers[i] + p.grad
            p.data -= self.lr * self.buffers[i]
""",
        ),
    ],
    "ch08.training_loop": [
        (
            "no zero_grad: gradients accumulate across steps",
            """
def train_losses(model, optimizer, X, y, steps):
    x = Variable(X, requires_grad=False)
    losses = []
    for _ in range(steps):
        loss = nn.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
        ),
        (
            "zero_grad between backward and step (nothing is learned)",
            """
def train_losses(model, optimizer, X, y, steps):
    x = Variable(X, requires_grad=False)
    losses = []
    for _ in range(steps):
        loss = nn.cross_entropy(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
        ),
        (
            "step before backward (each update uses the previous step's gradient)",
            """
def train_losses(model, optimizer, X, y, steps):
    x = Variable(X, requires_grad=False)
    losses = []
    for _ in range(steps):
        optimizer.step()
        optimizer.zero_grad()
        loss = nn.cross_entropy(model(x), y)
        loss.backward()
        losses.append(loss.item())
    return losses
""",
        ),
        (
            "returns the loss Variables instead of floats",
            """
def train_losses(model, optimizer, X, y, steps):
    x = Variable(X, requires_grad=False)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses
""",
        ),
    ],
}
