// What a CPU region's C++ file includes, precompiled as one header (thunder_inductor/pch.py): the C++ wrapper's
// header, which Inductor precompiles itself, and its kernels' header, which it parses in every file.
#include <torch/csrc/inductor/cpp_wrapper/cpu.h>
#include <torch/csrc/inductor/cpp_prefix.h>
