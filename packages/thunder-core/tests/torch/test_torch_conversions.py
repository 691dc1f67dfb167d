import pytest
import torch
from torchlang_helpers import RUNNERS, b8, check, check_raises, f32, i64

CASES = {
    "to_dtype": (lambda x: x.to(torch.float64), f32(3)),
    "to_dtype_kw": (lambda x: x.to(dtype=torch.int32), f32(3) * 10),
    "to_device_dtype": (lambda x: x.to("cpu", torch.float16), f32(3)),
    "to_other": (lambda x, y: x.to(y), f32(3), i64(2)),
    "to_same_is_identity": (lambda x: x.to(torch.float32).to("cpu") * 2, f32(3)),
    "type_as": (lambda x, y: x.type_as(y), i64(3), f32(2)),
    "float": (lambda x: x.float(), i64(3)),
    "double": (lambda x: x.double(), f32(3)),
    "half": (lambda x: x.half(), f32(3)),
    "bfloat16": (lambda x: x.bfloat16(), f32(3)),
    "int": (lambda x: x.int(), f32(3) * 10),
    "long": (lambda x: x.long(), b8(3)),
    "bool": (lambda x: x.bool(), i64(4)),
    "type_dtype": (lambda x: x.type(torch.float64), i64(3)),
    "type_string": (lambda x: x.type("torch.LongTensor"), f32(3) * 10),
    "type_name": (lambda x: (x.type(), x * 1), f32(3)),
    "cpu": (lambda x: x.cpu() + 1, f32(3)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_conversion(name):
    fn, *args = CASES[name]
    check(fn, *args)


def test_to_prints_one_call():
    traces = check(lambda x: x.to(torch.float64), f32(3))
    assert "torch.Tensor.to(t0, dtype=torch.float64)" in traces["direct"].python()


@pytest.mark.parametrize("runner", list(RUNNERS))
def test_to_meta_device(runner):
    out, _ = RUNNERS[runner](lambda x: x.to("meta"), f32(2, 3))
    assert out.device.type == "meta" and out.shape == (2, 3) and out.dtype == torch.float32


def test_bad_type_string():
    check_raises(ValueError, lambda x: x.type("torch.NotATensor"), f32(2))
