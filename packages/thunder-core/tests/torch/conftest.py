import sys


def pytest_terminal_summary(terminalreporter):
    """The OpInfo conformance figure, when test_opinfo_conformance ran."""
    mod = sys.modules.get("test_opinfo_conformance")
    if mod is None or not mod.RESULTS:
        return
    results = mod.RESULTS
    det = [k for k in mod.DETERMINISTIC if k in results]
    passed = [k for k in det if results[k][0]]
    symbols = sum(results[k][1] == "symbols" for k in passed)
    write = terminalreporter.write_line
    write(f"{len(passed)} of {len(mod.DETERMINISTIC)} OpInfos pass forward in float32 ({symbols} through torch-language "
          f"symbols, {len(passed) - symbols} through the opaque fallback)")
    nondet = [k for k in mod.NONDETERMINISTIC if k in results]
    write(f"{sum(results[k][0] for k in nondet)} of {len(mod.NONDETERMINISTIC)} random or uninitialized-output OpInfos "
          "match eager (same seed: same values and generator state; uninitialized: shapes and dtypes)")
