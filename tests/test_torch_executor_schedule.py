"""The torch executor's program order (thunder.executors.torch_schedule) and copy folding (torch_copies): independent
chains run one after another (small alike ones in lockstep, by foreach calls), writes stay after every read of the
memory they overwrite. That optimizer steps stay eager's bit for bit is tests/test_optimizers.py."""

import pytest
import torch

import thunder


def _params(seed, shapes):
    torch.manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(s)) for s in shapes]


def _written_inputs(trace):
    """The trace arguments written with out=, in the order of their writes."""
    names = {a.name for a in trace.args}
    return [b.kwargs["out"].name for b in trace.bound_symbols if "out" in b.kwargs and b.kwargs["out"].name in names]


def test_foreach_adam_updates_large_parameters_one_after_the_other():
    params = _params(0, ((96, 96), (100, 90), (200, 100)))
    for p in params:
        p.grad = torch.randn_like(p)
    step = thunder.jit(torch.optim.Adam(params, lr=0.01, foreach=True).step)
    step(), step()
    trace = thunder.last_traces(step)[-1]
    # the computation's arguments come parameter by parameter: the index of each written argument's parameter
    owner, k = {}, -1
    for a in trace.args:
        k += a.name.startswith("param_groups_0_params_") and not a.name.endswith("_grad")
        owner[a.name] = k
    order = [owner[name] for name in _written_inputs(trace)]
    assert len(order) == 5 * len(params)  # step, exp_avg, exp_avg_sq (twice: mul_, addcmul_), param
    assert order == sorted(order), order  # eager's foreach order would be 0, 1, 2, 0, 1, 2, ...


def test_alike_updates_run_as_foreach_calls_when_small():
    params = _params(0, ((16, 8), (8,), (3, 4, 5), (100, 90)))
    for p in params:
        p.grad = torch.randn_like(p)
    # SGD allocates nothing (each op writes into its state): mul_, add_ of the momentum buffers and add_ of the
    # parameters are each one call for the three small parameters; the large one's chain runs alone, its buffer
    # still in cache from one op to the next (as eager's for-loop has it)
    step = thunder.jit(torch.optim.SGD(params, lr=0.1, momentum=0.9, foreach=False).step)
    step(), step()
    trace = thunder.last_traces(step)[-1]
    calls = [b for b in trace.bound_symbols if "foreach" in b.sym.name]
    assert len(calls) == 3 and all(len(b.output) == 3 for b in calls)
    large = [name for name in _written_inputs(trace) if name.endswith("_3") or name == "param_groups_0_params_3"]
    assert len(large) == 3  # the momentum buffer twice (mul_, add_), then the parameter
    # Adam's chains allocate their denominator: the three small ones run in lockstep, the large one alone
    step = thunder.jit(torch.optim.Adam(params, lr=0.01, foreach=False).step)
    step(), step()
    calls = [b for b in thunder.last_traces(step)[-1].bound_symbols if "foreach" in b.sym.name]
    assert calls and all(len(b.output) == 3 for b in calls)


def _check_like_eager(fn, *shapes):
    torch.manual_seed(0)
    args = [torch.randn(s) for s in shapes]
    ref = [a.clone() for a in args]
    out = thunder.jit(fn)(*args)
    expected = fn(*ref)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    for a, r in zip(args, ref):
        assert torch.equal(a, r)


def test_a_write_stays_after_reads_of_what_it_overwrites():
    def f(x, w):
        t = w * 2  # the chain of w starts first ...
        s = x * 3  # ... and this read of x, of no chain of w's, must still come before ...
        x.add_(t)  # ... this write of x, which reads w's chain
        return s

    _check_like_eager(f, (4, 3), (4, 3))


def test_a_write_stays_after_reads_of_views_of_what_it_overwrites():
    def f(x, w):
        t = w * 2
        v = x.view(-1)[::2]
        s = v * 3
        x.add_(t)
        return s

    _check_like_eager(f, (4, 3), (4, 3))


def test_a_copy_is_not_folded_before_a_read_of_a_view_of_its_destination():
    def f(x):
        v = x.view(-1)  # a view made before the update ...
        t = x + 1
        w = v * 2  # ... read after the op that computes the new value, before the copy
        x.copy_(t)
        return w

    _check_like_eager(f, (2, 3))


def test_a_write_stays_after_reads_of_a_view_an_earlier_segment_made():
    # fuzz seed 245567: the view comes into the segment after the nonzero read as an input of its own; the write
    # into the input must still wait for the read of the view
    def f(y, x):
        x.transpose_(0, 1)  # x now stands for a view of the input
        p = y[(y > 0).nonzero(as_tuple=True)]  # splits the program: the view and the input are handed over apart
        w = x.movedim(-1, 0)
        s = x.where(x > 0, y)
        w[-1] = w[0]
        return s, p

    _check_like_eager(f, (3, 3), (3, 3))


def test_nothing_moves_across_a_grad_mode_switch():
    def f(x, y, w):
        b1 = y * 3  # the chain of y, w: its second op is under enable_grad
        a1 = x * 2
        with torch.enable_grad():
            b2 = b1 * w
        return a1, b2

    x, y = torch.randn(3), torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        a1, b2 = thunder.jit(f)(x, y, w)
        ea1, eb2 = f(x, y, w)
    assert b2.requires_grad and eb2.requires_grad and not a1.requires_grad
    torch.testing.assert_close((a1, b2), (ea1, eb2), rtol=0, atol=0)


def _fills_merged(t0, t1):  # fuzz seed 600716: CSE merges the fills; a snapshot clones one before its copy
    t0[[0, 1]] = 2
    t1.fill_(True)
    t0.fill_(True)
    return t0


def _one_constant_copied_into_two_inputs(a, b):
    z = torch.zeros(2, dtype=a.dtype)
    a.copy_(z)
    b.add_(1)
    b.copy_(z)
    return a + b


def _a_fill_read_after_its_copy_into_another_input(a, b):
    a.fill_(3.0)
    b.mul_(2)
    b.fill_(3.0)
    return a * b


def _a_constant_copied_into_an_input_and_read_by_another_chain(a, b):
    a.mul_(2)  # the chain of a's writes starts first
    z = torch.ones(2, dtype=a.dtype)
    w = z * b  # another chain reads the constant
    a.copy_(z)
    return w


@pytest.mark.parametrize("fn", [_fills_merged, _one_constant_copied_into_two_inputs,
                                _a_fill_read_after_its_copy_into_another_input,
                                _a_constant_copied_into_an_input_and_read_by_another_chain])
def test_every_read_of_a_copied_value_runs_before_the_copy(fn):
    # copy_to_out_(t, out=x) lets x alias t from there on: the schedule must keep every other read of t before it
    # (the in-place copy check refuses the trace otherwise), and the inputs end as eager's
    dtype = torch.bool if fn is _fills_merged else torch.float32
    make = lambda: (torch.tensor([True, False]).to(dtype), torch.tensor([False, True]).to(dtype))  # noqa: E731
    eager_args, thunder_args = make(), make()
    expected = fn(*eager_args)
    got = thunder.jit(fn)(*thunder_args)
    torch.testing.assert_close(got, expected)
    for e, t in zip(eager_args, thunder_args):
        torch.testing.assert_close(t, e)
