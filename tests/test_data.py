"""varfunc.data: the seeded toy data sets and the minibatch iterator."""

import inspect
import re
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest

import varfunc.data as data
from varfunc import DeviceError, DTypeError, ShapeError, Variable
from varfunc.backend import gpu_status

GENERATORS = {
    "linear": lambda seed: data.linear_regression(50, 3, seed=seed)[:2],
    "polynomial": lambda seed: data.polynomial_regression(50, seed=seed)[:2],
    "spirals": lambda seed: data.two_spirals(50, seed=seed),
    "moons": lambda seed: data.moons(60, seed=seed),
    "digits": lambda seed: data.digits(100, seed=seed),
}


@pytest.mark.parametrize("name", GENERATORS)
def test_generators_are_seeded(name):
    make = GENERATORS[name]
    for a, b in zip(make(0), make(0)):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(make(0)[0], make(1)[0])
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    np.testing.assert_array_equal(make(rng_a)[0], make(rng_b)[0])  # a Generator works as seed too
    X, y = make(0)
    assert X.dtype == np.float32 and len(X) == len(y)


def test_linear_regression_recovers_its_weights():
    X, y, w, b = data.linear_regression(500, 3, noise=0.1, seed=0)
    assert X.shape == (500, 3) and y.shape == (500, 1) and w.shape == (3, 1) and b.shape == (1,)
    A = np.hstack([X, np.ones((500, 1))]).astype(np.float64)
    solution = np.linalg.lstsq(A, y.astype(np.float64), rcond=None)[0]
    np.testing.assert_allclose(solution[:3], w, atol=0.02)
    np.testing.assert_allclose(solution[3], b, atol=0.02)


def test_polynomial_regression_is_the_2017_example():
    X, y, w, b = data.polynomial_regression(64, degree=4, seed=0, dtype=np.float64)
    x = X[:, 0]
    np.testing.assert_allclose(X, np.stack([x, x**2, x**3, x**4], axis=1))
    np.testing.assert_allclose(y, X @ w + b)
    target = data.PolynomialTarget(seed=0)  # W_target = randn(4, 1) * 5, b_target = randn(1) * 5
    rng = np.random.default_rng(0)
    np.testing.assert_allclose(target.weight, rng.standard_normal((4, 1)) * 5)
    np.testing.assert_allclose(target.bias, rng.standard_normal(1) * 5)
    Xb, yb = target.batch(32)
    assert Xb.shape == (32, 4) and yb.shape == (32, 1) and Xb.dtype == np.float32
    assert not np.array_equal(target.batch(32)[0], Xb)  # each batch is fresh, as get_batch()
    noisy = data.polynomial_regression(64, seed=0, noise=0.5, dtype=np.float64)
    assert 0.2 < np.std(noisy.y - y) < 0.8
    assert data.make_features([1.0, 2.0], degree=3).tolist() == [[1, 1, 1], [2, 4, 8]]


def test_poly_desc():
    assert data.poly_desc(np.array([[1.5], [-2.0]]), np.array([0.25])) == "y = +1.50 x^1 -2.00 x^2 +0.25"
    assert repr(data.PolynomialTarget(seed=0)).startswith("PolynomialTarget(y = ")


def test_two_spirals_shape_and_classes():
    X, y = data.two_spirals(100, noise=0.0, seed=0)
    assert X.shape == (200, 2) and y.dtype == np.int64 and np.bincount(y).tolist() == [100, 100]
    radius = np.linalg.norm(X, axis=1)
    assert radius.max() <= 1.0 + 1e-6
    # The arms are point reflections of each other: class 1 holds the negated points of class 0.
    zero, one = X[y == 0], X[y == 1]
    np.testing.assert_allclose(np.sort(radius[y == 0]), np.sort(np.linalg.norm(one, axis=1)), atol=1e-6)
    assert np.abs(zero.mean(axis=0) + one.mean(axis=0)).max() < 1e-5


def test_moons_shape_and_classes():
    X, y = data.moons(101, noise=0.0, seed=0)
    assert X.shape == (101, 2) and np.bincount(y).tolist() == [50, 51]
    np.testing.assert_allclose(np.linalg.norm(X[y == 0], axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(X[y == 1] - [1.0, 0.5], axis=1), 1.0, atol=1e-6)


def test_digits_set():
    glyphs = data.digit_glyphs()
    assert glyphs.shape == (10, 7, 5) and len({g.tobytes() for g in glyphs}) == 10
    X, y = data.digits(seed=0)
    assert X.shape == (1797, 64) and set(np.unique(y)) == set(range(10))
    assert np.bincount(y).min() >= 179 and X.min() >= 0 and X.max() <= 1
    images, _ = data.digits(20, seed=0, flatten=False)
    assert images.shape == (20, 8, 8)
    clean, labels = data.digits(50, noise=0.0, flip=0.0, seed=0, dtype=np.float64)
    for image, label in zip(clean.reshape(-1, 8, 8), labels):  # each clean image is its glyph, shifted
        placements = []
        for dy in range(2):
            for dx in range(4):
                canvas = np.zeros((8, 8), bool)
                canvas[dy : dy + 7, dx : dx + 5] = glyphs[label] > 0
                placements.append(np.array_equal(canvas, image > 0))
        assert any(placements), label


def test_digits_are_learnable_but_not_trivial():
    """A nearest-centroid rule (no shift invariance) gets well under the MLP's ~95% (test_training)."""
    X, y = data.digits(seed=0)
    Xt, yt = data.digits(500, seed=1)
    centroids = np.stack([X[y == k].mean(axis=0) for k in range(10)])
    predicted = ((Xt[:, None, :] - centroids[None]) ** 2).sum(axis=-1).argmin(axis=1)
    assert 0.35 < (predicted == yt).mean() < 0.8  # measured 0.57


def test_minibatches_cover_every_row_once_per_epoch():
    X, y = np.arange(10.0).reshape(10, 1), np.arange(10)
    batches = data.Minibatches(X, y, batch_size=4, seed=0)
    assert len(batches) == 3 and batches.n_samples == 10
    first = [yb.data.tolist() for _, yb in batches]
    assert [len(b) for b in first] == [4, 4, 2]
    assert sorted(sum(first, [])) == list(range(10))
    second = [yb.data.tolist() for _, yb in batches]
    assert sorted(sum(second, [])) == list(range(10)) and second != first  # reshuffled each epoch
    again = [yb.data.tolist() for _, yb in data.Minibatches(X, y, batch_size=4, seed=0)]
    assert again == first  # seeded
    for xb, yb in batches:
        assert isinstance(xb, Variable) and not xb.requires_grad and not yb.requires_grad
        np.testing.assert_array_equal(xb.data[:, 0], yb.data)  # rows stay paired
    assert "batches=3" in repr(batches)


def test_minibatches_options():
    X = np.arange(10.0)
    ordered = [b.tolist() for (b,) in data.minibatches(X, batch_size=3, shuffle=False, variables=False)]
    assert ordered == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    dropped = data.Minibatches(X, batch_size=3, drop_last=True, variables=False)
    assert len(dropped) == 3 and all(len(b) == 3 for (b,) in dropped)
    assert len(list(data.Minibatches(Variable(X), batch_size=5))) == 2  # Variables are unwrapped


def test_minibatches_errors():
    with pytest.raises(ShapeError, match="array 1 has shape \\(9,\\) but array 0 has 10 rows"):
        data.Minibatches(np.ones((10, 2)), np.ones(9))
    with pytest.raises(ValueError, match="batch_size"):
        data.Minibatches(np.ones(4), batch_size=0)
    with pytest.raises(ValueError, match="batch_size must be a positive integer, got True"):
        data.Minibatches(np.ones(4), batch_size=True)  # fit refuses a bool too
    with pytest.raises(ValueError, match="at least one array"):
        data.Minibatches()


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: data.moons(-3), "moons: n_samples must be a positive integer, got -3"),
        (lambda: data.digits(0), "digits: n_samples must be a positive integer, got 0"),
        (lambda: data.two_spirals(-1), "two_spirals: n_per_class must be a positive integer, got -1"),
        (lambda: data.linear_regression(10, 2.5), "linear_regression: n_features must be a positive integer"),
        (lambda: data.polynomial_regression(True), "polynomial_regression: n_samples must be a positive"),
        (lambda: data.PolynomialTarget(degree=0), "PolynomialTarget: degree must be a positive integer"),
        (lambda: data.PolynomialTarget().batch(-1), r"PolynomialTarget.batch: batch_size must be a positive"),
    ],
)
def test_generators_name_themselves_when_a_count_is_wrong(make, words):
    with pytest.raises(ValueError, match=words):
        make()


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda: data.two_spirals(dtype=np.int64), DTypeError, "two_spirals: dtype must be a floating-point"),
        (lambda: data.digits(dtype=np.uint8), DTypeError, r"digits: dtype .* got uint8, which would cut"),
        (lambda: data.make_features(np.ones(3), degree=0), ValueError, "make_features: degree must be"),
        (lambda: data.make_features(np.ones((5, 2))), ShapeError, r"one number per sample, .* got \(5, 2\)"),
    ],
)
def test_generators_refuse_what_would_make_wrong_data(make, error, words):
    # all-zero spirals, 94 % zero digits, and 10 rows of features from a (5, 2) array, silently
    with pytest.raises(error, match=words):
        make()
    assert data.make_features(np.ones((5, 1)), degree=2).shape == (5, 2)


@pytest.mark.skipif(gpu_status()[0], reason="a GPU is available here")
def test_minibatches_to_cuda_without_gpu_raises():
    with pytest.raises(DeviceError, match="cannot move data to cuda"):
        data.Minibatches(np.ones((4, 2)), device="cuda")  # said when made, not at the first batch


@pytest.mark.parametrize(
    "make, error, words",
    [
        (
            lambda X: data.Minibatches(X, shuffle="False"),
            TypeError,
            "shuffle must be True or False, got 'False'",
        ),
        (
            lambda X: data.Minibatches(X, seed="a"),
            TypeError,
            "Minibatches: seed must be an int, None or a np",
        ),
        (lambda X: data.Minibatches(X, device="gpu"), DeviceError, "unknown device 'gpu'"),
        # Before: taken for the current GPU (and 'cuda:x' gave int()'s bare ValueError)
        (lambda X: data.Minibatches(X, device="cudax"), DeviceError, "unknown device 'cudax'"),
        (lambda X: data.Minibatches(X, device="cuda:-1"), DeviceError, "unknown device 'cuda:-1'"),
        (lambda X: data.Minibatches(X, device="cuda:x"), DeviceError, "unknown device 'cuda:x'"),
        (
            lambda X: data.train_test_split(X, 5),
            TypeError,
            r"argument 1 is the scalar 5, .* test_fraction=5\)",
        ),
        (
            lambda X: data.train_test_split(X, test_fraction="0.2"),
            TypeError,
            "test_fraction must be a number",
        ),
        (lambda X: data.train_test_split(X, seed=1.5), TypeError, "train_test_split: seed must be an int"),
    ],
)
def test_loader_settings_of_the_wrong_kind_are_named(make, error, words):
    with pytest.raises(error, match=words):
        make(np.ones((4, 2)))


def test_train_test_split():
    X, y = np.arange(20.0).reshape(10, 2), np.arange(10)
    X_train, X_test, y_train, y_test = data.train_test_split(X, y, test_fraction=0.3, seed=0)
    assert len(X_test) == 3 and len(X_train) == 7
    np.testing.assert_array_equal(X_train[:, 0] / 2, y_train)
    assert sorted(np.concatenate([y_train, y_test]).tolist()) == list(range(10))
    with pytest.raises(ValueError, match="test_fraction"):
        data.train_test_split(X, test_fraction=1.5)
    for fraction in (0.1, 0.9):  # rounds to 0 or to all 3 rows: each part still gets one
        train, test = data.train_test_split(np.arange(3), test_fraction=fraction)
        assert len(train) and len(test) and len(train) + len(test) == 3


def test_train_test_split_needs_arrays_of_one_length():
    X = np.zeros((10, 1))
    with pytest.raises(ShapeError, match=r"array 1 has shape \(12,\) but array 0 has 10 rows"):
        data.train_test_split(X, np.arange(12))
    with pytest.raises(ValueError, match="pass the arrays to split"):
        data.train_test_split()
    with pytest.raises(ValueError, match="at least 2 samples"):
        data.train_test_split(X[:1])


def test_the_docstrings_claims_hold():
    """The module names the generators' seed argument, and two_spirals states its smallest radius."""
    named = set(re.findall(r"``([a-z_]+)``", data.generators.__doc__))  # argument names, not ``Generator``
    makers = [data.linear_regression, data.polynomial_regression, data.two_spirals, data.moons, data.digits]
    for make in makers:
        assert named <= set(inspect.signature(make).parameters), make.__name__
    low = float(re.search(r"radius .*?([\d.]+) to 1", data.two_spirals.__doc__).group(1))
    radius = np.linalg.norm(data.two_spirals(2000, noise=0.0, seed=0)[0], axis=1)
    assert radius.min() == pytest.approx(low, abs=0.01)


def test_polynomial_target_f_returns_its_dtype():
    for dtype in (np.float32, np.float64):
        target = data.PolynomialTarget(seed=0, dtype=dtype)
        X = data.make_features(np.linspace(-1, 1, 5))
        assert target.f(X).dtype == dtype and target.batch(4)[1].dtype == dtype
        np.testing.assert_allclose(target.f(X), X @ target.weight + target.bias, rtol=1e-6)


def test_the_minibatches_docstring_example_runs_and_a_positional_batch_size_is_explained():
    X, y = np.ones((40, 2)), np.arange(40)
    example = re.search(r"``(for .*?)``", data.Minibatches.__doc__).group(1)
    exec(example + ": pass", {"Minibatches": data.Minibatches, "X": X, "y": y})
    hint = r"batch_size is a keyword argument: Minibatches\(X, y, batch_size=32\)"
    with pytest.raises(TypeError, match=hint):
        data.Minibatches(X, y, 32)


def test_train_test_split_unwraps_variables():
    X, y = np.arange(20.0).reshape(10, 2), np.arange(10)
    parts = data.train_test_split(Variable(X), y, seed=0)
    expected = data.train_test_split(X, y, seed=0)
    for part, reference in zip(parts, expected):
        assert type(part) is np.ndarray and part.dtype == reference.dtype
        np.testing.assert_array_equal(part, reference)


@pytest.mark.parametrize("n", [2, 3, 5, 7, 10, 25, 50, 90, 150])
@pytest.mark.parametrize("fraction", [0.1, 0.25, 0.29, 0.35, 0.5, 0.58, 0.7])
def test_train_test_split_rounds_half_up(n, fraction):
    """n * fraction rows for testing, half rounded up (5 * 0.5 -> 3, 7 * 0.5 -> 4), both parts non-empty."""
    exact = (Decimal(n) * Decimal(str(fraction))).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    train, test = data.train_test_split(np.arange(n), test_fraction=fraction)
    assert len(test) == min(n - 1, max(1, int(exact))) and len(train) + len(test) == n


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: data.moons(noise=float("nan")), r"moons: noise must be a finite number >= 0, got nan"),
        (
            lambda: data.linear_regression(noise=-0.1),
            r"linear_regression: noise must be a finite number >= 0",
        ),
        (lambda: data.two_spirals(turns="a"), r"two_spirals: turns must be a finite number >= 0, got 'a'"),
        (lambda: data.digits(flip=2), r"digits: flip is the fraction of pixels flipped, at most 1, got 2"),
        (lambda: data.polynomial_regression(noise=float("inf")), r"polynomial_regression: noise must be"),
    ],
)
def test_a_noise_or_a_fraction_out_of_range_is_refused(make, words):
    """Before: noise=nan gave data that was all nan, and flip=2 flipped every pixel."""
    with pytest.raises(ValueError, match=words):
        make()


def test_digits_flatten_is_true_or_false():
    with pytest.raises(TypeError, match="digits: flatten must be True or False, got 'no'"):
        data.digits(20, flatten="no")
    assert data.digits(20, flatten=False)[0].shape == (20, 8, 8)


def test_minibatches_of_none_says_what_it_needs():
    """Before: 'argument 0 is the scalar None ... batch_size is a keyword argument'."""
    with pytest.raises(TypeError, match=r"Minibatches: argument 0 is not an array of numbers \(got object\)"):
        data.Minibatches(None)


def test_train_test_split_takes_a_numpy_fraction():
    """Before: np.float32(0.25) was refused as 'not a number' while np.float64 was taken."""
    X, y = np.ones((8, 2)), np.arange(8)
    X_train, X_test, y_train, y_test = data.train_test_split(X, y, test_fraction=np.float32(0.25))
    assert len(X_test) == 2 and len(X_train) == 6
