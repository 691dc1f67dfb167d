"""The executor is found through the plugin hooks and says whether, and why not, it can run; ``import thunder``
and jitted programs work without nvFuser."""

import pytest
from thunder_nvfuser import availability
from thunder_nvfuser.availability import decide, wheel_name

from thunder.testing.executors import assert_default_only_if_available, assert_listed_with_availability, assert_registered


def test_registered_through_the_entry_point():
    assert_registered("nvfuser", "thunder_nvfuser.plugin", "fusion")


@pytest.mark.parametrize("torch_version, cuda_version, wheel", [
    ("2.10.0+cu130", "13.0", "nvfuser-cu130-torch210"),
    ("2.9.1+cu128", "12.8", "nvfuser-cu128-torch29"),
    ("2.11.0", "13.0", "nvfuser-cu130-torch211"),
])
def test_wheel_name(torch_version, cuda_version, wheel):
    assert wheel_name(torch_version, cuda_version) == wheel


# (torch, cuda, installed builds, devices, preload) -> (verdict, words the reason must contain)
DECISIONS = [
    (("2.13.0+cpu", None, [], 0, None), (False, ["CPU-only build", "nvfuser-cu<CUDA>-torch<version>"])),
    (("2.10.0+cu130", "13.0", ["nvfuser-cu130-torch210"], 0, None), (False, ["no CUDA device",
                                                                            "nvfuser-cu130-torch210"])),
    (("2.10.0+cu130", "13.0", ["nvfuser-cu130-torch210"], 1, None), (True, [])),
    (("2.11.0+cu130", "13.0", ["nvfuser-cu130-torch210"], 1, None),
     (False, ["built for torch 2.10 with CUDA 13.0", "torch 2.11.0+cu130", "pip uninstall nvfuser-cu130-torch210",
              "pip install nvfuser-cu130-torch211"])),
    (("2.10.0+cu128", "12.8", ["nvfuser-cu130-torch210"], 1, None),
     (False, ["CUDA 12.8", "pip install nvfuser-cu128-torch210"])),
    # the GPU test machine: torch 2.11 has no wheel; the nearest build is adapted by a preloaded shim
    (("2.11.0+cu130", "13.0", ["nvfuser-cu130-torch210"], 1, "/tmp/site/libc10_msglogger_shim.so"),
     (True, ["THUNDER_NVFUSER_PRELOAD=/tmp/site/libc10_msglogger_shim.so", "users install nvfuser-cu130-torch211"])),
    # no wheel metadata (nothing installed, or a source build): only importing can tell
    (("2.10.0+cu130", "13.0", [], 1, None), (None, [])),
]


@pytest.mark.parametrize("inputs, expected", DECISIONS, ids=[str(i) for i in range(len(DECISIONS))])
def test_decide(inputs, expected):
    torch_version, cuda_version, builds, devices, preload = inputs
    verdict, words = expected
    ok, reason = decide(torch_version, cuda_version, builds, devices=devices, preload=preload)
    assert ok is verdict, reason
    for w in words:
        assert w in reason, (w, reason)


def test_preload_is_loaded_before_nvfuser(monkeypatch):
    # the variable is read and the library loaded first: a missing one fails before the import is tried
    monkeypatch.setenv(availability.PRELOAD_VARIABLE, "/nonexistent/libshim.so")
    with pytest.raises(OSError, match="libshim.so"):
        availability.import_nvfuser()


def test_unavailable_here_says_why_and_thunder_still_runs():
    # as a user without nvFuser (or without a GPU) has it
    assert_default_only_if_available("nvfuser", reason_has=("nvfuser-cu", "no CUDA device"),
                                     drop_env=(availability.PRELOAD_VARIABLE,))


def test_listed_by_python_m_thunder_executors():
    assert_listed_with_availability("nvfuser")
