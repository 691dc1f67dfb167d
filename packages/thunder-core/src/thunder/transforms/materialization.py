"""``MaterializationTransform``: a model built on the meta device gets real parameters when jitted.

``thunder.jit(model_on_meta, transforms=[MaterializationTransform("cpu", init=...)])`` replaces every
parameter and buffer on the meta device by an uninitialized tensor on ``device`` (keeping ``requires_grad``
and tied weights tied), then initializes them with ``init``:

- ``MaterializationTransform.init_from_original_module_init()``: each submodule's ``reset_parameters()``
  (its own initialization, as if it had been built on the device);
- ``MaterializationTransform.init_from_original_state_dict(sd)`` / ``init_from_transformed_state_dict(sd)``:
  ``load_state_dict(sd)`` (the two are the same here: no transform changes parameter names or shapes).

The jitted module's parameters are the original module's (thunder.jit never copies them), so the original
module is materialized too.
"""

from __future__ import annotations

from thunder.transforms.transform import Transform

__all__ = ["MaterializationTransform"]


class MaterializationTransform(Transform):
    def __init__(self, device, *, init):
        import torch

        self.device = torch.device(device)
        self.init = init
        self.have_materialized: set[str] = set()

    def transform_module(self, model) -> None:
        import torch

        module = model._model
        replaced: dict[int, torch.Tensor] = {}  # id of a meta tensor -> its materialized tensor (ties stay tied)
        for prefix, sub in module.named_modules(remove_duplicate=False):
            for table in (sub._parameters, sub._buffers):
                for name, t in list(table.items()):
                    if t is None or t.device.type != "meta":
                        continue
                    new = replaced.get(id(t))
                    if new is None:
                        new = torch.empty_like(t, device=self.device)
                        if isinstance(t, torch.nn.Parameter):
                            new = torch.nn.Parameter(new, requires_grad=t.requires_grad)
                        replaced[id(t)] = new
                    table[name] = new
                    self.have_materialized.add(f"{prefix}.{name}" if prefix else name)
        self.init(self, model)

    @staticmethod
    def init_from_original_module_init():
        def init(transform: MaterializationTransform, model) -> None:
            import torch

            with torch.no_grad():
                for prefix, sub in model._model.named_modules():
                    own = [n for n, _ in (*sub.named_parameters(recurse=False), *sub.named_buffers(recurse=False))]
                    if any((f"{prefix}.{n}" if prefix else n) in transform.have_materialized for n in own):
                        reset = getattr(sub, "reset_parameters", None)
                        if reset is None:
                            raise TypeError(f"cannot initialize the materialized parameters of {prefix or 'the model'} "
                                            f"({type(sub).__name__}): it has no reset_parameters(); use "
                                            "init_from_original_state_dict(state_dict) instead")
                        reset()

        return init

    @staticmethod
    def init_from_original_state_dict(state_dict):
        def init(transform: MaterializationTransform, model) -> None:
            model._model.load_state_dict(state_dict)

        return init

    init_from_transformed_state_dict = init_from_original_state_dict
