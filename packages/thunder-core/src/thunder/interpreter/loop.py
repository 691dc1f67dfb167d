"""The instruction loop of one frame; exceptions unwind through the version's unwind_exception."""

from __future__ import annotations

from .errors import InterpreterError, unsupported

__all__ = ["execute", "RETURN", "YIELD", "GENERATOR"]

# Signals returned by opcode handlers (None means "continue with the next instruction").
RETURN = "return"
YIELD = "yield"
GENERATOR = "generator"


def execute(rt, frame, pending_exc: BaseException | None = None):
    """Run ``frame`` until it returns, yields or creates its generator.

    Returns ``(signal, WrappedValue | None)``. ``pending_exc`` is raised at the current
    instruction first (generator.throw). Exceptions leaving the frame propagate unchanged.
    """
    from .opcode_table import HANDLERS, unwind_exception

    instructions = frame.info.instructions
    linenos = frame.info.linenos
    rt.frames.append(frame)
    if frame.info.catches:
        rt.hooks.on_catching_code(frame.info.code)
    try:
        exc = pending_exc
        while True:
            if exc is None:
                instr = instructions[frame.ip]
                line = linenos[frame.ip]
                frame.ip += 1
                frame.instr = instr
                if line is not None:
                    frame.last_line = line
                handler = HANDLERS.get(instr.opname)
                try:
                    if handler is None:
                        raise unsupported(f"opcode {instr.opname}", frame.source_location())
                    signal = handler(rt, frame, instr)
                    if signal is not None:
                        return signal
                    continue
                except InterpreterError:
                    raise
                except BaseException as e:
                    exc = e
                    reraised = rt.reraised
                    if reraised is not None:
                        # Re-raising adds no traceback entry in CPython (except* relies on it).
                        rt.reraised = None
                        if reraised[0] is e:
                            e.__traceback__ = reraised[1]
                if exc is rt.no_chain:
                    rt.no_chain = None
                elif exc.__context__ is None:
                    rt.chain_context(exc)
            if not unwind_exception(rt, frame, exc):
                rt.no_chain = exc  # already chained where it was raised
                raise exc
            exc = None
    finally:
        rt.frames.pop()
