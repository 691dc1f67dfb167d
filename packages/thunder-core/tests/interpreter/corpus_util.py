"""Registration helper shared by the test_corpus_*.py differential files."""

import pytest


def registry():
    """Returns (CASES, case): ``@case(*args, **kwargs)`` registers a program with its arguments."""
    cases = []

    def case(*args, **kwargs):
        def register(fn):
            cases.append(pytest.param(fn, args, kwargs, id=fn.__name__))
            return fn

        return register

    return cases, case
