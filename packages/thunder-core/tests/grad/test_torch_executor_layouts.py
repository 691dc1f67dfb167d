"""The torch executor's backward kernels given the strides programs give them.

Some ATen kernels read their inputs' memory as laid out one way and return garbage, without an error, for other
strides: the CPU flash attention reads each row of q, k and v contiguously (eager's backend choice takes its math
path otherwise), and the group norm kernels read the input and the incoming gradient in one memory format (eager's
``group_norm`` and its derivative formula make them so). A sum's gradient is expanded (stride 0), a transposed or
sliced input is strided; each case is checked against eager with such inputs and cotangents.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import thunder

LAYOUTS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.transpose(-1, -2).contiguous().transpose(-1, -2),
    "channels_last": lambda t: t.contiguous(memory_format=torch.channels_last),
    "every other column": lambda t: torch.cat([t, t], -1)[..., ::2],
    "expanded": lambda t: t[:1].expand(t.shape),
}

CASES = {
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), (2, 4, 3, 3), (4,), (4,)),
    "group_norm 3-d": (lambda x, w, b: F.group_norm(x, 2, w, b), (2, 4, 5), (4,), (4,)),
    "sdpa": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), (2, 2, 5, 8), (2, 2, 5, 8),
             (2, 2, 5, 8)),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b), (2, 3, 8), (8,), (8,)),
    "batch_norm": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (4, 3, 2, 2), (3,), (3,)),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1), (2, 3, 5, 5), (4, 3, 3, 3), (4,)),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), (2, 3, 6, 6)),
    "log_softmax": (lambda x: F.log_softmax(x, 1), (3, 8, 2)),
    "gelu": (lambda x: F.gelu(x, approximate="tanh"), (3, 8)),
}


def _grads(fn, base, position, layout, cotangent):
    leaves = [b.detach().clone().requires_grad_() for b in base]
    args = list(leaves)
    args[position] = LAYOUTS[layout](leaves[position])
    out = fn(*args)
    if cotangent == "of a sum":  # expanded: every element's gradient is one number
        out.sum().backward()
    else:
        g = torch.randn(out.shape, generator=torch.Generator().manual_seed(5))
        out.backward(g.transpose(-1, -2).contiguous().transpose(-1, -2))
    return out.detach(), [leaf.grad for leaf in leaves]


def _params():
    for name, (fn, *shapes) in CASES.items():
        for position, shape in enumerate(shapes):
            for layout in LAYOUTS:
                if (position and layout == "contiguous") or (layout == "channels_last" and len(shape) != 4) \
                        or (layout != "contiguous" and len(shape) < 2):
                    continue
                yield pytest.param(name, position, layout, id=f"{name}-arg{position}-{layout}")


@pytest.mark.parametrize("cotangent", ["of a sum", "transposed"])
@pytest.mark.parametrize("name, position, layout", list(_params()))
def test_backward_kernels_get_the_layouts_eager_gives_them(name, position, layout, cotangent):
    fn, *shapes = CASES[name]
    torch.manual_seed(0)
    base = [torch.randn(*s, dtype=torch.float64) for s in shapes]
    expected, expected_grads = _grads(fn, base, position, layout, cotangent)
    actual, grads = _grads(thunder.jit(fn), base, position, layout, cotangent)
    torch.testing.assert_close(actual, expected)
    for i, (g, e) in enumerate(zip(grads, expected_grads)):
        torch.testing.assert_close(g, e, msg=lambda m: f"gradient {i}: {m}")


def test_attention_on_strided_rows_takes_eager_math_path():
    # eager's CPU flash kernel takes rows of stride 1 only; for others eager runs its math path, which saves the
    # attention weights, not the output: the caller may update the output in place before the backward (fuzz
    # --kernels seed 601), and the gradients are the math path's
    def f(x):
        return F.scaled_dot_product_attention(x.mT, x.mT, x.mT, scale=0.5)

    jf = thunder.jit(f)
    x = torch.randn(1, 2, 4, 3, dtype=torch.float64)
    results = []
    for fn in (f, jf):
        leaf = x.clone().requires_grad_()
        out = fn(leaf)
        out.mul_(2)
        out.sum().backward()
        results.append((out.detach(), leaf.grad))
    torch.testing.assert_close(results[1], results[0])
    assert "flash" not in str(thunder.last_traces(jf)[-1])
    contiguous = thunder.jit(lambda x: F.scaled_dot_product_attention(x, x, x))
    contiguous(x.clone().requires_grad_())
    assert "flash_attention_for_cpu" in str(thunder.last_traces(contiguous)[-1])
