"""The PTX front end on real nvcc 13 output (a committed fixture) and on edge cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelwright.errors import PtxParseError, UnsupportedInstructionError
from kernelwright.tools.gpusim import launch
from kernelwright.tools.gpusim._cfg import reconvergence_points
from kernelwright.tools.gpusim.ptx import parse_instruction, parse_ptx

SAMPLE = (Path(__file__).parent / "data" / "sample_sm90.ptx").read_text()


@pytest.fixture(scope="module")
def module():
    return parse_ptx(SAMPLE)


def test_module_directives_and_entries(module):
    assert module.version == "9.0" and module.target == "sm_90" and module.address_size == 64
    assert list(module.kernels) == ["vadd", "red", "wred", "gelu", "dbl"]
    assert "__internal_trig_reduction_slowpathd" in module.functions
    names = {v.name: v for v in module.variables}
    assert names["dyn"].extern and names["dyn"].space == "shared"
    assert names["__cudart_sin_cos_coeffs"].size == 128
    assert names["__cudart_sin_cos_coeffs"].init[:2] == bytes([70, 210])


def test_params_have_types_and_offsets(module):
    p = module.kernels["dbl"].params
    assert [(x.type, x.offset, x.size) for x in p] == [
        ("u64", 0, 8), ("u64", 8, 8), ("u64", 16, 8), ("u8", 24, 1)]  # fmt: skip


def test_register_ranges_and_shared_declarations(module):
    k = module.kernels["red"]
    assert k.regs["%p5"] == "pred" and k.regs["%f9"] == "f32" and "%r15" not in k.regs
    assert k.regs["%rd6"] == "b64"
    (s,) = k.shared_vars()
    assert (s.name, s.size, s.align, s.extern) == ("_ZZ3redE1s", 1024, 4, False)
    assert k.labels["$L__BB1_3"] == 22


def test_instructions_predicates_vectors_addresses(module):
    k = module.kernels["dbl"]
    bra = next(i for i in k.instructions if i.pred == "%p1")
    assert bra.base == "bra" and bra.operands[0].name == "$L__BB4_10"
    vld = next(i for i in k.instructions if i.opcode == "ld.global.nc.v2.f64")
    assert vld.mods == ("global", "nc", "v2") and vld.types == ("f64",)
    assert [o.name for o in vld.operands[0].items] == ["%fd24", "%fd25"]
    addr = [i for i in k.instructions if i.opcode == "ld.global.nc.v2.f64"][1].operands[1]
    assert (addr.kind, addr.name, addr.offset) == ("addr", "%rd12", 16)
    cvt = next(i for i in k.instructions if i.opcode.startswith("cvt.rni"))
    assert cvt.mods == ("rni",) and cvt.types == ("s32", "f64")


def test_scoped_registers_are_renamed(module):
    f = module.functions["__internal_trig_reduction_slowpathd"]
    assert "%r0#2" in f.regs and "%r1" in f.regs  # inner %r1 shadows the outer one
    inner = next(i for i in f.instructions if i.opcode == "mad.lo.cc.u32")
    assert inner.operands[0].name.endswith("#2")


def test_operand_kinds():
    ins = parse_instruction("@!%p3 shfl.sync.down.b32 %r12|%p3, %r7, 0f3F800000, -1, 0xff")
    assert ins.pred == "%p3" and ins.pred_neg
    kinds = [o.kind for o in ins.operands]
    assert kinds == ["pair", "reg", "float", "int", "int"]
    assert ins.operands[3].value == -1 and ins.operands[4].value == 255
    sp = parse_instruction("mov.u32 %r1, %tid.x").operands[1]
    assert (sp.kind, sp.name) == ("special", "%tid.x")


def test_parse_error_names_the_line():
    bad = ".version 9.0\n.target sm_90\n.visible .entry k(\n.param .u64 p\n)\n{\n.reg .b32 x y;\n}"
    with pytest.raises(PtxParseError, match="line 7"):
        parse_ptx(bad)


def test_reconvergence_at_immediate_post_dominator(module):
    k = module.kernels["red"]
    rp = reconvergence_points(k)
    first_bra = next(i for i, x in enumerate(k.instructions) if x.base == "bra")
    assert rp[first_bra] == k.labels["$L__BB1_2"]
    loop_guard = next(i for i, x in enumerate(k.instructions) if x.pred == "%p3")
    assert rp[loop_guard] == k.labels["$L__BB1_5"]


def test_unsupported_instruction_names_instruction_kernel_and_line():
    x = np.array([3e10, 1.0])  # |x| >= 2^31 takes the slow path with a device-function call
    y = np.zeros(2)
    with pytest.raises(UnsupportedInstructionError) as err:
        launch(SAMPLE, "dbl", (1,), (32,), [x, y, np.int64(2), np.uint8(0)])
    msg = str(err.value)
    assert "'call.uni (retval0), __internal_trig_reduction_slowpathd" in msg
    assert "kernel dbl" in msg and "PTX line 388" in msg


def test_fixture_kernels_run_without_nvcc():
    n = 300
    x = np.linspace(-3, 3, n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    launch(SAMPLE, "gelu", (2,), (256,), [x, y, n])
    ref = 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(y, ref, atol=1e-6)
    xd, yd = np.linspace(0.1, 5, n), np.zeros(n)
    launch(SAMPLE, "dbl", (2,), (256,), [xd, yd, np.int64(n), np.uint8(2)])
    np.testing.assert_allclose(yd, np.sqrt(xd) / 3 + 2 + np.sin(xd), rtol=1e-14)
