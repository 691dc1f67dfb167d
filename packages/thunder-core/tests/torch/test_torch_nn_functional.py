import pytest
import torch
import torch.nn.functional as F
from torchlang_helpers import check, check_raises, f32, i64

TOL = dict(rtol=1e-5, atol=1e-5)


def idx(*shape, high):
    return torch.randint(0, high, shape)


CASES = {
    "relu": (lambda x: F.relu(x), f32(3, 4), "torch.relu"),
    "relu_nan": (lambda x: torch.relu(x), torch.tensor([float("nan"), -1.0, 2.0]), "torch.relu"),
    "relu_method_int": (lambda x: x.relu(), i64(5), "torch.relu"),
    "gelu": (lambda x: F.gelu(x), f32(3, 4), "torch.nn.functional.gelu"),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), f32(3, 4), "torch.nn.functional.gelu"),
    "silu": (lambda x: F.silu(x), f32(3, 4), "torch.nn.functional.silu"),
    "tanh": (lambda x: F.tanh(x), f32(3, 4), "torch.tanh"),
    "sigmoid": (lambda x: F.sigmoid(x), f32(3, 4), "torch.sigmoid"),
    "softmax": (lambda x: F.softmax(x, dim=-1), f32(3, 4), "torch.softmax"),
    "softmax_large": (lambda x: torch.softmax(x * 1000, 0), f32(3, 4), "torch.softmax"),
    "softmax_dtype": (lambda x: x.softmax(1, dtype=torch.float64), f32(3, 4), "torch.softmax"),
    "softmax_int_dtype": (lambda x: F.softmax(x, 0, dtype=torch.float32), i64(3, 4), "torch.softmax"),
    "softmax_neg_inf": (lambda x: torch.softmax(x.masked_fill(x > 0.5, float("-inf")), -1), f32(3, 4),
                        "torch.softmax"),
    "log_softmax": (lambda x: F.log_softmax(x, dim=1), f32(3, 4), "torch.log_softmax"),
    "log_softmax_method": (lambda x: x.log_softmax(-1), f32(2, 3, 4), "torch.log_softmax"),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b), f32(2, 3, 4), f32(4), f32(4),
                   "torch.nn.functional.layer_norm"),
    "layer_norm_2d_noaffine": (lambda x: F.layer_norm(x, [3, 4], eps=1e-3), f32(2, 3, 4),
                               "torch.nn.functional.layer_norm"),
    "rms_norm": (lambda x, w: F.rms_norm(x, (4,), w), f32(2, 3, 4), f32(4), "torch.nn.functional.rms_norm"),
    "rms_norm_eps": (lambda x: F.rms_norm(x, [3, 4], eps=1e-2), f32(2, 3, 4), "torch.nn.functional.rms_norm"),
    "embedding": (lambda i, w: F.embedding(i, w), idx(2, 3, high=10), f32(10, 4), "torch.nn.functional.embedding"),
    "embedding_padding": (lambda i, w: F.embedding(i, w, padding_idx=0), idx(5, high=10), f32(10, 4),
                          "torch.nn.functional.embedding"),
    "embedding_0d": (lambda i, w: F.embedding(i, w), torch.tensor(3), f32(10, 4), "torch.nn.functional.embedding"),
    "dropout_eval": (lambda x: F.dropout(x, 0.3, training=False) * 2, f32(3), "torch.mul"),
    "dropout_p0": (lambda x: F.dropout(x, 0.0) * 2, f32(3), "torch.mul"),
}


LOW_PRECISION = {
    "softmax": lambda x: torch.softmax(x, -1),
    "log_softmax": lambda x: F.log_softmax(x, -1),
    "gelu": lambda x: F.gelu(x),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": lambda x: F.silu(x),
    "layer_norm": lambda x: F.layer_norm(x, (8,), torch.ones_like(x[0]), torch.zeros_like(x[0])),
    "rms_norm": lambda x: F.rms_norm(x, (8,)),
    "sdpa": lambda x: F.scaled_dot_product_attention(x[None], x[None], x[None], is_causal=True),
    "cross_entropy": lambda x: F.cross_entropy(x, torch.zeros_like(x[:, 0], dtype=torch.long)),
}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("name", list(LOW_PRECISION))
def test_low_precision(name, dtype):
    check(LOW_PRECISION[name], f32(4, 8).to(dtype), tol=dict(rtol=2e-2, atol=2e-2))


@pytest.mark.parametrize("name", list(CASES))
def test_nn_functional(name):
    fn, *args, call = CASES[name]
    check(fn, *args, calls=(call,), tol=TOL)


def _sdpa(**kw):
    return lambda q, k, v, *m: F.scaled_dot_product_attention(q, k, v, *m, **kw)


SDPA = {
    "plain": (_sdpa(), f32(2, 3, 5, 4), f32(2, 3, 6, 4), f32(2, 3, 6, 4)),
    "causal": (_sdpa(is_causal=True), f32(2, 3, 5, 4), f32(2, 3, 5, 4), f32(2, 3, 5, 4)),
    "causal_rect": (_sdpa(is_causal=True), f32(1, 2, 3, 4), f32(1, 2, 5, 4), f32(1, 2, 5, 4)),
    "scale": (_sdpa(scale=0.3), f32(2, 5, 4), f32(2, 6, 4), f32(2, 6, 8)),
    "bool_mask": (_sdpa(), f32(2, 3, 5, 4), f32(2, 3, 6, 4), f32(2, 3, 6, 4),
                  (torch.rand(5, 6) > 0.2) | torch.eye(5, 6, dtype=torch.bool)),
    "float_mask": (_sdpa(), f32(2, 3, 5, 4), f32(2, 3, 6, 4), f32(2, 3, 6, 4), f32(2, 1, 5, 6)),
    "causal_and_mask": (_sdpa(is_causal=True), f32(1, 2, 4, 4), f32(1, 2, 4, 4), f32(1, 2, 4, 4), f32(4, 4)),
    "gqa": (_sdpa(enable_gqa=True, is_causal=True), f32(2, 6, 5, 4), f32(2, 2, 5, 4), f32(2, 2, 5, 4)),
}


@pytest.mark.parametrize("name", list(SDPA))
def test_scaled_dot_product_attention(name):
    fn, *args = SDPA[name]
    check(fn, *args, calls=("torch.nn.functional.scaled_dot_product_attention",), tol=TOL)


CROSS_ENTROPY = {
    "mean": (lambda x, t: F.cross_entropy(x, t), f32(5, 4), idx(5, high=4)),
    "sum": (lambda x, t: F.cross_entropy(x, t, reduction="sum"), f32(5, 4), idx(5, high=4)),
    "none": (lambda x, t: F.cross_entropy(x, t, reduction="none"), f32(5, 4), idx(5, high=4)),
    "ignore_index": (lambda x, t: F.cross_entropy(x, t.masked_fill(t == 1, -100)), f32(8, 4), idx(8, high=4)),
    "ignore_index_custom": (lambda x, t: F.cross_entropy(x, t, ignore_index=2, reduction="none"), f32(8, 4),
                            idx(8, high=4)),
    "weight": (lambda x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=0), f32(8, 4), idx(8, high=4),
               torch.rand(4)),
    "spatial": (lambda x, t: F.cross_entropy(x, t), f32(2, 4, 3, 3), idx(2, 3, 3, high=4)),
    "unbatched": (lambda x, t: F.cross_entropy(x, t), f32(4), torch.tensor(2)),
    "label_smoothing": (lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1), f32(6, 4), idx(6, high=4)),
    "label_smoothing_weight_sum": (lambda x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.2,
                                                                    reduction="sum", ignore_index=3),
                                   f32(6, 4), idx(6, high=4), torch.rand(4)),
    "label_smoothing_weight_mean": (lambda x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.2),
                                    f32(6, 4), idx(6, high=4), torch.rand(4)),
    "probabilities": (lambda x, t: F.cross_entropy(x, t.softmax(-1)), f32(5, 4), f32(5, 4)),
    "probabilities_smooth_none": (lambda x, t: F.cross_entropy(x, t.softmax(1), label_smoothing=0.1,
                                                               reduction="none"), f32(5, 4), f32(5, 4)),
}


@pytest.mark.parametrize("name", list(CROSS_ENTROPY))
def test_cross_entropy(name):
    fn, *args = CROSS_ENTROPY[name]
    check(fn, *args, calls=("torch.nn.functional.cross_entropy",), tol=TOL)


ERRORS = {
    "gelu_approx": (RuntimeError, lambda x: F.gelu(x, approximate="foo"), f32(3)),
    "gelu_int": (NotImplementedError, lambda x: F.gelu(x), i64(3)),
    "softmax_int": (NotImplementedError, lambda x: x.softmax(0), i64(3)),
    "relu_bool": (RuntimeError, lambda x: torch.relu(x), f32(3) > 0),
    "layer_norm_shape": (RuntimeError, lambda x: F.layer_norm(x, (4,)), f32(2, 3)),
    "embedding_float_idx": (RuntimeError, lambda i, w: F.embedding(i, w), f32(3), f32(4, 5)),
    "embedding_1d_weight": (RuntimeError, lambda i, w: F.embedding(i, w), idx(3, high=4), f32(4)),
    "dropout_p": (ValueError, lambda x: F.dropout(x, 1.5), f32(3)),
    "sdpa_dtypes": (RuntimeError, lambda q, k: F.scaled_dot_product_attention(q, k.double(), q), f32(1, 2, 3),
                    f32(1, 2, 3)),
    "cross_entropy_batch": (ValueError, lambda x, t: F.cross_entropy(x, t), f32(3, 4), idx(2, high=4)),
    "cross_entropy_reduction": (ValueError, lambda x, t: F.cross_entropy(x, t, reduction="foo"), f32(3, 4),
                                idx(3, high=4)),
    "cross_entropy_int32_target": (RuntimeError, lambda x, t: F.cross_entropy(x, t), f32(3, 4),
                                   idx(3, high=4).int()),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_nn_functional_error(name):
    exc, fn, *args = ERRORS[name]
    check_raises(exc, fn, *args)


def test_sdpa_dropout_is_the_random_symbol():
    from thunder.frontend.simple_trace import trace_program

    # it runs as PyTorch's own call, drawing eager's dropout mask (tests/torch/test_torch_model_idioms.py)
    trace = trace_program(lambda q: F.scaled_dot_product_attention(q, q, q, dropout_p=0.1), (f32(1, 2, 3),))
    assert "ltorch.scaled_dot_product_attention_dropout(" in str(trace)


def test_inplace_activations_are_a_clear_error():
    from thunder.frontend.simple_trace import trace_program

    for fn in (F.relu, F.silu):
        with pytest.raises(NotImplementedError, match="inplace"):
            trace_program(lambda x: fn(x, inplace=True), (f32(3),))
