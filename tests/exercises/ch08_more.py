"""More answers to chapter 08's exercises (tests/exercises/ch08.py is full): plausible wrong answers that
must fail their check, and other right answers that must pass (tests/test_exercise_ch08_more.py)."""

# A right MomentumSGD with its buffers in a dict keyed by the parameter: each answer below changes it
_MOMENTUM = """
class MomentumSGD:
    def __init__(self, params, lr, momentum=0.9):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad[...] = 0

    def step(self):
        for p in self.params:
            g = p.grad
            if p not in self.state:
                self.state[p] = g.copy()
            else:
                self.state[p] = self.momentum * self.state[p] + g
            p.data -= self.lr * self.state[p]
"""

_FIRST_AND_LATER = """            if p not in self.state:
                self.state[p] = g.copy()
            else:
                self.state[p] = self.momentum * self.state[p] + g
"""


def _momentum(*changes: tuple[str, str]) -> str:
    """_MOMENTUM with each (old, new) replaced; an old text that is not there is a mistake in this file."""
    source = _MOMENTUM
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new)
    return source


_STEPS = (
    "optimizer.zero_grad()",
    "loss = nn.cross_entropy(model(x), y)",
    "loss.backward()",
    "optimizer.step()",
)
_WRAP = "    x = Variable(X, requires_grad=False)\n"


def _loop(*body: str, head: str = _WRAP) -> str:
    """A train_losses that runs head, then these lines in its loop, then appends loss.item()."""
    lines = "".join(f"        {line}\n" for line in body)
    return (
        f"def train_losses(model, optimizer, X, y, steps):\n{head}"
        f"    losses = []\n    for _ in range(steps):\n{lines}"
        "        losses.append(loss.item())\n    return losses\n"
    )


def _recorded(record: str) -> str:
    """A right loop that appends record (built from loss.item(), total and k) instead of the loss."""
    return f"""
def train_losses(model, optimizer, X, y, steps):
    x = Variable(X, requires_grad=False)
    losses, total = [], 0.0
    for k in range(steps):
        optimizer.zero_grad()
        loss = nn.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
        losses.append({record})
    return losses
"""


MORE_WRONG_ANSWERS = {
    "ch08.momentum_sgd": [
        (
            "updates p, not p.data: p -= lr * buf",
            _momentum(("p.data -= self.lr", "p -= self.lr")),
        ),
        (
            "the first buffer is the .grad array (buf = g), later buffers new arrays",
            _momentum(("self.state[p] = g.copy()", "self.state[p] = g")),
        ),
        (
            "weight decay 1e-4 on by default",
            _momentum(
                ("momentum=0.9):", "momentum=0.9, weight_decay=1e-4):"),
                ("self.state = {}", "self.state = {}\n        self.weight_decay = weight_decay"),
                ("g = p.grad\n", "g = p.grad + self.weight_decay * p.data\n"),
            ),
        ),
        (
            "weight decay 5e-4 on by default, added to the update after the buffer",
            _momentum(
                ("momentum=0.9):", "momentum=0.9, weight_decay=5e-4):"),
                ("self.state = {}", "self.state = {}\n        self.wd = weight_decay"),
                (
                    "p.data -= self.lr * self.state[p]",
                    "p.data -= self.lr * (self.state[p] + self.wd * p.data)",
                ),
            ),
        ),
        (
            "lr applied twice: in the buffer and in the update",
            _momentum(
                ("self.state[p] = g.copy()", "self.state[p] = self.lr * g"),
                ("self.momentum * self.state[p] + g", "self.momentum * self.state[p] + self.lr * g"),
            ),
        ),
        (
            "the first step also applies the rule (buf = g, then buf = momentum * buf + g)",
            _momentum(("            else:\n", "            if True:\n")),
        ),
        (
            "the first buffer is momentum * g",
            _momentum(("self.state[p] = g.copy()", "self.state[p] = self.momentum * g")),
        ),
        (
            "an exponential average from zero buffers: buf = momentum * buf + (1 - momentum) * g",
            _momentum(
                ("self.state = {}", "self.state = {p: np.zeros_like(p.data) for p in self.params}"),
                (
                    _FIRST_AND_LATER,
                    "            self.state[p] = self.momentum * self.state[p] + (1 - self.momentum) * g\n",
                ),
            ),
        ),
        (
            "a zero gradient leaves the buffer as it was (elif g.any())",
            _momentum(("            else:\n", "            elif g.any():\n")),
        ),
        (
            "buffers taken by zip in step: the new buffer is never stored",
            _momentum(
                ("self.state = {}", "self.bufs = [None] * len(self.params)"),
                (
                    "for p in self.params:\n            g",
                    "for p, buf in zip(self.params, self.bufs):\n            g",
                ),
                (
                    _FIRST_AND_LATER,
                    "            buf = g.copy() if buf is None else self.momentum * buf + g\n",
                ),
                ("p.data -= self.lr * self.state[p]", "p.data -= self.lr * buf"),
            ),
        ),
        (
            "momentum written as 0.9 in step",
            _momentum(("self.momentum * self.state[p]", "0.9 * self.state[p]")),
        ),
        (
            "heavy ball written wrong: p -= lr * g + momentum * buf",
            _momentum(
                ("p.data -= self.lr * self.state[p]", "p.data -= self.lr * g + self.momentum * self.state[p]")
            ),
        ),
        (
            "zero_grad by p.grad -= p.grad (inf - inf is nan)",
            _momentum(("p.grad[...] = 0", "p.grad -= p.grad")),
        ),
        (
            "zero_grad to None, and p.data = p.data - lr * buf (a new array)",
            _momentum(
                ("p.grad[...] = 0", "p.grad = None"),
                ("p.data -= self.lr * self.state[p]", "p.data = p.data - self.lr * self.state[p]"),
            ),
        ),
    ],
    "ch08.training_loop": [
        (
            "shuffles X in place every step, not y",
            _loop("np.random.default_rng(0).shuffle(X)", "x = Variable(X, requires_grad=False)", *_STEPS),
        ),
        (
            "standardises X (a new array): the model trains on other data",
            _loop(*_STEPS, head="    X = (X - X.mean(axis=0)) / X.std(axis=0)\n" + _WRAP),
        ),
        (
            "minibatches of 8 rows",
            """
def train_losses(model, optimizer, X, y, steps):
    losses = []
    for s in range(steps):
        i = (s * 8) % len(X)
        x = Variable(X[i:i + 8], requires_grad=False)
        optimizer.zero_grad()
        loss = nn.cross_entropy(model(x), y[i:i + 8])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
        ),
        (
            "X made volatile (no graph to run backward on)",
            _loop(*_STEPS).replace("requires_grad=False", "volatile=True"),
        ),
        ("zero_grad on the first step only", _loop("if not losses: optimizer.zero_grad()", *_STEPS[1:])),
        (
            "updates by hand (p.data -= 0.5 * p.grad), not with optimizer.step()",
            _loop(*_STEPS[:3], "for p in model.parameters(): p.data -= 0.5 * p.grad"),
        ),
        (
            "the loss summed over the batch (reduction='sum')",
            _loop(_STEPS[0], "loss = nn.cross_entropy(model(x), y, reduction='sum')", *_STEPS[2:]),
        ),
        ("appends the running total of the losses", _recorded("total")),
        ("appends the running mean of the losses", _recorded("total / (k + 1)")),
        (
            "the loss read after the update (a volatile forward after step)",
            _loop(*_STEPS, "loss = nn.cross_entropy(model(Variable(X, volatile=True)), y)"),
        ),
        (
            "the previous step's loss appended (one loss short)",
            """
def train_losses(model, optimizer, X, y, steps):
    x = Variable(X, requires_grad=False)
    losses, loss = [], None
    for _ in range(steps):
        optimizer.zero_grad()
        if loss is not None:
            losses.append(loss.item())
        loss = nn.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return losses
""",
        ),
        ("optimizer.step() twice per step", _loop(*_STEPS, "optimizer.step()")),
    ],
}

MORE_RIGHT_ANSWERS = {
    "ch08.momentum_sgd": [
        ("buffers in a dict keyed by the parameter", _MOMENTUM),
        (
            "buffers keyed by id(p)",
            _momentum(
                ("self.state[p]", "self.state[id(p)]"), ("p not in self.state", "id(p) not in self.state")
            ),
        ),
        (
            "lr folded into the velocity: v = momentum * v + lr * g, p -= v (the same for a fixed lr)",
            _momentum(
                ("self.state[p] = g.copy()", "self.state[p] = self.lr * g"),
                ("self.momentum * self.state[p] + g", "self.momentum * self.state[p] + self.lr * g"),
                ("p.data -= self.lr * self.state[p]", "p.data -= self.state[p]"),
            ),
        ),
        (
            "dampening and weight_decay options, both 0 by default",
            _momentum(
                ("momentum=0.9):", "momentum=0.9, dampening=0.0, weight_decay=0.0):"),
                (
                    "self.state = {}",
                    "self.state = {}\n        self.dampening, self.weight_decay = dampening, weight_decay",
                ),
                (
                    "g = p.grad\n",
                    "g = p.grad + self.weight_decay * p.data if self.weight_decay else p.grad\n",
                ),
                (
                    "self.momentum * self.state[p] + g",
                    "self.momentum * self.state[p] + (1 - self.dampening) * g",
                ),
            ),
        ),
        (
            "skips a parameter that requires no grad (as optim.SGD does)",
            _momentum(
                (
                    "            g = p.grad\n",
                    "            if not p.requires_grad:\n                continue\n            g = p.grad\n",
                )
            ),
        ),
        (
            "ufuncs with out=: buffers and p.data changed in place, zero_grad by a new zeros_like",
            """
class MomentumSGD:
    def __init__(self, params, lr, momentum=0.9):
        self.params = tuple(params)
        self.lr = lr
        self.momentum = momentum
        self.velocity = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = np.zeros_like(p.data)

    def step(self):
        for p in self.params:
            v = self.velocity.get(id(p))
            if v is None:
                v = self.velocity[id(p)] = np.array(p.grad, copy=True)
            else:
                np.multiply(v, self.momentum, out=v)
                np.add(v, p.grad, out=v)
            np.subtract(p.data, self.lr * v, out=p.data)
""",
        ),
        (
            "a plain-SGD branch for momentum 0, p.data[...] = new values",
            """
class MomentumSGD:
    def __init__(self, params, lr, momentum=0.9):
        self.params = [p for p in params]
        self.lr, self.momentum = lr, momentum
        self.buf = [None for _ in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad.fill(0.0)

    def step(self):
        for k, p in enumerate(self.params):
            if self.momentum == 0:
                p.data[...] = p.data - self.lr * p.grad
                continue
            self.buf[k] = p.grad.copy() if self.buf[k] is None else self.buf[k] * self.momentum + p.grad
            p.data[...] = p.data - self.lr * self.buf[k]
""",
        ),
    ],
    "ch08.training_loop": [
        (
            "nll_loss of log_softmax",
            _loop(_STEPS[0], "loss = nn.nll_loss(nn.log_softmax(model(x)), y)", *_STEPS[2:]),
        ),
        (
            "y wrapped in a Variable",
            _loop(_STEPS[0], "loss = nn.cross_entropy(model(x), Variable(y))", *_STEPS[2:]),
        ),
        (
            "a while loop over a copy of X, float(loss.data) read before backward",
            """
def train_losses(model, optimizer, X, y, steps):
    inputs = Variable(np.asarray(X).copy(), requires_grad=False)
    out = []
    while len(out) < steps:
        model.zero_grad()
        loss = nn.cross_entropy(model(inputs), y)
        out.append(float(loss.data))
        loss.backward()
        optimizer.step()
    return out
""",
        ),
        (
            "model.train() first, loss.data.item()",
            _loop(*_STEPS, head="    model.train()\n" + _WRAP).replace("loss.item()", "loss.data.item()"),
        ),
        (
            "zero_grad once before the loop and after every step",
            _loop(*_STEPS[1:], "optimizer.zero_grad()", head="    optimizer.zero_grad()\n" + _WRAP),
        ),
        (
            "every .grad set to None before the loop, model.zero_grad() after each step",
            _loop(
                *_STEPS[1:],
                "model.zero_grad()",
                head="    for p in model.parameters():\n        p.grad = None\n" + _WRAP,
            ),
        ),
    ],
}
