"""Random operations: torch.rand/randn/randint(_like), bernoulli, multinomial, normal, poisson, randperm, dropout.

Each is a symbol tagged ``random`` and ``side_effect``: common-subexpression elimination never merges two
of them, dead-code elimination never drops one (eager advances the generator even for an unused result),
and dispatch keeps their order. The torch executor runs each as the very same torch call, so with the same
seed a jitted program draws exactly the numbers eager draws and leaves the generator in the same state.
Their metas compute outputs by running the torch callable on the meta device (no random numbers drawn).

An explicit ``generator=`` from outside is outside state like the default generator: the call the program runs
draws from it, so its state advances on every call as eager's does; the prologue checks that it is the same
object (another generator is another entry). One made inside the jitted function is refused (frontend/hooks.py).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from thunder.core.errors import check
from thunder.core.proxies import pyval, torch_function_table
from thunder.core.pytree import tree_map
from thunder.core.shapes import normalize_shape_arg
from thunder.torch.opaque import meta_outputs
from thunder.torch.registry import torchsymbol

RANDOM_TAGS = ("random", "side_effect")


def _without_generator(kwargs) -> dict:
    """``kwargs`` for the meta run: a ``generator=`` is passed on to the call the program runs (an outside
    generator, checked by identity in the prologue, whose state the call advances as eager's does) but draws
    nothing while tracing. Its device must be the result's, as eager requires."""
    generator = kwargs.get("generator")
    if generator is None:
        return kwargs
    check(isinstance(generator, torch.Generator),
          lambda: f"generator must be a torch.Generator, not {type(generator).__name__}", TypeError)
    return {k: v for k, v in kwargs.items() if k != "generator"}


def _check_generator_device(kwargs, out) -> None:
    generator = kwargs.get("generator")
    if generator is not None:
        device = out.device.type
        check(generator.device.type == device, lambda: f"Expected a '{device}' device type for generator but found "
              f"'{generator.device.type}'")


def _random(name, torch_fn, *torch_fns, method=()):
    def meta(*args, **kwargs):
        out = meta_outputs(torch_fn, args, _without_generator(kwargs), what=f"torch.{name}")
        _check_generator_device(kwargs, out)
        return out

    meta.__name__ = name
    return torchsymbol(torch_fn, *torch_fns, method=method, tags=RANDOM_TAGS)(meta)


def _sized_random(name, torch_fn, size_of):
    """A random factory whose sizes may be symbolic (``torch.randn(x.shape[0])`` under symbolic values): the meta
    run validates the other arguments on the sizes' current values, and the output keeps the symbolic sizes,
    so the program serves every size (the torch executor passes them to the very same torch call)."""

    def meta(*args, **kwargs):
        out = meta_outputs(torch_fn, tree_map(pyval, args), tree_map(pyval, _without_generator(kwargs)),
                           what=f"torch.{name}")
        _check_generator_device(kwargs, out)
        out.shape = tuple(size_of(*args, **kwargs))
        return out

    meta.__name__ = name
    return torchsymbol(torch_fn, tags=RANDOM_TAGS)(meta)


def _randint_size(*args, size=None, **kwargs):
    return normalize_shape_arg((size if size is not None else args[-1],))


rand = _sized_random("rand", torch.rand, lambda *size, **kwargs: normalize_shape_arg(size or (kwargs["size"],)))
randn = _sized_random("randn", torch.randn, lambda *size, **kwargs: normalize_shape_arg(size or (kwargs["size"],)))
randint = _sized_random("randint", torch.randint, _randint_size)
randperm = _sized_random("randperm", torch.randperm, lambda n, **kwargs: (n,))
rand_like = _random("rand_like", torch.rand_like)
randn_like = _random("randn_like", torch.randn_like)
randint_like = _random("randint_like", torch.randint_like)
bernoulli = _random("bernoulli", torch.bernoulli, torch.Tensor.bernoulli, method="bernoulli")
multinomial = _random("multinomial", torch.multinomial, torch.Tensor.multinomial, method="multinomial")
normal = _random("normal", torch.normal)
poisson = _random("poisson", torch.poisson)


@torchsymbol(tags=RANDOM_TAGS)
def dropout(input, p=0.5, training=True, inplace=False):
    """Dropout in training mode with 0 < p; runs as ``torch.nn.functional.dropout`` itself."""
    return meta_outputs(F.dropout, (input, p, training), {}, what="torch.nn.functional.dropout")


def _dropout(input, p=0.5, training=True, inplace=False):
    check(0.0 <= p <= 1.0, lambda: f"dropout probability has to be between 0 and 1, but got {pyval(p)}", ValueError)
    check(not inplace, "dropout(inplace=True) is not supported by thunder; use the out-of-place form",
          NotImplementedError)
    if not training or pyval(p) == 0:
        return input
    return dropout(input, pyval(p), True)


torch_function_table[F.dropout] = _dropout
torch_function_table[torch.dropout] = lambda input, p, train: _dropout(input, p, train)


@torchsymbol(tags=RANDOM_TAGS)
def scaled_dot_product_attention_dropout(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                         scale=None, enable_gqa=False):
    """Attention with dropout on the attention weights; runs as ``F.scaled_dot_product_attention`` itself."""
    kwargs = dict(attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)
    return meta_outputs(F.scaled_dot_product_attention, (query, key, value), kwargs,
                        what="torch.nn.functional.scaled_dot_product_attention")


def _scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                  enable_gqa=False):
    from thunder.torch.nn_functional import scaled_dot_product_attention

    check(0.0 <= dropout_p <= 1.0, lambda: f"dropout probability has to be between 0 and 1, but got {pyval(dropout_p)}",
          ValueError)
    attention = scaled_dot_product_attention if dropout_p == 0.0 else scaled_dot_product_attention_dropout
    return attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale,
                     enable_gqa=enable_gqa)


torch_function_table[F.scaled_dot_product_attention] = _scaled_dot_product_attention


# Tensor.uniform_, normal_...: in-place fills with random numbers, which have no out-of-place twin
RANDOM_FILLS = ("uniform_", "normal_", "bernoulli_", "exponential_", "cauchy_", "geometric_", "log_normal_",
                "random_")


@torchsymbol(tags=RANDOM_TAGS)
def random_fill_like(a, method, *args, **kwargs):
    """A new tensor like ``a`` filled by the random in-place method ``method`` (``"uniform_"``); the torch
    executor runs that very method on a fresh tensor with ``a``'s strides, so with the same seed it draws what
    eager's ``a.uniform_()`` draws. The in-place forms are this followed by the update of ``a``."""
    check(method in RANDOM_FILLS, lambda: f"{method} is not a random fill", ValueError)
    meta_outputs(getattr(torch.Tensor, method), (a, *args), _without_generator(kwargs),
                 what=f"torch.Tensor.{method}")  # validates
    _check_generator_device(kwargs, a)
    return a.replace(requires_grad=False)
