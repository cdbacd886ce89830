"""More plausible wrong answers to chapter 08's exercises (ch08.py merges them into its WRONG_ANSWERS)."""

MORE_WRONG_ANSWERS = {
    "ch08.momentum_sgd": [
        (
            "skips a parameter whose gradient is all zero (momentum stops moving it)",
            """
class MomentumSGD:
    def __init__(self, params, lr, momentum=0.9):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.buffers = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad[...] = 0

    def step(self):
        for i, p in enumerate(self.params):
            g = p.grad
            if not np.any(g):
                continue  # nothing to learn here, or so it seems
            if self.buffers[i] is None:
                self.buffers[i] = g.copy()
            else:
                self.buffers[i] = self.momentum * self.buffers[i] + g
            p.data -= self.lr * self.buffers[i]
""",
        ),
    ],
    "ch08.training_loop": [
        (
            "X wrapped as Variable(X), which requires grad",
            """
def train_losses(model, optimizer, X, y, steps):
    x = Variable(X)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
        ),
    ],
}
