"""The C++/OpenMP backend: the shared contract plus return types and flags."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from kernelwright.testing.backend_contract import BackendContract
from kernelwright.tools.backends.cpp import CppBackend, restype_of

VADD = """
extern "C" void vadd(const float* a, const float* b, float* out, int n) {
  #pragma omp parallel for
  for (int i = 0; i < n; ++i) out[i] = a[i] + b[i];
}
"""

TYPED = """
#include <cstdint>
extern "C" double dsum(const double* x, int64_t n) {
  double s = 0; for (int64_t i = 0; i < n; ++i) s += x[i]; return s;
}
extern "C" float twice(float v) { return 2 * v; }
extern "C" int64_t widen(int64_t v) { return v + 1; }
"""


class TestCppBackend(BackendContract):
    backend_name = "cpp"
    vector_add_source = VADD

    def launch_vector_add(self, module, a, b, out, n, *, wait=True):
        module.vadd(a, b, out, n)

    def test_return_types_follow_the_declaration(self, backend):
        lib = backend.load_inline(TYPED)
        assert lib.dsum(np.arange(10, dtype=np.float64), np.int64(10)) == 45.0
        assert lib.twice(1.25) == pytest.approx(2.5)
        assert lib.widen(ctypes.c_int64(2**40)) == 2**40 + 1

    def test_build_is_a_shared_object_on_disk(self, backend):
        result = backend.build(self.fresh(VADD))
        assert result.artifact is not None and result.artifact.endswith(".so")

    def test_launch_keywords_are_rejected(self, module):
        with pytest.raises(TypeError, match="launch keywords"):
            module.vadd(1, 2, 3, 4, global_size=(4,))


def test_custom_flags_replace_the_defaults(tmp_settings):
    backend = CppBackend(tmp_settings, flags=["-O1"])
    cmd = backend.command("a.cpp", "a.so")
    assert "-O1" in cmd and "-O3" not in cmd and "-shared" in cmd and "-fPIC" in cmd


@pytest.mark.parametrize(
    ("declared", "expected"),
    [("void", None), ("double", ctypes.c_double), ("float *", ctypes.c_void_p),
     ("int64_t", ctypes.c_int64), ("static inline int", ctypes.c_int)],
)
def test_restype_of(declared, expected):
    assert restype_of(declared) is expected
