"""Rules of save and load, fit, History and data that a full mutation audit found no test pinning down.

The second half of tests/test_nn_train_mutants.py (see there): each test below fails on a mutant
of varfunc/nn/serialization.py, varfunc/train.py, varfunc/fit_checks.py or varfunc/data that the
rest of the suite let through: what nn.save takes and refuses, the progress bar's total and epoch,
History's seconds, repr and plot, the rows an epoch loss weighs a batch by, fit's default batch
size, the epoch an error names, the generators' defaults and shapes, a Generator as seed.
"""

import sys
import time
import types

import numpy as np
import pytest

import varfunc.data as data
import varfunc.nn as nn
import varfunc.optim as optim
from varfunc import DTypeError, VarfuncError, Variable
from varfunc.backend import device_of
from varfunc.grading.fake_gpu import fake_gpu
from varfunc.train import History, fit

# --- nn: save and load ---------------------------------------------------------------------------


def test_save_takes_a_state_dict_that_merely_has_a_key_named_state_and_variables(tmp_path):
    """Only a dict with both 'state' and 'param_groups' is an optimizer's; a model's entry named
    'state', or Variables as values, are saved as arrays and load back."""
    path = tmp_path / "model.npz"
    nn.save({"state": np.zeros(2)}, path)
    assert nn.load(path)["state"].tolist() == [0.0, 0.0]
    nn.save({"state": np.zeros(2), "v": Variable(np.arange(3.0))}, path)
    loaded = nn.load(path)
    assert list(loaded) == ["state", "v"] and loaded["v"].tolist() == [0.0, 1.0, 2.0]


def test_save_refuses_a_value_that_makes_no_array_and_writes_nothing(tmp_path):
    """A tensor that requires grad cannot become a NumPy array: a DTypeError names its key, even
    after a good entry, and no file is written."""
    torch = pytest.importorskip("torch")
    path = tmp_path / "model.npz"
    with pytest.raises(DTypeError, match="nn.save: 'w' is a Tensor that cannot become a NumPy array"):
        nn.save({"a": np.ones(2), "w": torch.ones(2, requires_grad=True)}, path)
    assert not path.exists()


def test_load_of_a_damaged_file_quotes_the_reading_error(tmp_path):
    """The error for a file that is no .npz names the reading error and its text."""
    path = tmp_path / "bad.npz"
    path.write_bytes(b"PK\x03\x04" + b"damaged" * 10)
    with pytest.raises(VarfuncError, match=r"\(BadZipFile: File is not a zip file\)"):
        nn.load(path)


# --- fit and History -----------------------------------------------------------------------------


def small_fit(**options):
    """fit a Linear(2, 1) on 8 rows, batches of 4 (two steps per epoch), without a progress bar."""
    X, y = np.random.default_rng(0).standard_normal((8, 2)), np.random.default_rng(1).standard_normal((8, 1))
    model = nn.Linear(2, 1, dtype=np.float64)
    options = {"batch_size": 4, "progress": False, **options}
    return fit(model, nn.mse_loss, optim.SGD(model.parameters(), lr=0.01), (X, y), **options)


class RecordingBar:
    """Stands in for tqdm.auto.tqdm: keeps its total, its updates and whether it was closed."""

    made = []

    def __init__(self, total=None, **_):
        self.total, self.updates, self.closed, self.postfix = total, 0, False, {}
        RecordingBar.made.append(self)

    def update(self, n):
        self.updates += n

    def set_postfix(self, refresh=True, **postfix):
        self.postfix = postfix

    def close(self):
        self.closed = True


def test_fits_progress_bar_counts_to_max_steps_and_is_closed(monkeypatch):
    """The bar's total is the steps fit will take (max_steps where that is fewer than epochs give);
    it counts each step, shows the epoch (from 1) and the last loss, and is closed when fit returns."""
    monkeypatch.setitem(sys.modules, "tqdm.auto", types.SimpleNamespace(tqdm=RecordingBar))
    RecordingBar.made.clear()
    small_fit(epochs=5, max_steps=3, progress=True)
    history = small_fit(epochs=2, progress=True)
    assert [(b.total, b.updates, b.closed) for b in RecordingBar.made] == [(3, 3, True), (4, 4, True)]
    assert RecordingBar.made[1].postfix == {"epoch": 2, "loss": f"{history.losses[-1]:.4g}"}


def test_fit_without_progress_prints_nothing_and_without_tqdm_trains_without_a_bar(monkeypatch, capsys):
    """progress=False makes no bar (nothing on stderr); progress=True without tqdm installed trains
    as well, with no bar."""
    small_fit(epochs=2)
    assert capsys.readouterr().err == ""
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import tqdm.auto raises ImportError
    assert small_fit(epochs=2, progress=True).steps == 4


def test_fit_cuts_arrays_into_batches_of_32_rows_by_default():
    """Without batch_size, fit cuts (X, y) into batches of 32 rows (the 2017 example's get_batch(32))."""
    X, sizes = np.zeros((70, 2)), []

    def loss(output, target):
        sizes.append(len(target))
        return nn.mse_loss(output, target)

    model = nn.Linear(2, 1, dtype=np.float64)
    history = fit(model, loss, optim.SGD(model.parameters(), lr=0.1), (X, X[:, :1]), progress=False)
    assert history.steps == 3 and sizes[-3:] == [32, 32, 6]


def test_history_seconds_start_at_zero_and_count_only_fits_time():
    """A new History has seconds = 0; after fit they are the wall time fit took, no more."""
    assert History().seconds == 0.0
    start = time.perf_counter()
    history = small_fit(epochs=1)
    assert 0 < history.seconds <= time.perf_counter() - start


def test_history_repr_shows_the_last_loss_and_metrics():
    """repr names the steps, epochs, last loss and the last value of each metric, val_ ones too."""
    history = History(
        losses=[0.9, 0.7, 0.5],
        epoch_losses=[0.7],
        metrics={"acc": [0.1, 0.3, 0.5]},
        val_metrics={"loss": [0.8, 0.7, 0.6]},
    )
    assert repr(history) == "History(steps=3, epochs=1, last loss=0.5, acc=0.5, val_loss=0.6)"
    assert repr(History()) == "History(steps=0, epochs=0, last loss=-)"


class Scale(nn.Module):
    """forward(x) = x * w for a 0-d w: a model of one number per sample, X of shape (N,)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(np.array(0.5))

    def forward(self, x):
        return x * self.w


class ScaledByAScalar(nn.Module):
    """forward((x, s)) = (x @ w) * s: a batch's input is a tuple whose second part is one number."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(np.ones((2, 1)))

    def forward(self, pair):
        x, s = pair
        return x.matmul(self.w) * s


def test_an_epoch_loss_weights_batches_by_the_rows_of_their_first_input():
    """With x a tuple of inputs, a batch's rows are its first input's; a 0-d input is one row."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((4, 2)), rng.standard_normal((4, 1))
    batches = [((Variable(X[:3]), Variable(np.float64(2.0))), Variable(y[:3]))]
    batches.append(((Variable(X[3:]), Variable(np.float64(2.0))), Variable(y[3:])))
    model = ScaledByAScalar()
    history = fit(model, nn.mse_loss, optim.SGD(model.parameters(), lr=0.0), batches, progress=False)
    assert history.epoch_losses[0] == pytest.approx((3 * history.losses[0] + history.losses[1]) / 4)

    scalar_batches = [(Variable(np.float64(v)), Variable(np.float64(2 * v))) for v in (1.0, 3.0)]
    model = Scale()
    history = fit(model, nn.mse_loss, optim.SGD(model.parameters(), lr=0.0), scalar_batches, progress=False)
    assert history.epoch_losses == [pytest.approx(sum(history.losses) / 2)]


def plotted(losses, **options):
    """The axes History(losses=losses).plot(**options) draws on (matplotlib's Agg backend)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    History(losses=list(losses)).plot(ax=ax, **options)
    plt.close("all")
    return ax


def test_history_plot_draws_the_running_mean_of_smooth_steps_and_labels_the_axes():
    """smooth=k adds the mean of each k consecutive losses (from step k on) and fades the raw curve;
    smooth 0 or 1 draws the raw curve alone, opaque; the axes are labelled and have a legend."""
    ax = plotted([4.0, 3.0, 2.0, 1.0, 1.0], smooth=2)
    raw, running = ax.get_lines()
    assert (raw.get_linewidth(), raw.get_alpha()) == (1, 0.5)
    np.testing.assert_allclose(running.get_ydata(), [3.5, 2.5, 1.5, 1.0])
    np.testing.assert_array_equal(running.get_xdata(), [2, 3, 4, 5])
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_legend() is not None) == ("step", "loss", True)
    for smooth in (0, 1):
        lines = plotted([4.0, 3.0, 2.0], smooth=smooth).get_lines()
        assert [(line.get_label(), line.get_alpha()) for line in lines] == [("loss per step", 1.0)]
    last = plotted([4.0, 3.0, 2.0], smooth=3).get_lines()[1]
    assert last.get_label() == "mean of 3 steps" and last.get_ydata() == pytest.approx([3.0])


@pytest.mark.parametrize(
    "losses, log, scale",
    [
        ([1000.0, 1.0], None, "log"),
        ([200.0, 0.5], None, "log"),
        ([100.0, 1.0], None, "linear"),
        ([201.0, 2.0], None, "log"),
        ([2.0, 1.0], None, "linear"),
        ([5.0, 0.0], None, "linear"),
        ([5.0, -1.0], None, "linear"),
        ([1000.0, 1.0], False, "linear"),
        ([2.0, 1.0], True, "log"),
    ],
)
def test_history_plot_uses_a_log_scale_for_positive_losses_spanning_over_100x(losses, log, scale):
    """With log=None the y axis is logarithmic when every loss is > 0 and the largest is more than
    100 times the smallest (a loss of 0 or below: linear, no division by it); log=True/False decide."""
    assert plotted(losses, log=log).get_yscale() == scale


class FirstPassOnly:
    """Batches that can be iterated again (no len()), but only the first pass gives any."""

    def __init__(self, batches):
        self.batches, self.passes = batches, 0

    def __iter__(self):  # a pass counts once it is read from, not when iter() is called
        return self._read()

    def _read(self):
        self.passes += 1
        yield from self.batches if self.passes == 1 else []


def test_an_iterable_that_runs_dry_is_reported_with_the_epoch_it_ran_dry_in():
    """The error names the epoch (counted from 1) whose pass gave no batch."""
    x, y = Variable(np.ones((2, 2))), Variable(np.ones((2, 1)))
    model = nn.Linear(2, 1, dtype=np.float64)
    sgd = optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match=r"fit: epoch 2: train_data \(FirstPassOnly\) gives no batches"):
        fit(model, nn.mse_loss, sgd, FirstPassOnly([(x, y)]), epochs=2, progress=False)


# --- fit_checks: what fit takes and what it reports ----------------------------------------------


def test_fit_takes_one_number_per_sample_as_arrays_or_as_list_batches():
    """X of shape (N,) is a valid pair with y (N,); batches given as [x, y] lists of 1-D Variables
    are batches (one step each), not read as two arrays."""
    X, y = np.arange(4.0), 2 * np.arange(4.0)
    model = Scale()
    sgd = optim.SGD(model.parameters(), lr=0.01)
    assert fit(model, nn.mse_loss, sgd, (X, y), batch_size=2, progress=False).steps == 2
    batches = [[Variable(X[:2]), Variable(y[:2])], [Variable(X[2:]), Variable(y[2:])]]
    history = fit(model, nn.mse_loss, sgd, batches, epochs=2, progress=False)
    assert history.steps == 4 and history.epoch_ends == [2, 4]


def test_fit_refuses_an_optimizer_without_step_or_without_zero_grad():
    """Both zero_grad() and step() are needed: an object with only one of them is a TypeError."""
    model = nn.Linear(2, 1)
    for only in ("zero_grad", "step"):
        half = types.SimpleNamespace(**{only: lambda: None})
        with pytest.raises(TypeError, match=r"optimizer must have zero_grad\(\) and step\(\)"):
            fit(model, nn.mse_loss, half, (np.zeros((2, 2)), np.zeros((2, 1))), progress=False)


def test_a_nan_loss_from_a_tuple_input_holding_nan_blames_the_inputs():
    """A batch whose input is a tuple with a nan in it: the error says the inputs hold inf or nan."""
    x = np.ones((2, 2))
    x[0, 0] = np.nan
    batches = [((Variable(x), Variable(np.float64(2.0))), Variable(np.ones((2, 1))))]
    model = ScaledByAScalar()
    with pytest.raises(FloatingPointError, match="this batch's inputs hold inf or nan"):
        fit(model, nn.mse_loss, optim.SGD(model.parameters(), lr=0.1), batches, progress=False)


# --- data: the generators and Minibatches --------------------------------------------------------


@pytest.mark.parametrize(
    "make, defaults",
    [
        (data.linear_regression, {"n_samples": 100, "n_features": 1, "noise": 0.1, "seed": 0}),
        (data.polynomial_regression, {"n_samples": 256, "degree": 4, "noise": 0.0, "seed": 0}),
        (data.two_spirals, {"n_per_class": 200, "turns": 1.5, "noise": 0.05, "seed": 0}),
        (data.moons, {"n_samples": 200, "noise": 0.1, "seed": 0}),
        (data.digits, {"n_samples": 1797, "noise": 0.15, "flip": 0.03, "seed": 0}),
        (lambda **kw: data.PolynomialTarget(**kw).batch(), {"degree": 4, "seed": 0}),
    ],
    ids=["linear_regression", "polynomial_regression", "two_spirals", "moons", "digits", "PolynomialTarget"],
)
def test_each_generator_is_seeded_and_sized_by_its_documented_defaults(make, defaults):
    """Called with no arguments, a generator gives what its documented defaults give (seed 0: the
    same data on every call, as the chapters' stated results need)."""
    for got, want in zip(make(), make(**defaults)):
        np.testing.assert_array_equal(got, want)


def test_linear_regression_draws_weights_and_bias_as_randn_times_5():
    """The true weight and bias are standard normal times 5 (the 2017 example's randn(...) * 5)."""
    weight = data.linear_regression(n_samples=1, n_features=5000).weight
    biases = [data.linear_regression(n_samples=1, seed=seed).bias[0] for seed in range(1000)]
    assert 4.8 < weight.std() < 5.2 and 4.6 < np.std(biases) < 5.4


def test_moons_are_two_full_half_circles_with_gaussian_noise_added():
    """Without noise: 100 points on the upper unit half circle and 100 on the lower one centred at
    (1, 0.5), each spanning its whole half; noise=0.1 moves the points off them by about 0.1."""
    X, y = data.moons(200, noise=0.0, dtype=np.float64)
    outer, inner = X[y == 0], X[y == 1]
    assert len(outer) == len(inner) == 100
    np.testing.assert_allclose(np.hypot(*outer.T), 1.0)
    np.testing.assert_allclose(np.hypot(inner[:, 0] - 1, inner[:, 1] - 0.5), 1.0)
    assert (inner[:, 0].min(), inner[:, 0].max()) == pytest.approx((0.0, 2.0))
    noisy, _ = data.moons(200, noise=0.1, dtype=np.float64)
    assert 0.08 < (noisy - X).std() < 0.12  # the same seed: the same base points, then noise


def test_two_spirals_arms_turn_by_2_pi_turns_per_unit_of_radius():
    """Without noise, a class-0 point at radius r lies at angle 2 pi * turns * r (mod 2 pi)."""
    X, y = data.two_spirals(100, turns=1.0, noise=0.0, dtype=np.float64)
    arm = X[y == 0]
    wrapped = np.angle(np.exp(1j * (np.arctan2(arm[:, 1], arm[:, 0]) - 2 * np.pi * np.hypot(*arm.T))))
    np.testing.assert_allclose(wrapped, 0.0, atol=1e-9)


def test_digits_strokes_offsets_and_flips():
    """Without noise or flips each glyph's strokes have one strength in [0.6, 1) and the glyph sits at
    every offset of the 8 x 8 image; flip=1 (allowed: at most 1) flips every pixel to 1 - value."""
    X, y = data.digits(400, noise=0.0, flip=0.0, seed=3, dtype=np.float64, flatten=False)
    strengths = X.max(axis=(1, 2))
    assert strengths.min() >= 0.6 and strengths.max() < 1.0
    assert all(len(np.unique(image[image > 0])) == 1 for image in X)
    zeros = X[y == 0] > 0  # the 0 glyph has pixels in its first row and first column
    assert set(zeros.any(axis=1).argmax(axis=1)) == {0, 1, 2, 3}
    assert set(zeros.any(axis=2).argmax(axis=1)) == {0, 1}
    flipped, labels = data.digits(400, noise=0.0, flip=1.0, seed=3, dtype=np.float64, flatten=False)
    np.testing.assert_allclose(flipped, 1 - X)
    np.testing.assert_array_equal(labels, y)


def test_minibatches_put_each_batch_on_the_device_asked_for():
    """On the simulated GPU, Minibatches(device='cuda') yields batches on the GPU, Variables or arrays."""
    with fake_gpu():
        batches = list(data.Minibatches(np.ones((4, 2)), np.zeros(4), batch_size=2, device="cuda"))
        assert [(x.device, y.device) for x, y in batches] == [("cuda:0", "cuda:0")] * 2
        (x,), _ = data.Minibatches(np.ones((4, 2)), batch_size=2, device="cuda", variables=False)
        assert device_of(x) == "cuda:0"


def orders(batches):
    """The rows of arange(n) in the order the batches hold them."""
    return [int(row) for (x,) in batches for row in np.asarray(x).reshape(-1)]


def test_minibatches_and_the_split_default_to_a_shuffle_seeded_0_and_a_quarter_for_test():
    """Minibatches and minibatches() shuffle with seed 0 unless told; train_test_split puts a
    quarter of the rows (seed 0) in the test part; a test_fraction of 1 is refused."""
    rows = np.arange(40.0)[:, None]
    seeded = orders(data.Minibatches(rows, shuffle=True, seed=0, variables=False))
    assert seeded != list(range(40))
    assert (
        orders(data.Minibatches(rows, variables=False))
        == orders(data.minibatches(rows, variables=False))
        == seeded
    )
    split = data.train_test_split(rows)
    assert [len(part) for part in split] == [30, 10]
    for got, want in zip(split, data.train_test_split(rows, test_fraction=0.25, seed=0)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match=r"test_fraction must be in \(0, 1\), got 1"):
        data.train_test_split(rows, test_fraction=1)


def test_a_generator_given_as_seed_is_drawn_from():
    """seed may be a np.random.Generator: Minibatches and train_test_split draw their orders from it."""
    n = 10
    rows = np.arange(float(n))[:, None]
    assert orders(
        data.Minibatches(rows, batch_size=n, seed=np.random.default_rng(7), variables=False)
    ) == list(np.random.default_rng(7).permutation(n))
    train, test = data.train_test_split(rows, seed=np.random.default_rng(7))
    order = np.random.default_rng(7).permutation(n)
    assert orders([(test,), (train,)]) == list(order)
