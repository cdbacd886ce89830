"""Plausible wrong answers to chapter 06's exercises; each must fail its check."""

WRONG_ANSWERS = {
    "ch06.accumulate": [
        (
            "thinks a second backward overwrites .grad",
            "grad_after_one = [2.0, -4.0, 6.0]\ngrad_after_two = [2.0, -4.0, 6.0]\n"
            "grad_after_reset = [3.0, 3.0, 3.0]\n",
        ),
        (
            "thinks x.grad = None does not reset the sum",
            "grad_after_one = [2.0, -4.0, 6.0]\ngrad_after_two = [4.0, -8.0, 12.0]\n"
            "grad_after_reset = [7.0, -5.0, 15.0]\n",
        ),
        (
            "forgets the factor 2 of d(x^2)/dx",
            "grad_after_one = [1.0, -2.0, 3.0]\ngrad_after_two = [2.0, -4.0, 6.0]\n"
            "grad_after_reset = [3.0, 3.0, 3.0]\n",
        ),
    ],
    "ch06.clip_hook": [
        (
            "clips in place",
            "def make_clip_hook(limit, log):\n"
            "    def hook(grad):\n"
            "        log.append(float(np.abs(grad).max()))\n"
            "        np.clip(grad, -limit, limit, out=grad)\n"
            "        return grad\n"
            "    return hook\n",
        ),
        (
            "clips a copy but returns nothing",
            "def make_clip_hook(limit, log):\n"
            "    def hook(grad):\n"
            "        log.append(float(np.abs(grad).max()))\n"
            "        clipped = np.clip(grad, -limit, limit)\n"
            "    return hook\n",
        ),
        (
            "records after clipping",
            "def make_clip_hook(limit, log):\n"
            "    def hook(grad):\n"
            "        clipped = np.clip(grad, -limit, limit)\n"
            "        log.append(float(np.abs(clipped).max()))\n"
            "        return clipped\n"
            "    return hook\n",
        ),
        (
            "clips only from above",
            "def make_clip_hook(limit, log):\n"
            "    def hook(grad):\n"
            "        log.append(float(np.abs(grad).max()))\n"
            "        return np.minimum(grad, limit)\n"
            "    return hook\n",
        ),
    ],
    "ch06.inplace": [
        ("thinks writes through .data[...] are caught", 'predicted_raises = {"A", "D", "E", "F", "G"}\n'),
        ("misses tanh_ and .data assignment", 'predicted_raises = {"A", "D"}\n'),
        ("thinks a leaf may change in place", 'predicted_raises = {"D", "E", "G"}\n'),
        ("thinks every in-place op raises", 'predicted_raises = {"A", "C", "D", "E", "G"}\n'),
    ],
}
