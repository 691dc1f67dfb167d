"""The differential corpus (test_programs.py plus the test_corpus_*.py families) stays a few hundred strong."""

import test_corpus_callsites
import test_corpus_class_bodies
import test_corpus_classes
import test_corpus_exceptions
import test_corpus_functions
import test_corpus_generators
import test_programs


def test_corpus_size():
    modules = (test_programs, test_corpus_exceptions, test_corpus_generators, test_corpus_classes,
               test_corpus_functions, test_corpus_callsites, test_corpus_class_bodies)
    names = [p.id for m in modules for p in m.CASES]
    assert len(names) >= 300, len(names)
    assert len(set(names)) == len(names), "program names must be unique across the corpus"
