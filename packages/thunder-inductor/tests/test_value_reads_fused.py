"""A program split where it reads a value from tensor data (issue 20), with Inductor fusing each segment: the
segments are cut before dispatch, so no fused region spans a read; outputs and gradients are eager's."""

import warnings

import torch

import thunder
from thunder.examine.fusions import get_fusion_symbols


def _routing(x, w):
    h = (x * w).sin() * 2 + 1  # fusible before the read
    counts = (h > 1).sum(0).tolist()  # the split: Python needs the values
    out = h.cos() * 3
    for i, c in enumerate(counts):  # a loop over values read from data
        if c > 1:
            out = out + (h[:, i:i + 1] * c).tanh()  # fusible after the read
    return out


def test_each_segment_is_fused_apart_and_the_split_program_matches_eager(inductor_ex):
    jfn = thunder.jit(_routing, executors=[inductor_ex])
    w = torch.randn(6, requires_grad=True)
    for seed in range(3):  # other counts: other continuations
        x = torch.randn(5, 6, generator=torch.Generator().manual_seed(seed))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = jfn(x, w)
        expected = _routing(x, w)
        torch.testing.assert_close(out, expected)
        torch.testing.assert_close(torch.autograd.grad(out.sum(), w), torch.autograd.grad(expected.sum(), w))
    segments = [t for t in thunder.last_traces(jfn) if t.provenance and "Segment " in str(t.provenance)]
    assert len(segments) == 2
    # the last trace of each segment (its execution trace) holds its fused regions: some on each side of the read
    finals = {t.fn_name: t for t in thunder.last_traces(jfn) if t.fn_name.startswith("segment")}
    assert sorted(finals) == ["segment0", "segment1"]
    assert all(get_fusion_symbols(t) for t in finals.values()), [str(t) for t in finals.values()]
