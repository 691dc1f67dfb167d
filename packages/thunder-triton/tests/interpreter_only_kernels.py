"""Kernels that Triton's interpreter runs and the sm_90 compiler rejects: the ahead-of-time check must fail
on them (test_sm90_compile.py)."""

import triton
import triton.language as tl


def twice(x):  # a plain Python function: the interpreter calls it, the compiler cannot
    return x * 2


@triton.jit
def calls_python(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, twice(tl.load(x_ptr + offs, mask=mask)), mask=mask)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    """a @ b of one N x N block: both operands staged in shared memory (256 KiB in float16 at N=256)."""
    i = tl.arange(0, N)
    a = tl.load(a_ptr + i[:, None] * N + i[None, :])
    b = tl.load(b_ptr + i[:, None] * N + i[None, :])
    tl.store(c_ptr + i[:, None] * N + i[None, :], tl.dot(a, b))
