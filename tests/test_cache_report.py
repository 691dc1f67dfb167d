"""thunder.examine.cache_report: for each recompilation, which prologue check rejected the call, on which value, old
vs new; and the RecompilationWarning past recompile_warning_limit. Real recompilation scenarios, each also checked
against eager (a miss must still compute eager's result)."""

import warnings

import pytest
import torch

import thunder
from thunder.frontend.recompiles import MAX_KEPT_MISSES, RecompilationWarning

SCALE = 3


def _only_rejection(jfn, miss=-1, entry=0):
    return thunder.examine.cache_report(jfn).misses[miss].rejections[entry]


def test_shape_change_names_the_argument_and_both_shapes():
    def f(a, b):
        return (a * b).sin()

    jf = thunder.jit(f)
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    jf(a, b)
    a2, b2 = torch.randn(4, 2), torch.randn(4, 2)
    torch.testing.assert_close(jf(a2, b2), f(a2, b2))
    r = _only_rejection(jf)
    assert (r.check, r.path, r.expected, r.got) == ("check_tensor", "a", "shape (4, 4)", "shape (4, 2)")
    report = str(thunder.examine.cache_report(jf))
    assert "f: 2 calls, 0 cache hits, 2 entries (cache='constant values')" in report
    assert "entry 0 rejected a: expected shape (4, 4), got shape (4, 2)" in report


def test_dtype_device_and_requires_grad_are_named_separately():
    jf = thunder.jit(lambda x: x * 2)
    jf(torch.randn(3))
    jf(torch.randn(3, dtype=torch.float64))
    r = _only_rejection(jf)
    assert (r.expected, r.got) == ("dtype torch.float32", "dtype torch.float64")
    x = torch.randn(3, requires_grad=True)
    jf(x)
    r = _only_rejection(jf)
    assert (r.expected, r.got) == ("requires_grad False", "requires_grad True")


def test_changed_global_is_reported_with_its_module_and_both_values():
    global SCALE

    def f(x):
        return x * SCALE

    jf = thunder.jit(f)
    x = torch.randn(3)
    jf(x)
    old = SCALE
    try:
        SCALE = 5
        torch.testing.assert_close(jf(x), x * 5)
    finally:
        SCALE = old
    r = _only_rejection(jf)
    assert r.path == f"{__name__}.SCALE"
    assert (r.check, r.expected, r.got) == ("check_literal", "3", "5")


def test_number_argument_of_another_type():
    jf = thunder.jit(lambda x, n: x * n)
    jf(torch.ones(2), 2)
    jf(torch.ones(2), 2.0)
    r = _only_rejection(jf)
    assert (r.path, r.expected, r.got) == ("n", "2 (int)", "2.0 (float)")


def test_closure_variable():
    c = 1

    def f(x):
        return x + c

    jf = thunder.jit(f)
    jf(torch.zeros(2))
    c = 7
    torch.testing.assert_close(jf(torch.zeros(2)), torch.full((2,), 7.0))
    r = _only_rejection(jf)
    assert (r.path, r.expected, r.got) == ("c", "1", "7")


def test_module_parameter_path_and_grad_mode():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    jm = thunder.jit(model)
    x = torch.randn(1, 2)
    jm(x)
    model[0].weight.requires_grad_(False)
    torch.testing.assert_close(jm(x), model(x))
    r = _only_rejection(jm)
    assert (r.path, r.expected, r.got) == ("self[0].weight", "requires_grad True", "requires_grad False")
    with torch.no_grad():
        jm(x)
    assert [(r.path, r.expected, r.got) for r in thunder.examine.cache_report(jm).misses[-1].rejections] == [
        ("torch.is_grad_enabled()", "True", "False")] * 2


def test_keyword_instead_of_positional_argument():
    jf = thunder.jit(lambda x, n: x * n)
    jf(torch.ones(2), 2)
    jf(torch.ones(2), n=2)
    r = _only_rejection(jf)
    assert r.path == "the arguments"
    assert (r.expected, r.got) == ("2 positional, keywords []", "1 positional, keywords ['n']")


def test_symbolic_values_names_the_constraint_that_broke():
    def f(x):
        if x.shape[0] > 4:
            return x * 2
        return x - 1

    jf = thunder.jit(f, cache="symbolic values")
    jf(torch.randn(8, 3))
    jf(torch.randn(6, 3))  # same branch: a hit
    x = torch.randn(2, 3)
    torch.testing.assert_close(jf(x), f(x))
    report = thunder.examine.cache_report(jf)
    assert (report.hits, len(report.entries), len(report.misses)) == (1, 2, 1)
    r = report.misses[0].rejections[0]
    assert (r.path, r.expected, r.got) == ("(x.shape[0] > 4)", "True", "False")


def test_value_that_can_no_longer_be_reached():
    class Config:
        pass

    cfg = Config()
    cfg.scale = 2.0
    jf = thunder.jit(lambda x: x * cfg.scale)
    jf(torch.ones(2))
    del cfg.scale
    with pytest.raises(AttributeError, match="scale"):
        jf(torch.ones(2))
    r = _only_rejection(jf)
    assert r.path == "cfg.scale" and r.expected == "it to be reachable"
    assert r.got == "AttributeError: 'Config' object has no attribute 'scale'"


def test_every_entry_answers_each_miss_and_hits_record_nothing():
    jf = thunder.jit(lambda x: x + 1)
    for n in (1, 2, 3):
        jf(torch.ones(n))
    jf(torch.ones(2))  # a hit
    report = thunder.examine.cache_report(jf)
    assert (report.calls, report.hits, len(report.entries)) == (4, 1, 3)
    assert [m.call for m in report.misses] == [2, 3]
    assert [len(m.rejections) for m in report.misses] == [1, 2]
    assert str(report).count("rejected") == 3


def test_warns_once_past_the_limit_with_the_reason():
    jf = thunder.jit(lambda x: x.sum(), recompile_warning_limit=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 7):
            jf(torch.ones(n))
    ours = [w for w in caught if issubclass(w.category, RecompilationWarning)]
    assert len(ours) == 1
    message = str(ours[0].message)
    assert "recompiled 3 times, more than recompile_warning_limit=2" in message
    assert "entry 0 rejected x: expected shape (1,), got shape (4,)" in message
    assert "cache='symbolic values'" in message
    assert ours[0].filename == __file__  # points at the user's call


def test_warning_of_a_module_points_at_the_users_call():
    model = torch.nn.Linear(2, 2)
    jm = thunder.jit(model, recompile_warning_limit=0)
    jm(torch.ones(1, 2))
    with pytest.warns(RecompilationWarning, match=r"thunder.jit\(Linear\) recompiled 1 time,") as caught:
        jm(torch.ones(3, 2))
    assert caught[0].filename == __file__


def test_default_limit_is_eight_and_none_never_warns():
    jf = thunder.jit(lambda x: x.sum())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 10):  # 8 recompilations
            jf(torch.ones(n))
        assert not [w for w in caught if issubclass(w.category, RecompilationWarning)]
        jf(torch.ones(10))  # the 9th
        assert len([w for w in caught if issubclass(w.category, RecompilationWarning)]) == 1
    jf = thunder.jit(lambda x: x.sum(), recompile_warning_limit=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecompilationWarning)
        for n in range(1, 12):
            jf(torch.ones(n))


def test_no_caching_traces_every_call_without_warning():
    jf = thunder.jit(lambda x: x.sum(), cache="no caching", recompile_warning_limit=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecompilationWarning)
        for n in range(1, 5):
            jf(torch.ones(n))
    report = thunder.examine.cache_report(jf)
    assert (report.entries, report.misses, report.recompiles) == ([], [], 0)


def test_kept_misses_are_bounded():
    jf = thunder.jit(lambda x: x + 1, recompile_warning_limit=None)
    for n in range(1, MAX_KEPT_MISSES + 4):
        jf(torch.ones(n))
    report = thunder.examine.cache_report(jf)
    assert report.recompiles == MAX_KEPT_MISSES + 2 and len(report.misses) == MAX_KEPT_MISSES
    assert f"the latest {MAX_KEPT_MISSES} of {MAX_KEPT_MISSES + 2} recompilations:" in str(report)


def test_unknown_callable_is_refused():
    with pytest.raises(TypeError, match="expected a function or module returned by thunder.jit"):
        thunder.examine.cache_report(lambda x: x)


def test_bound_method_state_is_named_from_self():
    """A jitted optimizer step: its first call creates the state, so the second is another program."""
    model = torch.nn.Linear(3, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    jstep = thunder.jit(optimizer.step)
    for _ in range(3):
        model(torch.ones(2, 3)).sum().backward()
        jstep()
    report = thunder.examine.cache_report(jstep)
    assert (report.calls, report.hits, len(report.entries)) == (3, 1, 2)
    r = report.misses[0].rejections[0]
    assert r.path == "self.state[<Parameter of shape (3, 3)>]['momentum_buffer']"
    assert (r.check, r.expected, r.got) == ("check_contains", "absent", "present")
