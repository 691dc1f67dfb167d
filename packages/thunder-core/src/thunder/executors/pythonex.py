"""The python executor: number arithmetic and the prologue's unpacks and checks, as plain Python.

Its prologue symbols print inline (``x = args[0]``, ``if ...: return None``) so the cache-hit path
is straight-line Python with no calls beyond the attribute reads it checks.
"""

from __future__ import annotations

from thunder.core.codegen import ObjectRef, prettyprint
from thunder.core.proxies import TensorProxy
from thunder.core.symbol import Symbol
from thunder.extend import OperatorExecutor
from thunder.plugins import hookimpl

ex = OperatorExecutor("python", priority=-1)


def _numbers_only(*args, **kwargs) -> bool:
    return not any(isinstance(a, TensorProxy) for a in args)


_OPERATORS = {
    "add": "+", "sub": "-", "mul": "*", "true_divide_numbers": "/", "floor_divide": "//", "remainder": "%",
    "pow": "**", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "bitwise_and": "&",
    "bitwise_or": "|", "bitwise_xor": "^", "shift_left": "<<", "shift_right": ">>",
}


def _operand(x, imports) -> str:
    s = prettyprint(x, imports)
    return f"({s})" if s.startswith("-") else s  # -1.5 ** i is -(1.5 ** i) in Python


def _infix_printer(op: str):
    def printer(bsym, imports):
        a, b = (_operand(x, imports) for x in bsym.args)
        return [f"{bsym.output.name} = {a} {op} {b}" if hasattr(bsym.output, "name") else f"{a} {op} {b}"]

    return printer


def _python_symbol(name: str, printer) -> Symbol:
    return Symbol(name, id=f"python.{name}", is_prim=True, executor=ex, python_printer=printer)


for _name, _op in _OPERATORS.items():
    ex.register_implementation(f"prims.{_name}", _python_symbol(_name, _infix_printer(_op)), checker=_numbers_only)


def _call_printer(fn_path: str):
    def printer(bsym, imports):
        module = fn_path.rpartition(".")[0]
        if module:
            imports.need(f"import {module}")
        args = ", ".join(prettyprint(x, imports) for x in bsym.args)
        call = f"{fn_path}({args})"
        return [f"{bsym.output.name} = {call}" if hasattr(bsym.output, "name") else call]

    return printer


# prim -> the Python function it is on numbers (prims.number_functions says which prims have a number form)
NUMBER_FUNCTIONS = {
    "abs": "abs", "neg": "operator.neg", "bitwise_not": "operator.invert", "logical_not": "operator.not_",
    "round": "round", "round_to_digits": "round", "maximum": "max", "minimum": "min",
    **{name: f"math.{name}" for name in (
        "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
        "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "lgamma", "floor", "ceil", "trunc", "fmod", "atan2",
        "isfinite", "isnan", "isinf")},
}
for _name, _path in NUMBER_FUNCTIONS.items():
    ex.register_implementation(f"prims.{_name}", _python_symbol(_name, _call_printer(_path)), checker=_numbers_only)


def _convert_printer(bsym, imports):
    a, dtype = bsym.args
    return [f"{bsym.output.name} = {dtype.__name__}({prettyprint(a, imports)})"]


ex.register_implementation("prims.convert_element_type", _python_symbol("convert_element_type", _convert_printer),
                           checker=_numbers_only)

# number arithmetic: pure, so schedules may move it (thunder.executors.torch_schedule)
NUMBER_OP_IDS = frozenset(f"python.{name}" for name in (*_OPERATORS, *NUMBER_FUNCTIONS, "convert_element_type"))


# ---------------------------------------------------------------------------------------------
# Prologue
# ---------------------------------------------------------------------------------------------


def _unpack_attr(bsym, imports):
    obj, name = bsym.args
    return [f"{bsym.output.name} = {prettyprint(obj, imports)}.{name}"]


def _unpack_item(bsym, imports):
    obj, key = bsym.args
    return [f"{bsym.output.name} = {prettyprint(obj, imports)}[{prettyprint(key, imports)}]"]


def _unpack_keys(bsym, imports):
    (d,) = bsym.args
    return [f"{bsym.output.name} = tuple({prettyprint(d, imports)})"]


def _unpack_type(bsym, imports):
    (obj,) = bsym.args
    return [f"{bsym.output.name} = type({prettyprint(obj, imports)})"]


def _unpack_deref(bsym, imports):
    (ref,) = bsym.args
    return [f"{bsym.output.name} = {prettyprint(ref, imports)}()"]


def _unpack_cell(bsym, imports):
    (cell,) = bsym.args
    return [f"{bsym.output.name} = {prettyprint(cell, imports)}.cell_contents"]


def _unpack_lookup(bsym, imports):
    cls, name, after = bsym.args
    imports.need("from thunder.interpreter.typeutil import lookup_type")
    start = "" if after is None else f", after={prettyprint(after, imports)}"
    return [f"{bsym.output.name} = lookup_type({prettyprint(cls, imports)}, {name!r}{start})"]


def _unpack_dims(bsym, imports):
    (t,) = bsym.args
    names = ", ".join(d.name if d is not None else "_" for d in bsym.output)
    return [f"({names},) = {prettyprint(t, imports)}.shape"]


def _check_tensor(bsym, imports):
    *check, guard = bsym.args
    cond = _tensor_condition(*check, imports)
    if guard is not None:  # C++ first (frontend/tensor_guards.py); where it says no, the check above decides
        cond = f"{prettyprint(guard, imports)}.check({prettyprint(check[0], imports)}) or ({cond})"
    return [f"if not ({cond}): return None"]


def _check_tensors(bsym, imports):
    guard, checks = bsym.args
    names = ", ".join(prettyprint(c[0], imports) for c in checks)
    # one C++ call for all; where it says no, each tensor's own check decides
    return [f"if not {prettyprint(guard, imports)}.check({names}):",
            *(f"  if not ({_tensor_condition(*c, imports)}): return None" for c in checks)]


def _tensor_condition(t, shape, device, dtype, requires_grad, traced_type, imports) -> str:
    """The Python test that ``t`` is a tensor of that shape, device, dtype and requires_grad."""
    imports.need("import torch")
    name = prettyprint(t, imports)
    if all(isinstance(d, int) for d in shape):
        shape_check = f"{name}.shape == {prettyprint(tuple(shape))}"
    else:  # symbolic dims are unpacked after the check; the static ones are compared
        shape_check = " and ".join([f"{name}.ndim == {len(shape)}"] + [
            f"{name}.shape[{i}] == {d}" for i, d in enumerate(shape) if isinstance(d, int)])
    # is_cpu is a flag; .device makes a torch.device to compare
    device_check = f"{name}.is_cpu" if device.obj.type == "cpu" else f"{name}.device == {prettyprint(device, imports)}"
    return (f"(type({name}) is {prettyprint(traced_type, imports)} or isinstance({name}, torch.Tensor)) "
            f"and {shape_check} and {name}.dtype is {prettyprint(dtype, imports)} and {device_check} "
            f"and {'' if requires_grad else 'not '}{name}.requires_grad")


def _check_strides(bsym, imports):
    t, strides = bsym.args
    if strides == "contiguous":
        return [f"if not {prettyprint(t, imports)}.is_contiguous(): return None"]
    return [f"if {prettyprint(t, imports)}.stride() != {prettyprint(tuple(strides))}: return None"]


def _check_tensor_method(bsym, imports):
    # check_tensor_method(t, name, value): t.name() is value (a layout or inference fact the program asked about)
    t, name, value = bsym.args
    test = "is not" if isinstance(value, bool) else "!="
    return [f"if {prettyprint(t, imports)}.{name}() {test} {prettyprint(value, imports)}: return None"]


def _check_literal(bsym, imports):
    x, value = bsym.args
    name = prettyprint(x, imports)
    if value is None or isinstance(value, bool):
        return [f"if {name} is not {value!r}: return None"]
    if type(value) in (float, complex) and value != value:
        # NaN (torch.nan, math.nan) equals nothing, itself included: the check is for another NaN
        return [f"if type({name}) is not {type(value).__name__} or {name} == {name}: return None"]
    if type(value) in (int, float, complex, str, bytes, tuple, list, set, frozenset):
        # the type matters too: 1 == 1.0 == True, but they trace differently
        return [f"if type({name}) is not {type(value).__name__} or {name} != {prettyprint(value, imports)}: return None"]
    if type(value).__module__ == "torch" and type(value).__name__ == "Size":
        imports.need("import torch")
        return [f"if type({name}) is not torch.Size or {name} != {prettyprint(tuple(value), imports)}: return None"]
    # dtypes, devices: compared by equality with the object itself
    ref = ObjectRef(value, f"{type(value).__name__}_{id(value):x}")
    return [f"if {name} != {prettyprint(ref, imports)}: return None"]


def _check_is(bsym, imports):
    x, obj = bsym.args
    return [f"if {prettyprint(x, imports)} is not {prettyprint(obj, imports)}: return None"]


def _check_type(bsym, imports):
    x, tp = bsym.args
    return [f"if type({prettyprint(x, imports)}) is not {prettyprint(tp, imports)}: return None"]


def _check_contains(bsym, imports):
    container, key, present = bsym.args
    test = "not in" if present else "in"
    return [f"if {prettyprint(key, imports)} {test} {prettyprint(container, imports)}: return None"]


def _check_hasattr(bsym, imports):
    obj, name, present = bsym.args
    return [f"if {'not ' if present else ''}hasattr({prettyprint(obj, imports)}, {name!r}): return None"]


def _check_no_hooks(bsym, imports):
    counter, count, keys, *dicts = bsym.args
    any_hook = " or ".join(f"{prettyprint(d, imports)}[{k!r}]" for d, names in zip(dicts, keys) for k in names)
    # while no hook was registered anywhere (the counter of handles is unchanged), the dicts need no look
    return [f"if {prettyprint(counter, imports)}.next_id != {count} and ({any_hook}): return None"]


def _check_state(bsym, imports):
    query, answer = bsym.args
    if type(answer).__module__ == "torch":  # a dtype: printed as torch.float32
        imports.need("import torch")
        return [f"if {prettyprint(query, imports)}() is not {answer}: return None"]
    test = "is not" if answer is None or isinstance(answer, bool) else "!="
    return [f"if {prettyprint(query, imports)}() {test} {answer!r}: return None"]


def _check_grad_mode(bsym, imports):
    (enabled,) = bsym.args
    imports.need("import torch")
    return [f"if torch.is_grad_enabled() is not {enabled}: return None"]


def _check_autocast(bsym, imports):
    (states,) = bsym.args
    imports.need("import torch")
    if all(dtype is None for _, dtype in states):
        return ["if torch._C._is_any_autocast_enabled(): return None"]  # one call on the common path
    tests = [f"torch.is_autocast_enabled({device!r})" if dtype is None else
             f"not torch.is_autocast_enabled({device!r}) or torch.get_autocast_dtype({device!r}) is not {dtype}"
             for device, dtype in states]
    return [f"if {' or '.join(tests)}: return None"]


def _check_distinct_storage(bsym, imports):
    # empty tensors have no storage to share: the shapes the prologue checked say which are, symbolic ones need a look
    def empty(t):
        return any(isinstance(d, int) and d == 0 for d in t.shape)

    static = [prettyprint(t, imports) for t in bsym.args
              if not empty(t) and all(isinstance(d, int) for d in t.shape)]
    symbolic = [prettyprint(t, imports) for t in bsym.args
                if not empty(t) and not all(isinstance(d, int) for d in t.shape)]
    if len(static) + len(symbolic) < 2:
        return []
    storages, counts = [], []
    if static:
        storages.append(f"{{t.untyped_storage().data_ptr() for t in ({', '.join(static)},)}}")
        counts.append(str(len(static)))
    if symbolic:
        names = ", ".join(symbolic)
        storages.append(f"{{t.untyped_storage().data_ptr() for t in ({names},) if t.numel()}}")
        counts.append(f"sum(1 for t in ({names},) if t.numel())")
    return [f"if len({' | '.join(storages)}) != {' + '.join(counts)}: return None"]


def _check_len(bsym, imports):
    x, n = bsym.args
    name = prettyprint(x, imports)
    if n == 0:  # lists, tuples, dicts and sets: empty is falsy, and truth needs no call
        return [f"if {name}: return None"]
    return [f"if len({name}) != {n}: return None"]


def _check_arg_count(bsym, imports):
    args, kwargs, n, kwnames = bsym.args
    a, k = prettyprint(args, imports), prettyprint(kwargs, imports)
    kw_check = f"{k}.keys() != {{{', '.join(map(repr, kwnames))}}}" if kwnames else k
    return [f"if len({a}) != {n} or {kw_check}: return None"]


def _make_value(bsym, imports):
    (value,) = bsym.args
    return [f"{bsym.output.name} = {prettyprint(value, imports)}"]


def _store_attr(bsym, imports):
    obj, name, value = bsym.args
    return [f"{prettyprint(obj, imports)}.{name} = {prettyprint(value, imports)}"]


def _store_item(bsym, imports):
    obj, key, value = bsym.args
    return [f"{prettyprint(obj, imports)}[{prettyprint(key, imports)}] = {prettyprint(value, imports)}"]


def _store_cell(bsym, imports):
    cell, value = bsym.args
    return [f"{prettyprint(cell, imports)}.cell_contents = {prettyprint(value, imports)}"]


def _delete_attr(bsym, imports):
    obj, name = bsym.args
    return [f"del {prettyprint(obj, imports)}.{name}"]


def _delete_item(bsym, imports):
    obj, key = bsym.args
    return [f"del {prettyprint(obj, imports)}[{prettyprint(key, imports)}]"]


def _delete_cell(bsym, imports):
    (cell,) = bsym.args
    return [f"del {prettyprint(cell, imports)}.cell_contents"]


def _call_method(bsym, imports):
    obj, name, *args = bsym.args
    return [f"{prettyprint(obj, imports)}.{name}({', '.join(prettyprint(a, imports) for a in args)})"]


def _call_function(bsym, imports):
    fn, *args = bsym.args
    parts = [prettyprint(a, imports) for a in args] + [f"{k}={prettyprint(v, imports)}" for k, v in bsym.kwargs.items()]
    return [f"{prettyprint(fn, imports)}({', '.join(parts)})"]


def _raise_exception(bsym, imports):
    (template,) = bsym.args
    imports.need("import thunder.frontend.raised")
    return [f"raise thunder.frontend.raised.copy_of({prettyprint(template, imports)})"]


# prologue and epilogue prims, printed inline
for _name, _printer in {
    "unpack_attr": _unpack_attr, "unpack_item": _unpack_item, "unpack_keys": _unpack_keys, "unpack_cell": _unpack_cell,
    "unpack_dims": _unpack_dims, "unpack_lookup": _unpack_lookup, "unpack_type": _unpack_type,
    "unpack_deref": _unpack_deref,
    "check_tensor": _check_tensor, "check_tensors": _check_tensors, "check_strides": _check_strides,
    "check_tensor_method": _check_tensor_method,
    "check_literal": _check_literal, "check_is": _check_is,
    "check_type": _check_type, "check_len": _check_len, "check_contains": _check_contains,
    "check_hasattr": _check_hasattr, "check_no_hooks": _check_no_hooks,
    "check_state": _check_state,
    "check_grad_mode": _check_grad_mode, "check_autocast": _check_autocast, "check_arg_count": _check_arg_count,
    "check_distinct_storage": _check_distinct_storage,
    "make_value": _make_value, "store_attr": _store_attr, "store_item": _store_item, "store_cell": _store_cell,
    "delete_attr": _delete_attr, "delete_item": _delete_item, "delete_cell": _delete_cell,
    "call_method": _call_method, "call_function": _call_function, "raise_exception": _raise_exception,
}.items():
    ex.register_implementation(f"prims.{_name}", _python_symbol(_name, _printer))


@hookimpl
def thunder_executors():
    return [ex]
