import thunder


def test_registered_through_the_plugin_hooks():
    names = [e.name for e in thunder.get_all_executors()]
    assert "inductor" in names


def test_no_cpp_compiler_makes_it_unavailable_with_the_reason():
    from thunder_inductor import inductor_executor
    from torch._inductor import config

    inductor_executor().availability()  # a lookup before must not be remembered
    # a machine whose only compiler is missing: Inductor's own lookup fails and the executor says why
    with config.patch({"cpp.cxx": (None, "/nonexistent/g++")}):
        ok, reason = inductor_executor().availability()
    assert not ok and "C++ compiler" in reason and "/nonexistent/g++" in reason


def test_not_a_default_executor():
    # docs/inductor.md: the benchmark decides; it is opt-in
    assert "inductor" not in [e.name for e in thunder.get_default_executors()]
