"""``thunder.Transform``: a user transform with hooks at fixed points of compilation.

``thunder.jit(fn, transforms=[...])`` takes instances of this class (lightning-thunder's interface) and plain
callables ``trace -> trace``. A plain callable is the same as a Transform implementing only
``transform_trace_post_optimization`` for the forward trace. Each hook has a no-op default, so a subclass
implements only the points it needs:

- ``transform_module(model)``: once, when ``thunder.jit(module)`` creates the ThunderModule;
- ``transform_traces_pre_prologue(prologue, computation, epilogue)``: on each compilation, with the prologue
  (not yet lowered to Python checks), the computation before autograd and executor dispatch, and the epilogue
  (None when the program has no side effects); returns the three, changed or not;
- ``transform_backward_pre_lowering(backward, inputs=..., differentiable_inputs=..., executors_list=...)``: the
  backward trace of the autograd split before executor dispatch, with the values the computation's arguments were
  traced from and the positions among them of the backward's outputs (gradients); returns the trace to lower;
- ``transform_trace_post_optimization(trace, executors_list=...)``: the forward trace after executor dispatch,
  and the backward trace likewise when there is one.
"""

from __future__ import annotations

__all__ = ["Transform", "split_transforms"]


class Transform:
    def transform_module(self, model) -> None:
        pass

    def transform_traces_pre_prologue(self, prologue_trace, computation_trace, epilogue_trace, **kwargs):
        return prologue_trace, computation_trace, epilogue_trace

    def transform_backward_pre_lowering(self, backward_trace, *, inputs, differentiable_inputs, **kwargs):
        return backward_trace

    def transform_trace_post_optimization(self, computation_trace, **kwargs):
        return computation_trace

    def transform_state_dict_for_submodule(self, model, submodule_name: str, state_dict: dict) -> dict:
        return state_dict

    def reverse_transform_state_dict_for_submodule(self, model, submodule_name: str, state_dict: dict) -> dict:
        return state_dict

    def __repr__(self) -> str:
        return f"{type(self).__module__}.{type(self).__name__}()"


def split_transforms(transforms) -> tuple[tuple, tuple]:
    """(Transform objects, plain ``trace -> trace`` callables) of a ``transforms=`` list, each in order."""
    objects, callables = [], []
    for t in transforms or ():
        if isinstance(t, Transform):
            objects.append(t)
        elif callable(t):
            callables.append(t)
        else:
            raise TypeError(f"transforms= takes thunder.Transform instances or callables trace -> trace, "
                            f"got {type(t).__name__}")
    return tuple(objects), tuple(callables)
