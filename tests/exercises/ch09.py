"""Plausible wrong answers to chapter 09's exercises, each must fail its check; other right answers pass."""

WRONG_ANSWERS = {
    "ch09.grad_device": [
        (
            "the gradient stays on the GPU where the work ran",
            """
predicted = {
    "x.grad device": "cuda:0",
    "x_gpu.is_leaf": False,
    "fc.weight.grad device": "cuda:0",
    "grad device of the Variable w was copied from": "cuda:0",
}
""",
        ),
        (
            "a moved leaf is still a leaf",
            """
predicted = {
    "x.grad device": "cpu",
    "x_gpu.is_leaf": True,
    "fc.weight.grad device": "cuda:0",
    "grad device of the Variable w was copied from": "cpu",
}
""",
        ),
        (
            "the template with one value still ...",
            """
predicted = {
    "x.grad device": "cpu",
    "x_gpu.is_leaf": False,
    "fc.weight.grad device": ...,  # "cpu" or "cuda:0"
    "grad device of the Variable w was copied from": "cpu",
}
""",
        ),
        (
            "model.cuda() thought to record a transfer like x.cuda()",
            """
predicted = {
    "x.grad device": "cpu",
    "x_gpu.is_leaf": False,
    "fc.weight.grad device": "cpu",
    "grad device of the Variable w was copied from": "cpu",
}
""",
        ),
        (
            "is_leaf as the string 'False'",
            "predicted = {\n"
            "    \"x.grad device\": 'cpu',\n"
            "    \"x_gpu.is_leaf\": 'False',\n"
            "    \"fc.weight.grad device\": 'cuda:0',\n"
            "    \"grad device of the Variable w was copied from\": 'cpu',\n"
            "}\n",
        ),
        (
            "'gpu' for the device",
            "predicted = {\n"
            "    \"x.grad device\": 'cpu',\n"
            '    "x_gpu.is_leaf": False,\n'
            "    \"fc.weight.grad device\": 'gpu',\n"
            "    \"grad device of the Variable w was copied from\": 'cpu',\n"
            "}\n",
        ),
        (
            "w's source thought to get its grad on the GPU (w is the leaf)",
            "predicted = {\n"
            "    \"x.grad device\": 'cpu',\n"
            '    "x_gpu.is_leaf": False,\n'
            "    \"fc.weight.grad device\": 'cuda:0',\n"
            "    \"grad device of the Variable w was copied from\": 'cuda:0',\n"
            "}\n",
        ),
        (
            "x.grad thought to live on the GPU, the rest right",
            "predicted = {\n"
            "    \"x.grad device\": 'cuda:0',\n"
            '    "x_gpu.is_leaf": False,\n'
            "    \"fc.weight.grad device\": 'cuda:0',\n"
            "    \"grad device of the Variable w was copied from\": 'cpu',\n"
            "}\n",
        ),
        (
            "is_leaf as 0",
            "predicted = {\n"
            "    \"x.grad device\": 'cpu',\n"
            '    "x_gpu.is_leaf": 0,\n'
            "    \"fc.weight.grad device\": 'cuda:0',\n"
            "    \"grad device of the Variable w was copied from\": 'cpu',\n"
            "}\n",
        ),
        (
            "w's source thought to have no grad (None)",
            "predicted = {\n"
            "    \"x.grad device\": 'cpu',\n"
            '    "x_gpu.is_leaf": False,\n'
            "    \"fc.weight.grad device\": 'cuda:0',\n"
            '    "grad device of the Variable w was copied from": None,\n'
            "}\n",
        ),
    ],
    "ch09.one_hot": [
        (
            "copies the labels to the host with to_device, builds there, copies back",
            """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    cpu_labels = to_device(labels, "cpu")
    return xp.asarray(np.eye(num_classes, dtype=np.float32)[cpu_labels])
""",
        ),
        (
            "a loop that reads each label with int(): a number copied to the host per label",
            """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    out = xp.zeros((len(labels), num_classes), dtype=xp.float32)
    for i in range(len(labels)):
        out[i, int(labels[i])] = 1
    return out
""",
        ),
        (
            "the labels read with .item() one by one, the rows taken from xp.eye",
            """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    rows = [labels[i].item() for i in range(len(labels))]
    return xp.eye(num_classes, dtype=xp.float32)[rows]
""",
        ),
        (
            "each label compared with each class in an if (bool() reads a number back to the host)",
            """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    out = xp.zeros((len(labels), num_classes), dtype=xp.float32)
    for i in range(len(labels)):
        for c in range(num_classes):
            if labels[i] == c:
                out[i, c] = 1.0
    return out
""",
        ),
        (
            "np.zeros: always on the CPU",
            """
def one_hot(labels, num_classes):
    out = np.zeros((labels.shape[0], num_classes), dtype=np.float32)
    out[np.arange(labels.shape[0]), labels] = 1
    return out
""",
        ),
        (
            "xp.zeros without a dtype (float64)",
            """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    out = xp.zeros((labels.shape[0], num_classes))
    out[xp.arange(labels.shape[0]), labels] = 1
    return out
""",
        ),
        (
            "np.eye indexed by the labels",
            """
def one_hot(labels, num_classes):
    return np.eye(num_classes, dtype=np.float32)[labels]
""",
        ),
        (
            "classes counted from the labels instead of num_classes",
            """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    n_seen = int(labels.max()) + 1 if labels.size else 0
    out = xp.zeros((labels.shape[0], n_seen), dtype=xp.float32)
    out[xp.arange(labels.shape[0]), labels] = 1
    return out
""",
        ),
        (
            "compares the labels with np.arange (CuPy refuses a NumPy operand)",
            """
def one_hot(labels, num_classes):
    return (labels[:, None] == np.arange(num_classes)).astype(np.float32)
""",
        ),
        (
            "np.eye indexed by the labels, then moved with xp.asarray (CuPy refuses a GPU index)",
            """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    return xp.asarray(np.eye(num_classes, dtype=np.float32)[labels])
""",
        ),
        (
            "np.asarray(labels) first (CuPy refuses the implicit copy to the CPU)",
            """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    cpu_labels = np.asarray(labels)
    out = np.zeros((len(cpu_labels), num_classes), dtype=np.float32)
    out[np.arange(len(cpu_labels)), cpu_labels] = 1
    return xp.asarray(out)
""",
        ),
        (
            "np.zeros written at the GPU labels, then moved with xp.asarray",
            """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    out = np.zeros((labels.shape[0], num_classes), dtype=np.float32)
    out[np.arange(labels.shape[0]), labels] = 1
    return xp.asarray(out)
""",
        ),
        (
            "transposed: one column per label",
            """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    out = xp.zeros((num_classes, labels.shape[0]), dtype=xp.float32)
    out[labels, xp.arange(labels.shape[0])] = 1
    return out
""",
        ),
        (
            "labels minus one (classes counted from 1)",
            "def one_hot(labels, num_classes):\n"
            "    xp = get_array_module(labels)\n"
            "    out = xp.zeros((labels.shape[0], num_classes), dtype=xp.float32)\n"
            "    out[xp.arange(labels.shape[0]), labels - 1] = 1\n"
            "    return out\n",
        ),
        (
            "out[:, labels] = 1 (every row gets every label)",
            "def one_hot(labels, num_classes):\n"
            "    xp = get_array_module(labels)\n"
            "    out = xp.zeros((labels.shape[0], num_classes), dtype=xp.float32)\n"
            "    out[:, labels] = 1\n"
            "    return out\n",
        ),
        (
            "returns a list",
            "def one_hot(labels, num_classes):\n"
            "    xp = get_array_module(labels)\n"
            "    out = xp.zeros((labels.shape[0], num_classes), dtype=xp.float32)\n"
            "    out[xp.arange(labels.shape[0]), labels] = 1\n"
            "    return out.tolist()\n",
        ),
        (
            "returns a Variable",
            "def one_hot(labels, num_classes):\n"
            "    xp = get_array_module(labels)\n"
            "    out = xp.zeros((labels.shape[0], num_classes), dtype=xp.float32)\n"
            "    out[xp.arange(labels.shape[0]), labels] = 1\n"
            "    return Variable(out)\n",
        ),
        (
            "stacks one xp.eye row per label (fails for no labels)",
            "def one_hot(labels, num_classes):\n"
            "    xp = get_array_module(labels)\n"
            "    eye = xp.eye(num_classes, dtype=xp.float32)\n"
            "    return xp.stack([eye[l] for l in labels])\n",
        ),
        (
            "int8 result",
            "def one_hot(labels, num_classes):\n"
            "    xp = get_array_module(labels)\n"
            "    return (labels[:, None] == xp.arange(num_classes)).astype(xp.int8)\n",
        ),
        (
            "bool result (no astype)",
            "def one_hot(labels, num_classes):\n"
            "    xp = get_array_module(labels)\n"
            "    return labels[:, None] == xp.arange(num_classes)\n",
        ),
        (
            "num_classes + 1 columns",
            "def one_hot(labels, num_classes):\n"
            "    xp = get_array_module(labels)\n"
            "    return xp.eye(num_classes + 1, dtype=xp.float32)[labels]\n",
        ),
    ],
}

RIGHT_ANSWERS = {
    "ch09.one_hot": [
        (
            "builds with xp, then to_device(out, device_of(labels)) for good measure",
            """
from varfunc.backend import device_of


def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    out = xp.zeros((labels.shape[0], num_classes), dtype=xp.float32)
    out[xp.arange(labels.shape[0]), labels] = 1
    return to_device(out, device_of(labels))
""",
        ),
        (
            "compares the labels with xp.arange",
            """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    return (labels[:, None] == xp.arange(num_classes)).astype(xp.float32)
""",
        ),
        (
            "xp.eye indexed by the labels",
            """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    return xp.eye(num_classes, dtype=xp.float32)[labels]
""",
        ),
        (
            "xp.add.at scatter",
            "def one_hot(labels, num_classes):\n"
            "    xp = get_array_module(labels)\n"
            "    out = xp.zeros((len(labels), num_classes), dtype=xp.float32)\n"
            "    xp.add.at(out, (xp.arange(len(labels)), labels), 1)\n"
            "    return out\n",
        ),
        (
            "xp.where of the labels compared with xp.arange",
            "def one_hot(labels, num_classes):\n"
            "    xp = get_array_module(labels)\n"
            "    classes = xp.arange(num_classes).reshape(1, -1)\n"
            "    return xp.where(xp.expand_dims(labels, 1) == classes, 1.0, 0.0).astype('float32')\n",
        ),
        (
            "xp.take along axis 0 of xp.eye",
            "def one_hot(labels, num_classes):\n"
            "    xp = get_array_module(labels)\n"
            "    return xp.take(xp.eye(num_classes, dtype=xp.float32), labels, axis=0)\n",
        ),
    ],
    "ch09.grad_device": [
        (
            "the template kept, each value assigned by key",
            """
predicted = {
    "x.grad device": ...,
    "x_gpu.is_leaf": ...,
    "fc.weight.grad device": ...,
    "grad device of the Variable w was copied from": ...,
}
predicted["x.grad device"] = "cpu"
predicted["x_gpu.is_leaf"] = False
predicted["fc.weight.grad device"] = "cuda:0"
predicted["grad device of the Variable w was copied from"] = "cpu"
""",
        ),
        (
            "upper case device names, keys in another order",
            """
predicted = {
    "grad device of the Variable w was copied from": "CPU",
    "fc.weight.grad device": "CUDA:0",
    "x_gpu.is_leaf": False,
    "x.grad device": "CPU",
}
""",
        ),
        (
            "device 'cuda' without the index",
            "predicted = {\n"
            "    \"x.grad device\": 'cpu',\n"
            '    "x_gpu.is_leaf": False,\n'
            "    \"fc.weight.grad device\": 'cuda',\n"
            "    \"grad device of the Variable w was copied from\": 'cpu',\n"
            "}\n",
        ),
    ],
}
