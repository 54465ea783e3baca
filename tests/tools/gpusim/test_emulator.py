"""The PTX emulator against numpy on small nvcc-compiled kernels."""

from __future__ import annotations

import numpy as np
import pytest

from kernelwright.errors import LaunchError
from kernelwright.tools.gpusim import TraceSampling, launch
from kernelwright.tools.gpusim.records import KernelInfo, WarpStream

pytestmark = pytest.mark.requires_nvcc
RNG = np.random.default_rng(0)


class ListSink:
    def __init__(self) -> None:
        self.infos: list[KernelInfo] = []
        self.warps: list[WarpStream] = []
        self.ended = 0

    def begin_kernel(self, info: KernelInfo) -> None:
        self.infos.append(info)

    def warp(self, stream: WarpStream) -> None:
        self.warps.append(stream)

    def end_kernel(self) -> None:
        self.ended += 1


def test_vector_add_partial_last_block(emu_ptx):
    n = 1000
    x, y = RNG.random(n, np.float32), RNG.random(n, np.float32)
    out = np.zeros(n, np.float32)
    stats = launch(emu_ptx, "vadd", (4,), (256,), [x, y, out, n])
    np.testing.assert_array_equal(out, x + y)
    assert stats.global_load_bytes == 2 * 4 * n and stats.global_store_bytes == 4 * n
    assert stats.warp_instructions == 32 * 14 + (stats.warp_instructions - 32 * 14)
    assert stats.thread_instructions < 32 * stats.warp_instructions


def test_shared_memory_reduction_with_barriers(emu_ptx):
    n = 1000
    x = RNG.random(n, np.float32)
    out = np.zeros(4, np.float32)
    stats = launch(emu_ptx, "block_sum", (4,), (256,), [x, out, n])
    ref = np.pad(x, (0, 24)).reshape(4, 256).sum(axis=1)
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    assert stats.barriers > 0 and stats.shared_store_bytes > 0


def test_warp_shuffles_and_votes(emu_ptx):
    n = 200  # partial warps at the end: lanes >= n read 0
    x = RNG.random(n, np.float32)
    out = np.zeros(8, np.float32)
    ballots = np.zeros(24, np.uint32)
    launch(emu_ptx, "warp_sum", (1,), (256,), [x, out, ballots, n])
    xs = np.pad(x, (0, 56)).reshape(8, 32)
    sums = xs.sum(axis=1)
    # lane 0: first=sum(lane0); up(lane0) keeps own value; bfly(1) of lane0 reads lane1 = sum
    np.testing.assert_allclose(out, sums, rtol=1e-5)
    bits = ((xs > 0.5) << np.arange(32)).sum(axis=1).astype(np.uint32)
    np.testing.assert_array_equal(ballots[0::3], bits)
    np.testing.assert_array_equal(ballots[1::3], (xs > 0.99).any(axis=1))
    np.testing.assert_array_equal(ballots[2::3], np.arange(8) * 32 + 31 < n)


def test_divergence_reconverges_at_post_dominator(emu_ptx):
    n = 64
    x = RNG.integers(0, 100, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    sink = ListSink()
    stats = launch(emu_ptx, "diverge", (1,), (64,), [x, out, n], trace=sink)
    lane = np.arange(n) % 32
    low = x * 3 + np.where(x & 1, 7, -5)
    high = np.array([sum(k * v for k in range(v & 7)) for v in x])
    np.testing.assert_array_equal(out, np.where(lane < 16, low, high) + 1)
    assert stats.divergent_branches > 0
    assert len(sink.warps) == 2 and sink.ended == 1
    masks = [i.mask for i in sink.warps[0].instructions]
    assert 0x0000FFFF in masks and masks[-1] == 0xFFFFFFFF  # halves split, all meet at ret
    store = [i for i in sink.warps[0].instructions if i.opcode.startswith("st.global")]
    assert len(store) == 1 and store[0].mask == 0xFFFFFFFF  # one reconverged store
    assert store[0].addresses[1] - store[0].addresses[0] == 4 and store[0].mem_width == 4


def test_atomics_serialise_conflicting_lanes(emu_ptx):
    n = 700
    keys = RNG.integers(0, 16, n).astype(np.int32)
    hist = np.zeros(17, np.int32)
    mx = np.full(1, -1, np.int32)
    counter = np.zeros(1, np.uint32)
    slots = np.full(n, -1, np.int32)
    fsum = np.zeros(1, np.float32)
    launch(emu_ptx, "atomics", (3,), (256,), [keys, hist, mx, counter, slots, fsum, n])
    np.testing.assert_array_equal(hist[:16], np.bincount(keys, minlength=16))
    assert hist[16] == 1  # exactly one CAS from 0 succeeded
    assert mx[0] == max(int(k) * 1000 + i % 1000 for i, k in enumerate(keys))
    assert counter[0] == n and sorted(slots.tolist()) == list(range(n))  # unique tickets
    assert fsum[0] == pytest.approx(0.5 * n)


def test_tiled_gemm_with_shared_memory(emu_ptx):
    m, k, nn = 40, 50, 36
    a, b = RNG.random((m, k), np.float32), RNG.random((k, nn), np.float32)
    c = np.zeros((m, nn), np.float32)
    launch(emu_ptx, "matmul_tiled", (3, 3), (16, 16), [a, b, c, m, nn, k])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_softmax_with_dynamic_shared_memory(emu_ptx):
    rows, cols = 6, 300
    x = RNG.standard_normal((rows, cols)).astype(np.float32)
    y = np.zeros_like(x)
    launch(emu_ptx, "softmax_rows", (rows,), (128,), [x, y, cols], shared_bytes=128 * 4)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_layernorm_rows(emu_ptx):
    rows, cols = 5, 200
    x = RNG.standard_normal((rows, cols)).astype(np.float32)
    g, b = RNG.random(cols, np.float32), RNG.random(cols, np.float32)
    y = np.zeros_like(x)
    launch(emu_ptx, "layernorm_rows", (rows,), (128,), [x, g, b, y, cols, 1e-5])
    mu, var = x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True)
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-5) * g + b, rtol=1e-4, atol=1e-5)


def test_local_memory_array(emu_ptx):
    n = 100
    x = RNG.integers(-50, 50, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    launch(emu_ptx, "local_array", (1,), (128,), [x, out, n])
    np.testing.assert_array_equal(out, x * (x & 7))


def test_conversions_and_math(emu_ptx):
    n = 64
    x = (RNG.standard_normal(n) * 4).astype(np.float32)
    iout, fout = np.zeros(2 * n, np.int32), np.zeros(2 * n, np.float32)
    bout, dout = np.zeros(n, np.uint8), np.zeros(n, np.float64)
    launch(emu_ptx, "conversions", (1,), (64,), [x, iout, fout, bout, dout, n])
    i = np.arange(n)
    np.testing.assert_array_equal(iout[0::2], np.rint(x).astype(np.int32))
    np.testing.assert_array_equal(iout[1::2], np.trunc(x).astype(np.int32))
    f0 = np.floor(x) + np.ceil(x) * 0.5 + np.minimum(x, 1.5) + np.sqrt(np.abs(x))
    np.testing.assert_allclose(fout[0::2], f0, rtol=1e-6)
    f1 = np.clip(x, 0, 1) + (i * 7 % 5) + np.tanh(x) + np.log2(np.abs(x) + 1)
    np.testing.assert_allclose(fout[1::2], f1, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(bout, (i * 37) % 256)
    np.testing.assert_allclose(dout, x.astype(np.float64) * 3 + (i - 5) / 7.0)


def test_trace_sampling_every_kth_cta(emu_ptx):
    n = 8 * 64
    x, y, out = np.ones(n, np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
    sink = ListSink()
    launch(emu_ptx, "vadd", (8,), (64,), [x, y, out, n], trace=sink,
           sampling=TraceSampling(cta_every=4, warps_per_cta=1))  # fmt: skip
    assert [w.cta for w in sink.warps] == [(0, 0, 0), (4, 0, 0)]
    assert sink.infos[0].grid == (8, 1, 1) and sink.infos[0].name == "vadd"
    assert 0 < sink.infos[0].nregs < 64  # ptxas's allocation, not the PTX virtual count
    pcs = [i.pc for i in sink.warps[0].instructions]
    assert pcs == sorted(pcs) and all(p % 16 == 0 for p in pcs)
    ld = [i for i in sink.warps[1].instructions if i.opcode == "ld.global.f32"][0]
    assert len(ld.addresses) == 32 and ld.dests and ld.srcs


def test_out_of_bounds_access_is_reported(emu_ptx):
    x, y, out = np.ones(10, np.float32), np.ones(10, np.float32), np.zeros(10, np.float32)
    with pytest.raises(LaunchError, match="outside every buffer"):
        launch(emu_ptx, "vadd", (1,), (32,), [x, y, out, 32])


def test_unknown_kernel_lists_the_choices(emu_ptx):
    with pytest.raises(LaunchError, match="block_sum"):
        launch(emu_ptx, "nope", (1,), (32,), [])


def _i32(v):
    return np.asarray(v, np.int64).astype(np.int32)


def test_integer_operations(emu_ptx):
    n = 96
    a = RNG.integers(-(2**31), 2**31 - 1, n).astype(np.int32)
    b = RNG.integers(-(2**31), 2**31 - 1, n).astype(np.int32)
    a[:4] = [0, -1, 2**31 - 1, -(2**31)]
    out, wide = np.zeros(12 * n, np.uint32), np.zeros(2 * n, np.int64)
    launch(emu_ptx, "int_ops", (1,), (128,), [a, b, out, wide, n])
    o = out.reshape(n, 12).astype(np.int64)
    x, y = a.astype(np.int64), b.astype(np.int64)
    ux, uy = x & 0xFFFFFFFF, y & 0xFFFFFFFF
    np.testing.assert_array_equal(o[:, 0], [bin(v).count("1") for v in ux])
    np.testing.assert_array_equal(o[:, 1], [32 - int(v).bit_length() for v in ux])
    np.testing.assert_array_equal(o[:, 2], [int(f"{v:032b}"[::-1], 2) for v in ux])
    yo = y | 1
    q = np.trunc(x / yo).astype(np.int64)
    np.testing.assert_array_equal(o[:, 3], q & 0xFFFFFFFF)
    np.testing.assert_array_equal(o[:, 4], (x - q * yo) & 0xFFFFFFFF)
    np.testing.assert_array_equal(o[:, 5], (ux // (uy | 1) + ux % (uy | 1)) & 0xFFFFFFFF)
    np.testing.assert_array_equal(o[:, 6], (ux.astype(np.uint64) * uy.astype(np.uint64)) >> 32)
    np.testing.assert_array_equal(o[:, 7], ((x * y) >> 32) & 0xFFFFFFFF)
    mm = np.maximum(x, y) - np.minimum(x, y) + np.abs(_i32(x).astype(np.int64))
    np.testing.assert_array_equal(o[:, 8], mm & 0xFFFFFFFF)
    sh = (ux >> (uy & 31)) ^ ((ux << (uy & 7)) & 0xFFFFFFFF) ^ ((x >> (uy & 31)) & 0xFFFFFFFF)
    np.testing.assert_array_equal(o[:, 9], sh)
    by = np.stack([(ux >> s) & 0xFF for s in (0, 8, 16, 24)] +
                  [(uy >> s) & 0xFF for s in (0, 8, 16, 24)], 1)  # fmt: skip
    perm = by[:, 0] | by[:, 4] << 8 | by[:, 1] << 16 | by[:, 5] << 24
    np.testing.assert_array_equal(o[:, 10], perm)
    sc = ((x & 0xFF) ^ 0x80) - 0x80
    np.testing.assert_array_equal(o[:, 11], (sc + ((y * 3) & 0xFFFF)) & 0xFFFFFFFF)
    lx, ly = x * 1000003, y
    ref0 = [int(abs(p) // abs(q_) * (1 if (p < 0) == (q_ < 0) else -1)) + (p >> 7)
            + ((p & (2**64 - 1)) % 97) for p, q_ in zip(lx.tolist(), (ly | 1).tolist(),
                                                        strict=True)]  # fmt: skip
    np.testing.assert_array_equal(wide[0::2], np.array(ref0, dtype=object).astype(np.int64))
    ref1 = []
    for p, q_ in zip(lx.tolist(), ly.tolist(), strict=True):
        m = (q_ * 123456789 + 2**63) % 2**64 - 2**63
        hi = (p * m) >> 64
        ref1.append(hi + bin(p & (2**64 - 1)).count("1") + 64 - (p & (2**64 - 1)).bit_length())
    np.testing.assert_array_equal(wide[1::2], np.array(ref1, dtype=np.int64))


def test_half_precision(emu_ptx):
    n = 50
    x = RNG.standard_normal(n).astype(np.float32)
    y, h = np.zeros(n, np.float32), np.zeros(n, np.float16)
    launch(emu_ptx, "half_ops", (1,), (64,), [x, y, h, n])
    a = x.astype(np.float16)
    c = (a * np.float16(0.5) + np.float16(0.5)).astype(np.float16)
    np.testing.assert_array_equal(h, c)
    np.testing.assert_allclose(y, c.astype(np.float32) + np.maximum(a, np.float16(0.5)))


def test_generic_addresses_reach_shared_and_global(emu_ptx):
    g, out = np.arange(64, dtype=np.float32) * 10, np.zeros(64, np.float32)
    launch(emu_ptx, "generic_ptr", (1,), (64,), [g, out, 64])
    i = np.arange(64)
    np.testing.assert_array_equal(out, np.where(i & 1, i + 1.0, i * 10 + 1.0))
    np.testing.assert_array_equal(g[0::2], i[0::2] * 10 + 1.0)  # global written in place


def test_funnel_shift_dp4a_bf16_and_cp_async(emu_ptx):
    import torch

    n = 64
    a = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    f = RNG.standard_normal(n).astype(np.float32)
    out, fo = np.zeros(3 * n, np.uint32), np.zeros(2 * n, np.float32)
    bf = torch.zeros(n, dtype=torch.bfloat16)
    launch(emu_ptx, "misc_ops", (1,), (64,), [a, b, f, out, bf, fo, n])
    pair = (b.astype(object) << 32) | a.astype(object)
    sh = np.arange(n) & 31
    left = [(int(p) << int(s)) >> 32 & 0xFFFFFFFF for p, s in zip(pair, sh, strict=True)]
    right = [(int(p) >> int(s)) & 0xFFFFFFFF for p, s in zip(pair, sh, strict=True)]
    np.testing.assert_array_equal(out[0::3], left)
    np.testing.assert_array_equal(out[1::3], right)
    dots = (a.view(np.int8).reshape(n, 4).astype(np.int64)
            * b.view(np.int8).reshape(n, 4).astype(np.int64)).sum(1) + 7  # fmt: skip
    np.testing.assert_array_equal(out[2::3], dots & 0xFFFFFFFF)
    ref = torch.from_numpy(f).to(torch.bfloat16)
    assert torch.equal(bf, ref)
    np.testing.assert_array_equal(fo[:n], ref.float().numpy() * 2)
    np.testing.assert_array_equal(fo[n:], f[::-1])  # cp.async filled shared memory


def test_printf_is_skipped_not_fatal(emu_ptx):
    x = np.arange(40, dtype=np.float32)
    launch(emu_ptx, "with_printf", (1,), (64,), [x, 40])
    np.testing.assert_array_equal(x, np.arange(40) * 2)
