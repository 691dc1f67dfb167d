"""Invalid calls raise eager's exception, type and message, from the metas at trace time (fuzzer kind W9)."""

import itertools
import warnings

import pytest
import torch

import thunder

F = torch.nn.functional


def r(*shape):
    return torch.randn(shape)


# name -> (inputs, function); each call is invalid in eager
CASES = {
    # activations of integer tensors name eager's CPU kernel and dtype (fuzz seed 220425)
    "silu_of_long": ((torch.ones(2, dtype=torch.int64),), torch.nn.functional.silu),
    # amax/amin name the empty reduction dim as the program wrote it, max/argmax canonical (fuzz seed 337264)
    "amax_of_an_empty_last_dim": ((r(2, 0),), lambda a: a.amax(-1)),
    "amin_of_empty_dims_as_a_list": ((r(0, 2),), lambda a: a.amin([-2])),
    "amax_of_an_empty_tensor_over_every_dim": ((r(0),), lambda a: a.amax()),
    "argmax_of_an_empty_last_dim": ((r(2, 0),), lambda a: a.argmax(-1)),
    # the broadcast shape eager names is of the output and the value together (fuzz seed 369885)
    "copy_into_a_narrower_output": ((r(1, 1), r(2)), lambda a, b: a.copy_(b)),
    "add__of_a_wider_value": ((r(2, 1), r(2, 3)), lambda a, b: a.add_(b)),
    "amax_of_an_empty_dim_given_twice": ((r(0),), lambda a: torch.amax(a, dim=(0, 0))),  # fuzz seed 369740
    "amax_of_a_dim_given_twice": ((r(2),), lambda a: torch.amax(a, dim=(0, 0))),
    "silu_of_bool": ((torch.ones(2, dtype=torch.bool),), torch.nn.functional.silu),
    "gelu_of_int": ((torch.ones(2, dtype=torch.int32),), torch.nn.functional.gelu),
    # -1 next to a 0 size of an empty tensor is ambiguous; of a non-empty one, invalid (fuzz seeds 242960, 244278)
    "reshape_empty_ambiguous": ((r(2, 0),), lambda a: a.reshape(0, -1)),
    "reshape_empty_ambiguous_last_zero": ((r(0),), lambda a: a.reshape(-1, 2, 0)),
    "view_empty_ambiguous": ((r(0, 3),), lambda a: a.view(a.shape[0], -1)),
    "reshape_nonempty_with_a_zero_size": ((r(2, 3),), lambda a: a.reshape(0, -1)),
    "add_broadcast_dim": ((r(3, 4), r(5)), lambda a, b: a + b),
    "add_broadcast_rank3": ((r(2, 3, 4), r(5, 4)), lambda a, b: a + b),
    "mul_first_mismatch_from_the_right": ((r(2, 3), r(3, 2)), lambda a, b: a * b),
    "where_three_shapes": ((r(2, 3), r(4)), lambda a, b: torch.where(a > 0, a, b)),
    "add_three_way": ((r(3, 4), r(4), r(2, 1, 5)), lambda a, b, c: torch.add(a, b) + c),
    "cat_sizes": ((r(2, 2), r(3, 3)), lambda a, b: torch.cat([a, b], 1)),
    "cat_sizes_third": ((r(2, 2), r(2, 2), r(3, 2)), lambda a, b, c: torch.cat([a, b, c], 1)),
    "cat_rank": ((r(2, 2), r(2, 1, 1)), lambda a, b: torch.cat([a, b], 0)),
    "stack": ((r(2, 2), r(3, 2)), lambda a, b: torch.stack([a, b])),
    "mm": ((r(2, 3), r(2, 3)), lambda a, b: a @ b),
    "mv": ((r(2, 3), r(2)), lambda a, b: a @ b),
    "batched_mv": ((r(2, 2, 3), r(2)), lambda a, b: a @ b),
    "dot": ((r(3), r(2)), lambda a, b: a @ b),
    "vm": ((r(3), r(2, 4)), lambda a, b: a @ b),
    "folded_mm": ((r(2, 2, 3), r(2, 4)), lambda a, b: a @ b),
    "v_bmm": ((r(3), r(2, 2, 4)), lambda a, b: a @ b),
    "m_bmm": ((r(2, 3), r(2, 2, 4)), lambda a, b: a @ b),
    "bmm_like": ((r(2, 2, 2, 2), r(2, 4, 2)), lambda a, b: a @ b),
    "bmm_broadcast_batch": ((r(3, 1, 2, 3), r(2, 2, 4)), lambda a, b: a @ b),
    "matmul_batch_mismatch": ((r(5, 2, 3), r(2, 3, 4)), lambda a, b: a @ b),
    "matmul_0d": ((r(), r(2)), lambda a, b: a @ b),
    "bmm": ((r(2, 2, 3), r(2, 2, 3)), lambda a, b: torch.bmm(a, b)),
    # opaque calls: PyTorch's meta functions word these differently from its kernels
    "opaque_mv": ((r(2, 2), r(3)), lambda a, b: torch.mv(a, b)),
    "opaque_logical_and": ((r(2, 2), r(2, 2, 3, 2)), lambda a, b: torch.logical_and(a, b)),
    # copy_ of shapes that do not broadcast: the broadcast message, as in add_
    "copy_not_broadcastable": ((r(2, 4), r(2, 2)), lambda a, b: a.clone().copy_(b)),
    "copy_broadcast_to_other_shape": ((r(2), r(2, 2)), lambda a, b: a.clone().copy_(b)),
    # __setitem__ with more indices than dims, also when nothing reads the result
    "setitem_too_many_indices": ((r(2),), lambda a: a.clone().__setitem__((slice(None), slice(1, None)), 0)),
    "bmm_batch": ((r(2, 2, 3), r(3, 3, 2)), lambda a, b: torch.bmm(a, b)),
    "torch_mm": ((r(2, 3), r(2, 3)), lambda a, b: torch.mm(a, b)),
    "linear_3d_weight": ((r(2, 3), r(2, 3, 3)), lambda a, b: F.linear(a, b)),
    "linear_0d_weight": ((r(2, 3), r()), lambda a, b: F.linear(a, b)),
    "linear_0d_input": ((r(), r(2, 3)), lambda a, b: F.linear(a, b)),
    "linear_mismatch": ((r(2, 3), r(4, 2)), lambda a, b: F.linear(a, b)),
    "linear_1d_1d": ((r(3), r(1)), lambda a, b: F.linear(a, b)),
    "linear_2d_1d": ((r(2, 3), r(2)), lambda a, b: F.linear(a, b)),
    "linear_3d_1d": ((r(2, 2, 3), r(2)), lambda a, b: F.linear(a, b)),
    "linear_1d_2d": ((r(3), r(2, 4)), lambda a, b: F.linear(a, b)),
    "lerp_operand_order": ((r(2, 2), r(2, 2, 3)), lambda a, b: torch.lerp(a, b, 0.25)),
    "lerp_weight": ((r(2, 3), r(4)), lambda a, b: torch.lerp(a, a, b)),
    "addcmul_order": ((r(3), r(2, 2)), lambda a, b: torch.addcmul(a, b, b[:, :1].expand(2, 3))),
    "addcdiv_order": ((r(2, 3), r(4)), lambda a, b: torch.addcdiv(a, b, a)),
    "stack_ranks": ((r(2, 5, 3), r(3)), lambda a, b: torch.stack([a[0], b])),
    "amax_empty": ((r(2, 0),), lambda a: a.amax(1)),
    "amin_empty": ((r(0, 2),), lambda a: a.amin(0)),
    "max_empty": ((r(2, 0),), lambda a: a.max(1)),
    "argmax_empty": ((r(2, 0),), lambda a: a.argmax(1)),
    "view_bad": ((r(2, 3),), lambda a: a.view(4, 2)),
    "reshape_bad": ((r(2, 3),), lambda a: a.reshape(4, -1)),
    "expand_bad": ((r(2, 3),), lambda a: a.expand(3, 3)),
    "dim_out_of_range": ((r(2, 3),), lambda a: a.sum(2)),
    "sub_bool": ((r(2) > 0, r(2)), lambda a, b: torch.sub(a, b)),
    "neg_bool": ((r(2) > 0,), lambda a: -a),
    "bitwise_and_float": ((r(2),), lambda a: a & a),
    "ones_no_size": ((r(2),), lambda a: torch.ones(*a.shape[1:])),
    "index_out_of_range": ((r(2),), lambda a: a[5]),
    "permute_repeated": ((r(2, 3),), lambda a: a.permute(0, 0)),
    "transpose_out_of_range": ((r(2, 3),), lambda a: a.transpose(0, 2)),
    "squeeze_out_of_range": ((r(2, 3),), lambda a: a.squeeze(3)),
    "split_sizes": ((r(4, 2),), lambda a: a.split([1, 2], 0)),
    # dtypes named as eager names them ("Float", "float", "torch.FloatTensor"), never thunder's dtypes.float32
    "linear_weight_dtype": ((r(2, 3), r(4, 3).double()), lambda a, b: F.linear(a, b)),
    "linear_vector_weight_dtype": ((r(2, 3), r(3).double()), lambda a, b: F.linear(a, b)),
    "linear_dot_dtype": ((r(3), r(3).double()), lambda a, b: F.linear(a, b)),
    "linear_bias_dtype": ((r(2, 3), r(4, 3), r(4).double()), lambda a, b, c: F.linear(a, b, c)),
    "linear_bias_and_weight_dtype": ((r(2, 2, 3), r(4, 3).double(), r(4).double()), lambda a, b, c: F.linear(a, b, c)),
    "sdpa_dtypes": ((r(1, 2, 3), r(1, 2, 3).double()), lambda a, b: F.scaled_dot_product_attention(a, a, b)),
    "embedding_float_indices": ((r(5, 3), r(2)), lambda a, b: F.embedding(b, a)),
    "mean_int": ((r(2).long(),), lambda a: a.mean()),
    "mean_int_dtype": ((r(2),), lambda a: a.mean(dtype=torch.int64)),
    "masked_fill_float_mask": ((r(2, 3), r(2, 3)), lambda a, b: a.masked_fill(b, 0)),
    # an int index out of range: eager names its position in the key, not the dim it selects (fuzz seed 209037)
    "index_second_int": ((r(2, 1, 2),), lambda a: a[0, 1]),
    "index_int_after_ellipsis": ((r(2, 1, 2),), lambda a: a[..., 5]),
    "index_int_after_list": ((r(2, 1, 2),), lambda a: a[[0], 0, 5]),
    "setitem_second_int": ((r(2, 1, 2),), lambda a: a.clone().__setitem__((0, None, 1), 0)),
    # each index op words a wrong index dtype its own way
    "index_select_float_index": ((r(3, 2), r(2)), lambda a, b: a.index_select(0, b)),
    "gather_float_index": ((r(3, 2), r(2, 2)), lambda a, b: a.gather(0, b)),
    "take_along_dim_int32_index": ((r(3, 2), r(2, 2)), lambda a, b: torch.take_along_dim(a, b.int(), 0)),
    # addmm checks the input's shape, then the dtypes (input's, then mat1's), then the inner sizes
    "addmm_sizes": ((r(2, 4), r(2, 3), r(5, 4)), lambda c, a, b: torch.addmm(c, a, b)),
    "addmm_input_shape": ((r(3, 4), r(2, 3), r(3, 4)), lambda c, a, b: torch.addmm(c, a, b)),
    "addmm_input_dtype": ((r(2, 4).double(), r(2, 3), r(5, 4)), lambda c, a, b: torch.addmm(c, a, b)),
    "addmm_mat1_dtype": ((r(2, 4), r(2, 3).double(), r(5, 4)), lambda c, a, b: torch.addmm(c, a, b)),
}


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_error_matches_eager(name, cache):
    args, fn = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as eager:
            fn(*args)
        with pytest.raises(Exception) as got:
            thunder.jit(fn, cache=cache)(*args)
    assert type(got.value) is type(eager.value), got.value
    assert str(got.value) == str(eager.value)


# torch.matmul words its errors as the kernel it lowers to (dot, mv, mm of a folded batch, bmm), which depends on
# the ranks, on whether the smaller operand requires grad and on the larger one's strides (fuzz seeds 205794,
# 209552); each kernel checks sizes and dtypes in its own order
MATMUL_SHAPES = [((3,), (4,)), ((2, 3), (4,)), ((4,), (2, 3)), ((2, 3), (4, 5)), ((5, 2, 3), (4, 5)),
                 ((5, 2, 3), (4,)), ((3,), (2, 4, 5)), ((2, 1), (0, 2, 1)), ((2, 1), (3, 2, 1)),
                 ((5, 2, 3), (1, 4, 5)), ((1, 2, 3), (5, 4, 5)), ((2, 1, 2, 3), (3, 4, 5)), ((0, 2, 3), (4,)),
                 ((2, 3), (3, 4)), ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4))]


def _matmul_operand(shape, dtype, requires_grad, transposed):
    transposed = transposed and len(shape) >= 2
    x = torch.ones(*shape[:-2], shape[-1], shape[-2], dtype=dtype) if transposed else torch.ones(shape, dtype=dtype)
    x.requires_grad_(bool(requires_grad) and x.is_floating_point())
    return x.mT if transposed else x


@pytest.mark.parametrize("dtypes", [(torch.float32, torch.float32), (torch.float32, torch.int64),
                                    (torch.bfloat16, torch.float64)], ids=str)
def test_matmul_errors_match_eager(dtypes):
    jitted = thunder.jit(lambda a, b: a @ b)
    differ = []
    for (sa, sb), grads, layouts in itertools.product(MATMUL_SHAPES, ((0, 0), (1, 0), (0, 1)), ((0, 0), (1, 0), (0, 1))):
        a = _matmul_operand(sa, dtypes[0], grads[0], layouts[0])
        b = _matmul_operand(sb, dtypes[1], grads[1], layouts[1])
        results = []
        for fn in (torch.matmul, jitted):
            try:
                out = fn(a, b)  # ones: the products are exact, so a valid call's result is compared exactly
                results.append(f"ok: {tuple(out.shape)} {out.dtype} {out.requires_grad} {out.detach().tolist()}")
            except Exception as e:  # noqa: BLE001 - the exception itself is compared
                results.append(f"{type(e).__name__}: {e}")
        if results[0] != results[1]:
            differ.append((sa, sb, grads, layouts, results))
    assert not differ, differ[:5]


@pytest.mark.parametrize("name,fn,shapes", [
    ("mm", torch.mm, ((2, 3), (3, 4))), ("bmm", torch.bmm, ((2, 2, 3), (2, 3, 4))),
])
def test_mm_bmm_dtype_errors_match_eager(name, fn, shapes):
    a, b = torch.ones(shapes[0]), torch.ones(shapes[1], dtype=torch.int64)
    with pytest.raises(RuntimeError) as eager:
        fn(a, b)
    with pytest.raises(RuntimeError) as got:
        thunder.jit(fn)(a, b)
    assert str(got.value) == str(eager.value)
