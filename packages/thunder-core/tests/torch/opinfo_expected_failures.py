"""OpInfos that do not pass tests/torch/test_opinfo_conformance.py yet, each with its reason.

Reviewed: the conformance test is strict, so an op listed here that passes fails the test until it is
removed. Keys are OpInfo names (``name.variant``) for the float32 run; ``name@dtype`` for other dtypes.
"""

EXPECTED_FAILURES: dict[str, str] = {}


_R2 = 'no meta kernel / output metadata cannot be computed on the meta device'
EXPECTED_FAILURES.update(dict.fromkeys(['combinations', 'corrcoef', 'cov', 'geqrf', 'istft', 'linalg.lstsq', 'linalg.lstsq.grad_oriented', 'nn.functional.ctc_loss'], _R2))


_R4 = 'output shape depends on the data (refused)'
EXPECTED_FAILURES.update(dict.fromkeys(['histogram', 'histogramdd'], _R4))

_R5 = 'resize op: changes the shape of its tensor in place, which a trace cannot express (refused with the reason)'
EXPECTED_FAILURES.update(dict.fromkeys(['resize_', 'resize_as_'], _R5))


_R7 = ('reads a tensor value in its Python (if torch.any(var < 0)), which the opaque call\'s meta run cannot: refused '
       'as depending on values')
EXPECTED_FAILURES.update(dict.fromkeys(['nn.functional.gaussian_nll_loss'], _R7))

_R8 = 'sparse tensors are not supported'
EXPECTED_FAILURES.update(dict.fromkeys(['sparse.mm.reduce', 'sparse.sampled_addmm', 'to_sparse'], _R8))

_R9 = "float8/uint64 dtypes are not in thunder's dtype table"
EXPECTED_FAILURES.update(dict.fromkeys(['hash_tensor', 'torch._scaled_mm', 'torch._scaled_mm_v2'], _R9))

_R10 = "the OpInfo's sample generation fails for this op on CPU (not a thunder failure)"
EXPECTED_FAILURES.update(dict.fromkeys(['nn.functional.batch_norm.without_cudnn', 'torch.ops.aten._efficient_attention_forward', 'torch.ops.aten._flash_attention_forward'], _R10))



_R15 = "uses a tensor's value for control flow"
EXPECTED_FAILURES.update(dict.fromkeys(['tensor_split'], _R15))

_R16 = 'index_select with a 0-d index: bug in the torch-language symbol'
EXPECTED_FAILURES.update(dict.fromkeys(['index_select'], _R16))


