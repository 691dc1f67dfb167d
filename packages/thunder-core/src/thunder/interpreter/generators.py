"""Interpreted generators: real iterator objects whose __next__/send/throw resume interpretation."""

from __future__ import annotations

import sys

from .runtime import ExcInfoEntry, current_runtime, pop_runtime, push_runtime
from .wrapped import WrappedValue, computed

__all__ = ["InterpretedGenerator"]

_CREATED, _SUSPENDED, _RUNNING, _CLOSED = range(4)
_CLOSE_RETURNS_VALUE = sys.version_info >= (3, 13)


class InterpretedGenerator:
    """Generator object produced by calling an interpreted generator function."""

    __slots__ = ("_rt", "_frame", "_state", "_exc_entry", "__weakref__")

    def __init__(self, rt, frame):
        self._rt = rt
        self._frame = frame
        self._state = _CREATED
        self._exc_entry = ExcInfoEntry()  # a generator has its own handled-exception entry
        frame.generator = self

    # ----- generator protocol -------------------------------------------------------------
    def __iter__(self):
        return self

    def __next__(self):
        return self.send_wrapped(None).value

    def send(self, value):
        return self.send_wrapped(computed(value)).value

    def throw(self, typ, val=None, tb=None):
        if isinstance(typ, BaseException):
            exc = typ
        elif isinstance(typ, type) and issubclass(typ, BaseException):
            exc = val if isinstance(val, typ) else (typ() if val is None else typ(val))
        else:
            raise TypeError("exceptions must be classes or instances deriving from BaseException, not "
                            f"{type(typ).__name__}")
        if tb is not None:
            exc = exc.with_traceback(tb)
        return self.throw_wrapped(exc).value

    def close(self):
        if self._state in (_CREATED, _CLOSED):
            self._state = _CLOSED
            return None
        try:
            self.throw_wrapped(GeneratorExit())
        except GeneratorExit:
            return None
        except StopIteration as stop:  # 3.13: close() returns the value the generator returned
            return stop.value if _CLOSE_RETURNS_VALUE else None
        raise RuntimeError("generator ignored GeneratorExit")

    @property
    def gi_running(self):
        return self._state == _RUNNING

    @property
    def gi_code(self):
        return self._frame.code

    def __repr__(self):
        return f"<interpreted generator object {self._frame.qualname} at {id(self):#x}>"

    # ----- interpreter side -----------------------------------------------------------------
    def send_wrapped(self, wvalue: WrappedValue | None) -> WrappedValue:
        if wvalue is None:
            wvalue = computed(None)
        if self._state == _CREATED and wvalue.value is not None:
            raise TypeError("can't send non-None value to a just-started generator")
        return self._resume(wvalue, None)

    def throw_wrapped(self, exc: BaseException) -> WrappedValue:
        if self._state == _SUSPENDED:
            delegate = self._delegate()
            if delegate is not None:
                return self._throw_into_delegate(delegate, exc)
        return self._resume(None, exc)

    def _delegate(self):
        """The sub-iterator when suspended inside ``yield from`` (RESUME oparg 2 follows the yield)."""
        frame = self._frame
        instructions = frame.info.instructions
        if frame.ip < len(instructions):
            nxt = instructions[frame.ip]
            if nxt.opname == "RESUME" and (nxt.arg & 3) == 2 and frame.stack:  # 3.13: bit 4 = except depth
                return frame.stack[-1]
            if nxt.opname == "YIELD_FROM" and frame.stack:  # 3.10 re-executes YIELD_FROM when resumed
                return frame.stack[-1]
        return None

    def _throw_into_delegate(self, wdelegate: WrappedValue, exc: BaseException) -> WrappedValue:
        from .opcode_table import finish_delegation

        sub = wdelegate.value
        error = stopped = None
        self._state = _RUNNING
        try:
            if isinstance(exc, GeneratorExit):
                close = getattr(sub, "close", None)
                if close is not None:
                    close()
            else:
                throw = getattr(sub, "throw", None)
                if throw is not None:
                    if type(sub) is InterpretedGenerator:
                        result = sub.throw_wrapped(exc)
                    else:
                        result = computed(throw(exc))
                    self._state = _SUSPENDED
                    return result
        except StopIteration as stop:
            if isinstance(exc, GeneratorExit):
                error = stop
            else:
                stopped = stop
        except BaseException as e:  # raised by the sub-iterator: continue in our frame
            error = e
        self._state = _SUSPENDED
        # Resume outside the except blocks so nothing gets chained to the caught exception.
        if stopped is not None:
            finish_delegation(self._frame, computed(stopped.value))
            return self._resume(None, None, push_value=False)
        return self._resume(None, exc if error is None else error)

    def _resume(self, wvalue, exc, push_value=True) -> WrappedValue:
        from .loop import YIELD, execute

        if self._state == _RUNNING:
            raise ValueError("generator already executing")
        if self._state == _CLOSED:
            if exc is not None:
                raise exc
            raise StopIteration
        if self._state == _CREATED and exc is not None:
            self._state = _CLOSED
            raise exc
        frame = self._frame
        if exc is None and push_value:
            frame.stack.append(wvalue)
        rt = self._rt
        pushed = current_runtime() is not rt
        if pushed:
            push_runtime(rt)
        rt.exc_stack.append(self._exc_entry)
        self._state = _RUNNING
        stop = None
        try:
            kind, result = execute(rt, frame, exc)
        except StopIteration as e:  # 3.11: converted here; 3.12 bytecode converts it itself
            self._state = _CLOSED
            stop = e
        except BaseException:
            self._state = _CLOSED
            raise
        finally:
            rt.exc_stack.pop()
            if pushed:
                pop_runtime(rt)
        if stop is not None:
            error = RuntimeError("generator raised StopIteration")
            error.__cause__ = stop
            error.__context__ = stop
            raise error
        if kind is YIELD:
            self._state = _SUSPENDED
            return result
        self._state = _CLOSED
        if result.value is None:
            raise StopIteration
        raise StopIteration(result.value)
