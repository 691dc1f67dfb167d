"""What each rank runs for the collectives: functional collectives in a jitted function are symbols of the trace,
run by PyTorch's ops, with gradients."""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

import thunder


def _gather_scatter(x):
    gathered = funcol.all_gather_tensor_autograd(x * 2, 0, dist.group.WORLD)
    return funcol.reduce_scatter_tensor_autograd(gathered.sin(), "sum", 0, dist.group.WORLD).cos()


def _reduce(x):
    return funcol.all_reduce(x * x, "sum", dist.group.WORLD) + funcol.all_reduce(x, "avg", dist.group.WORLD)


def collectives(rank, world_size):
    x = (torch.randn(4, 3, generator=torch.Generator().manual_seed(rank))).requires_grad_()

    # the autograd variants of all-gather and reduce-scatter: eager differentiates them too
    jitted = thunder.jit(_gather_scatter)
    expected, actual = _gather_scatter(x), jitted(x)
    torch.testing.assert_close(actual, expected)
    (expected_grad,) = torch.autograd.grad(expected.sum(), x)
    (actual_grad,) = torch.autograd.grad(actual.sum(), x)
    torch.testing.assert_close(actual_grad, expected_grad)
    forward, backward = str(thunder.last_traces(jitted)[-1]), str(thunder.last_backward_traces(jitted)[-1])
    for op in ("all_gather_into_tensor(", "reduce_scatter_tensor(", "wait_tensor("):
        assert f"torch.ops._c10d_functional.{op}" in forward and f"torch.ops._c10d_functional.{op}" in backward

    # all_reduce (eager's op has no gradient formula): the cotangent is all-reduced the same way, so the gradient
    # of the sum of every rank's loss is what each rank gets
    jitted = thunder.jit(_reduce)
    actual = jitted(x)
    torch.testing.assert_close(actual, _reduce(x.detach()))
    (actual_grad,) = torch.autograd.grad(actual.sum(), x)
    torch.testing.assert_close(actual_grad, world_size * 2 * x.detach() + 1)
    assert "ltorch.all_reduce(" in str(thunder.last_traces(jitted)[0])

    # a collective whose result is unused still runs on every rank (the others wait for it)
    def unused(t):
        funcol.all_reduce(t, "sum", dist.group.WORLD)
        return t + 1

    jitted = thunder.jit(unused)
    torch.testing.assert_close(jitted(x.detach()), unused(x.detach()))
    assert "torch.ops._c10d_functional.all_reduce(" in str(thunder.last_traces(jitted)[-1])


def _inplace(x, out, scattered):
    y = x * 2
    dist.all_reduce(y)  # sum
    dist.all_gather_into_tensor(out, y)
    dist.reduce_scatter_tensor(scattered, out.sin(), op=dist.ReduceOp.AVG)
    return y + 1


def inplace_collectives(rank, world_size):
    """torch.distributed's in-place collectives: the same values written into the same tensors as eager."""
    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(rank))
    expected_out, expected_scattered = torch.empty(4 * world_size, 3), torch.empty(4, 3)
    expected = _inplace(x, expected_out, expected_scattered)
    out, scattered = torch.empty(4 * world_size, 3), torch.empty(4, 3)
    jitted = thunder.jit(_inplace)
    for _ in range(2):  # traced, then cached
        torch.testing.assert_close(jitted(x, out, scattered), expected)
        torch.testing.assert_close(out, expected_out)
        torch.testing.assert_close(scattered, expected_scattered)
        out.zero_(), scattered.zero_()
    assert thunder.cache_hits(jitted) == 1


def _overlappable(x):
    return funcol.all_reduce(x * x, "sum", dist.group.WORLD).sin() + funcol.all_reduce(x.cos(), "avg",
                                                                                        dist.group.WORLD) * x.exp()


def _lines(trace) -> list[str]:
    return [line.strip() for line in str(trace).splitlines() if not line.strip().startswith(("#", "del "))]


def waits_placed_late(rank, world_size):
    """Each wait for a collective sits just before the first read of its result, not right after the collective:
    in the forward (x.exp() computed while the average is in flight) and in the backward (the all-reduce a gradient
    rule writes: sin(x) and its negation computed while the cotangent is reduced)."""
    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(rank)).requires_grad_()
    jitted = thunder.jit(_overlappable)
    actual = jitted(x)
    torch.testing.assert_close(actual, _overlappable(x.detach()))
    actual.sum().backward()
    # eager's all_reduce has no gradient formula: each cotangent all-reduced by eager's collectives, as thunder's
    # rule does, is the reference (d/dx of sin(sum_k x_k^2) + mean_k cos(x_k) * exp(x))
    xd, world = x.detach(), dist.group.WORLD
    squares = funcol.all_reduce(xd * xd, "sum", world)
    expected_grad = (2 * xd * funcol.all_reduce(squares.cos(), "sum", world)
                     - xd.sin() * funcol.all_reduce(xd.exp(), "avg", world)
                     + funcol.all_reduce(xd.cos(), "avg", world) * xd.exp())
    torch.testing.assert_close(x.grad, expected_grad)
    for trace in (thunder.last_traces(jitted)[-1], thunder.last_backward_traces(jitted)[-1]):
        lines = _lines(trace)
        waits = [i for i, line in enumerate(lines) if "_c10d_functional.wait_tensor(" in line]
        assert len(waits) == 2, "\n".join(lines)
        for i in waits:
            result, pending = lines[i].split(" = ")[0], lines[i].split("wait_tensor(")[1].split(")")[0]
            issued = next(k for k, line in enumerate(lines) if line.startswith(f"{pending} = "))
            assert f"{result}," in lines[i + 1] or f"{result})" in lines[i + 1], "\n".join(lines)  # read next
            assert all(result not in line for line in lines[issued + 1:i]), "\n".join(lines)
        # the average's all-reduce (the second in the forward, the first in the backward) overlaps computation
        overlapped = waits[1] if trace is thunder.last_traces(jitted)[-1] else waits[0]
        pending = lines[overlapped].split("wait_tensor(")[1].split(")")[0]
        issued = next(k for k, line in enumerate(lines) if line.startswith(f"{pending} = "))
        assert overlapped - issued > 1, "\n".join(lines)


def _gathered_then_overwritten(x, view):
    y = torch.ops._c10d_functional.wait_tensor(
        torch.ops._c10d_functional.all_gather_into_tensor(x[: x.shape[0] // 2] if view else x, dist.get_world_size(),
                                                         dist.group.WORLD.group_name))
    x.mul_(0)  # the gathered tensor (or its base) overwritten: eager waited before this line
    return y * 2


def waits_before_the_gathered_tensor_is_overwritten(rank, world_size):
    """A wait placed late still comes before an in-place update of the memory its collective reads (found by the
    seventh session's review: the all-gather read x while torch.mul(x, 0, out=x) overwrote it, calls after the first
    returned zeros), of the tensor itself or of the base of the gathered view."""
    for view in (False, True):
        jitted = thunder.jit(lambda x: _gathered_then_overwritten(x, view))
        for _ in range(3):
            x, eager_x = (torch.full((1 << 18,), float(rank + 1)) for _ in range(2))
            torch.testing.assert_close(jitted(x), _gathered_then_overwritten(eager_x, view), rtol=0, atol=0)
            torch.testing.assert_close(x, eager_x, rtol=0, atol=0)
