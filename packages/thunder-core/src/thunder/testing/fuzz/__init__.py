"""A seeded differential fuzzer: random small PyTorch programs run by ``thunder.jit`` and by eager PyTorch.

``python -m thunder.testing.fuzz --programs N --seed S`` runs it; see docs/fuzzing.md. Modules, one concern each:
``program`` (what a generated program is and how it prints), ``ops`` (the table of statement builders),
``generator`` (draws programs, keeping those eager accepts), ``compare`` (eager vs thunder results), ``runner``
(calls a program under each cache option and classifies the outcome), ``shrink`` (reduces a failing program) and
``regression`` (writes a shrunk program out as a pytest file).
"""
