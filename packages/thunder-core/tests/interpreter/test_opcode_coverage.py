"""Audit: every opcode of the running CPython is interpreted, or allow-listed below with a reason.

An opcode counts as handled when the version's handler table (``opcode_table.HANDLERS``) has an
entry for it that is not a rejection placeholder (those carry a ``rejects`` attribute and raise
InterpreterError). A new CPython opcode, or one whose handler is replaced by a placeholder, fails
the audit until it is implemented or allow-listed here with a reason.
"""

import dis
import opcode
import sys

import pytest

from thunder.interpreter import interpret

# conftest.py loads thunder.interpreter without thunder (torch); running a function imports the
# version's handler table, which is then reachable through sys.modules.
interpret(lambda: None)
opcode_table = sys.modules["thunder.interpreter.opcode_table"]

V = sys.version_info[:2]

# ----- opcodes that never occur in the bytecode the interpreter reads -------------------------------
# The interpreter reads code objects through dis.get_instructions(code), i.e. code.co_code: the
# original (deoptimized) instructions. Adaptive/specialized variants are not in dis.opmap at all;
# the kinds below are in dis.opmap but can still never show up there.
NEVER_IN_CODE = {}
if V >= (3, 12):
    # Instrumented variants (sys.monitoring / tracing) replace instructions only in the live,
    # adaptive copy of the bytecode; co_code shows the original instruction.
    NEVER_IN_CODE.update(dict.fromkeys((
        "INSTRUMENTED_CALL", "INSTRUMENTED_CALL_FUNCTION_EX", "INSTRUMENTED_END_FOR", "INSTRUMENTED_END_SEND",
        "INSTRUMENTED_FOR_ITER", "INSTRUMENTED_INSTRUCTION", "INSTRUMENTED_JUMP_BACKWARD",
        "INSTRUMENTED_JUMP_FORWARD", "INSTRUMENTED_LINE", "INSTRUMENTED_LOAD_SUPER_ATTR",
        "INSTRUMENTED_POP_JUMP_IF_FALSE", "INSTRUMENTED_POP_JUMP_IF_NONE", "INSTRUMENTED_POP_JUMP_IF_NOT_NONE",
        "INSTRUMENTED_POP_JUMP_IF_TRUE", "INSTRUMENTED_RESUME", "INSTRUMENTED_RETURN_CONST",
        "INSTRUMENTED_RETURN_VALUE", "INSTRUMENTED_YIELD_VALUE",
    ), "instrumented variant: only in the live adaptive bytecode, never in co_code"))
    # Pseudo-instructions (opcode >= 256) exist only inside the compiler; the assembler replaces
    # them with real instructions or exception-table entries.
    NEVER_IN_CODE.update(dict.fromkeys((
        "SETUP_FINALLY", "SETUP_CLEANUP", "SETUP_WITH", "POP_BLOCK",  # JUMP(_NO_INTERRUPT) are handled anyway
        "LOAD_METHOD", "LOAD_SUPER_METHOD", "LOAD_ZERO_SUPER_ATTR", "LOAD_ZERO_SUPER_METHOD",
        "STORE_FAST_MAYBE_NULL",
    ), "compiler pseudo-instruction (opcode >= 256), never emitted into co_code"))
    NEVER_IN_CODE["RESERVED"] = "reserved number, not an instruction"
    NEVER_IN_CODE["INTERPRETER_EXIT"] = "only in CPython's internal trampoline code that ends a C-level call"
if V >= (3, 13):
    NEVER_IN_CODE["INSTRUMENTED_CALL_KW"] = "instrumented variant: only in the live adaptive bytecode"
    NEVER_IN_CODE["EXIT_INIT_CHECK"] = "only in CPython's internal shim code for specialized __init__ calls"
    NEVER_IN_CODE["ENTER_EXECUTOR"] = ("tier-2 executor entry patched into the live bytecode; co_code keeps "
                                       "the original JUMP_BACKWARD")

# ----- opcodes that never occur in interpreted code --------------------------------------------------
# interpret() runs Python functions and, through the __build_class__ lookaside, class bodies (the
# name-based opcodes LOAD_NAME/STORE_NAME/DELETE_NAME/LOAD_CLASSDEREF/SETUP_ANNOTATIONS are handled).
# `import *` and the interactive-mode print only appear in module-level / interactive code, which
# is never interpreted.
NOT_FUNCTION_CODE = {}
if V <= (3, 11):
    NOT_FUNCTION_CODE["IMPORT_STAR"] = "module-level code only (`from m import *` is a SyntaxError in functions and classes)"
    NOT_FUNCTION_CODE["PRINT_EXPR"] = "interactive-mode code only"

# ----- async code: never run by the interpreter -----------------------------------------------------
# Calling an async function / async generator function raises InterpreterError before its code
# runs (test_corpus_async.py), so these opcodes, which only occur in such code, are never reached.
ASYNC_ONLY = dict.fromkeys(("GET_AWAITABLE", "GET_AITER", "GET_ANEXT", "BEFORE_ASYNC_WITH", "END_ASYNC_FOR"),
                           "only in async def / async generator code, which is not interpreted")
if V == (3, 10):
    ASYNC_ONLY["SETUP_ASYNC_WITH"] = "only in async def code, which is not interpreted"
if V == (3, 11):
    ASYNC_ONLY["ASYNC_GEN_WRAP"] = "only in async generator code, which is not interpreted"

ALLOWED = {**NEVER_IN_CODE, **NOT_FUNCTION_CODE, **ASYNC_ONLY}

# CALL_INTRINSIC_1/2 (3.12+) dispatch on their oparg; the same audit applies to the functions.
ALLOWED_INTRINSICS = {
    "INTRINSIC_1_INVALID": "never emitted",
    "INTRINSIC_2_INVALID": "never emitted",
    "INTRINSIC_PRINT": "interactive-mode code only",
    "INTRINSIC_IMPORT_STAR": "`from m import *` is a SyntaxError inside functions",
    "INTRINSIC_ASYNC_GEN_WRAP": "only in async generator code, which is not interpreted",
}


def _handled(name) -> bool:
    handler = opcode_table.HANDLERS.get(name)
    return handler is not None and not hasattr(handler, "rejects")


def test_version_is_supported():
    assert V in opcode_table.SUPPORTED_VERSIONS
    assert opcode_table.HANDLERS is not None


def test_every_opcode_is_handled_or_allow_listed():
    missing = sorted(name for name in dis.opmap if not _handled(name) and name not in ALLOWED)
    assert not missing, f"opcodes of CPython {V[0]}.{V[1]} neither interpreted nor allow-listed: {missing}"


def test_allow_list_is_not_stale():
    # An allow-listed opcode that the table does handle (or that this CPython lacks) should be dropped.
    stale = sorted(name for name in ALLOWED if name not in dis.opmap or _handled(name))
    assert not stale, stale


@pytest.mark.skipif(V < (3, 12), reason="CALL_INTRINSIC_1/2 are 3.12+")
def test_every_intrinsic_is_handled_or_allow_listed():
    opcodes_312 = sys.modules["thunder.interpreter.opcodes_312"]
    INTRINSIC_1, INTRINSIC_2 = opcodes_312.INTRINSIC_1, opcodes_312.INTRINSIC_2
    missing = []
    for descs, table in ((opcode._intrinsic_1_descs, INTRINSIC_1), (opcode._intrinsic_2_descs, INTRINSIC_2)):
        for arg, name in enumerate(descs):
            if arg not in table and name not in ALLOWED_INTRINSICS:
                missing.append(name)
    assert not missing, missing
    handled = {opcode._intrinsic_1_descs[a] for a in INTRINSIC_1} | {opcode._intrinsic_2_descs[a] for a in INTRINSIC_2}
    assert not handled & set(ALLOWED_INTRINSICS)
