"""Plausible wrong answers to chapter 08's exercises, each must fail its check; other right answers pass."""

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

MOMENTUM_KEYED_BY_SHAPE = (
    _MOMENTUM_HEAD.replace("self.buffers = [None] * len(self.params)", "self.bufs = {}")
    + """
    def step(self):
        for p in self.params:
            key = p.shape
            if key not in self.bufs:
                self.bufs[key] = p.grad.copy()
            else:
                self.bufs[key] = self.momentum * self.bufs[key] + p.grad
            p.data -= self.lr * self.bufs[key]
"""
)

# params kept as given: a generator (model.parameters()) is used up by the first pass over it
MOMENTUM_KEEPS_THE_GENERATOR = MOMENTUM_KEYED_BY_SHAPE.replace("list(params)", "params").replace(
    "key = p.shape", "key = id(p)"
)

# A MomentumSGD whose step keeps one buffer per parameter and moves the parameter by UPDATE.
MOMENTUM_UPDATING_BY = (
    _MOMENTUM_HEAD
    + """
    def step(self):
        for i, p in enumerate(self.params):
            g = p.grad
            if self.buffers[i] is None:
                self.buffers[i] = g.copy()
            else:
                self.buffers[i] = self.momentum * self.buffers[i] + g
            buf = self.buffers[i]
            p.data -= self.lr * UPDATE
"""
)

# The right step: each wrong answer below changes one thing in it
MOMENTUM_RIGHT = MOMENTUM_UPDATING_BY.replace("UPDATE", "buf")


def _momentum_on_the_class(*names: str) -> str:
    """MOMENTUM_RIGHT with these attributes set on the class in __init__, shared by every instance."""
    source = MOMENTUM_RIGHT
    for name in names:
        source = source.replace(f"self.{name} = ", f"type(self).{name} = ")
    return source


def _loop(*body: str) -> str:
    """A train_losses whose loop runs these lines, in this order, then appends the loss."""
    lines = "".join(f"        {line}\n" for line in body)
    return (
        "def train_losses(model, optimizer, X, y, steps):\n    x = Variable(X, requires_grad=False)\n"
        f"    losses = []\n    for _ in range(steps):\n{lines}"
        "        losses.append(loss.item())\n    return losses\n"
    )


WRONG_ANSWERS = {
    "ch08.momentum_sgd": [
        ("buffers keyed by the parameter's shape (same-shape parameters share one)", MOMENTUM_KEYED_BY_SHAPE),
        ("keeps params as given: a generator is used up", MOMENTUM_KEEPS_THE_GENERATOR),
        ("momentum defaults to 0, not 0.9", MOMENTUM_RIGHT.replace("momentum=0.9):", "momentum=0):")),
        (
            "p.data = p.data - lr * buf: a new array, not an update in place",
            MOMENTUM_RIGHT.replace("p.data -= self.lr * buf", "p.data = p.data - self.lr * buf"),
        ),
        (
            "the first buffer a float32 copy of the gradient",
            MOMENTUM_RIGHT.replace("self.buffers[i] = g.copy()", "self.buffers[i] = g.astype(np.float32)"),
        ),
        (
            "a class of its own around the kit's SGD",
            "from varfunc import optim\n\n"
            "class MomentumSGD:\n"
            "    def __init__(self, params, lr, momentum=0.9):\n"
            "        self.inner = optim.SGD(list(params), lr=lr, momentum=momentum)\n\n"
            "    def zero_grad(self):\n"
            "        self.inner.zero_grad()\n\n"
            "    def step(self):\n"
            "        self.inner.step()\n",
        ),
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
        ("updates by the gradient alone (plain SGD)", MOMENTUM_UPDATING_BY.replace("UPDATE", "g")),
        (
            "the buffer is never updated after the first step",
            MOMENTUM_RIGHT.replace("self.buffers[i] = self.momentum * self.buffers[i] + g", "pass"),
        ),
        (
            "params kept on the class: the last optimizer made steps them all",
            _momentum_on_the_class("params"),
        ),
        ("lr and momentum kept on the class", _momentum_on_the_class("lr", "momentum")),
        ("buffers kept on the class: optimizers share them", _momentum_on_the_class("buffers")),
        (
            "adds the buffer (moves up the gradient)",
            MOMENTUM_UPDATING_BY.replace("-= self.lr * UPDATE", "+= self.lr * buf"),
        ),
        ("Nesterov's update", MOMENTUM_UPDATING_BY.replace("UPDATE", "(g + self.momentum * buf)")),
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
            "zero_grad by p.grad *= 0: an inf or nan gradient stays nan (inf * 0), not zeros",
            MOMENTUM_RIGHT.replace("p.grad[...] = 0", "p.grad *= 0"),
        ),
        (
            "zero_grad forgets to zero (gradients pile up)",
            MOMENTUM_RIGHT.replace("for p in self.params:\n            p.grad[...] = 0", "pass"),
        ),
        (
            "skips a parameter whose gradient is all zero (momentum stops moving it)",
            MOMENTUM_RIGHT.replace(
                "g = p.grad\n", "g = p.grad\n            if not np.any(g):\n                continue\n"
            ),
        ),
    ],
    "ch08.training_loop": [
        (
            "X wrapped as Variable(X), which requires grad",
            _loop(
                "optimizer.zero_grad()",
                "loss = nn.cross_entropy(model(x), y)",
                "loss.backward()",
                "optimizer.step()",
            ).replace("Variable(X, requires_grad=False)", "Variable(X)"),
        ),
        (
            "the kit's fit() instead of a loop of its own",
            """
from varfunc.train import fit

def train_losses(model, optimizer, X, y, steps):
    if steps == 0:
        return []
    history = fit(model, nn.cross_entropy, optimizer, (X, y), epochs=steps, batch_size=len(X), progress=False)
    return [float(v) for v in history.losses]
""",
        ),
        (
            "the kit's fit() through its module",
            """
import varfunc.train

def train_losses(model, optimizer, X, y, steps):
    if steps == 0:
        return []
    fit = varfunc.train.fit
    history = fit(model, nn.cross_entropy, optimizer, (X, y), epochs=steps, batch_size=len(X), progress=False)
    return [float(v) for v in history.losses]
""",
        ),
        (
            "no zero_grad: gradients accumulate across steps",
            _loop("loss = nn.cross_entropy(model(x), y)", "loss.backward()", "optimizer.step()"),
        ),
        (
            "zero_grad at the end of each step: gradients left before the call reach step 1",
            _loop(
                "loss = nn.cross_entropy(model(x), y)",
                "loss.backward()",
                "optimizer.step()",
                "optimizer.zero_grad()",
            ),
        ),
        (
            "zero_grad between backward and step (nothing is learned)",
            _loop(
                "loss = nn.cross_entropy(model(x), y)",
                "loss.backward()",
                "optimizer.zero_grad()",
                "optimizer.step()",
            ),
        ),
        (
            "step before backward (each update uses the previous step's gradient)",
            _loop(
                "optimizer.step()",
                "optimizer.zero_grad()",
                "loss = nn.cross_entropy(model(x), y)",
                "loss.backward()",
            ),
        ),
        (
            "X rounded to float32 for a float64 model",
            _loop(
                "optimizer.zero_grad()",
                "loss = nn.cross_entropy(model(x), y)",
                "loss.backward()",
                "optimizer.step()",
            ).replace("Variable(X,", "Variable(X.astype(np.float32),"),
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

RIGHT_ANSWERS = {
    "ch08.momentum_sgd": [
        (
            "zero buffers made up front, updated in place: 0 * momentum + g = g on the first step",
            """
class MomentumSGD:
    def __init__(self, params, lr, momentum=0.9):
        self.params = list(params)
        self.lr, self.momentum = lr, momentum
        self.velocity = [np.zeros_like(p.data) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad.fill(0)

    def step(self):
        for p, v in zip(self.params, self.velocity):
            v *= self.momentum
            v += p.grad
            p.data -= self.lr * v
""",
        ),
        (
            "a dict of buffers keyed by the parameter, zero_grad sets .grad to None (as torch 2's)",
            """
class MomentumSGD:
    def __init__(self, params, lr, momentum=0.9):
        self.params = [p for p in params]
        self.lr = lr
        self.momentum = momentum
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        for p in self.params:
            if p not in self.state:
                self.state[p] = np.copy(p.grad)
            else:
                self.state[p] = self.momentum * self.state[p] + p.grad
            p.data -= self.lr * self.state[p]
""",
        ),
        (
            "a helper per parameter, buffers in a list filled on the first step",
            """
class MomentumSGD:
    def __init__(self, params, lr, momentum=0.9):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.bufs = None

    def zero_grad(self):
        for p in self.params:
            p.grad[...] = 0

    def _direction(self, i, grad):
        if self.momentum == 0:
            return grad
        self.bufs[i] = grad.copy() if self.bufs[i] is None else self.momentum * self.bufs[i] + grad
        return self.bufs[i]

    def step(self):
        if self.bufs is None:
            self.bufs = [None for _ in self.params]
        for i, p in enumerate(self.params):
            p.data -= self.lr * self._direction(i, p.grad)
""",
        ),
    ],
    "ch08.training_loop": [
        (
            "model.zero_grad(), the loss kept with float(loss) right after forward",
            """
def train_losses(model, optimizer, X, y, steps):
    inputs = Variable(X, requires_grad=False)
    history = []
    for step in range(steps):
        model.zero_grad()
        scores = model(inputs)
        loss = nn.cross_entropy(scores, y)
        history.append(float(loss))
        loss.backward()
        optimizer.step()
    return history
""",
        ),
        (
            "a helper for one step, in a list comprehension",
            """
def train_losses(model, optimizer, X, y, steps):
    x = Variable(X, requires_grad=False)

    def one_step():
        optimizer.zero_grad()
        loss = nn.cross_entropy(model(x), y)
        value = loss.item()
        loss.backward()
        optimizer.step()
        return value

    return [one_step() for _ in range(steps)]
""",
        ),
    ],
}
