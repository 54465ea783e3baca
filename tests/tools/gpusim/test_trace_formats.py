"""Every trace layout the Accel-Sim tracer and post-processor write, on hand-made fixtures.

Fixtures (tests/fixtures/traces/):
    v3_grouped/           tracer v3 .traceg: no immediates, no lineinfo
    v4_raw/               tracer v4 raw .trace: 4 leading fields (block xyz, warp)
    v5_grouped/           tracer v5 .traceg, plus .xz with lineinfo and untrusted nregs
    v5_clusters_grouped/  current post-processing: cluster id/cta/rank lines; kernel 2 .xz
    v5_clusters_raw/      current tracer: 11 leading fields; kernelslist; kernel 2 .trace.xz
The two cluster folders hold the same program: a vector add over n = 100 (grid 2 x 64) whose
bounds check ``@P0 EXIT`` is predicated off in warps 0-2 and retires 28 lanes of warp 3, then a
kernel reading what the first wrote.
"""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from kernelwright.errors import TraceFormatError
from kernelwright.tools.gpusim.records import ClusterPosition, TraceInstruction, WarpStream
from kernelwright.tools.gpusim.traces import (
    MemcpyCommand,
    TraceDirWriter,
    TraceKernelFile,
    iter_kernels,
    read_trace_dir,
)

FIXTURES = Path(__file__).parents[2] / "fixtures" / "traces"
A, B, C = 0x7F1000000000, 0x7F1000100000, 0x7F1000200000


def _warps(path: Path) -> list[list[WarpStream]]:
    return [list(k.warps()) for k in iter_kernels(path)]


def test_v3_grouped_lines_without_immediates():
    (k,) = iter_kernels(FIXTURES / "v3_grouped")
    assert k.version == 3 and k.grouped and not k.lineinfo
    w0, w1 = k.warps()
    mov, ldg, sts, bar, lds, exit_ = w0.instructions
    assert mov.dests == ("R1",) and mov.immediate == 0 and bar.opcode == "BAR.SYNC"
    assert ldg.addresses == tuple(0x7F2AD4000000 + 4 * i for i in range(32))
    assert lds.mask == 0xFFFF and lds.addresses == tuple(8 * i for i in range(16))
    assert w1.instructions[4].mask == 0 and w1.instructions[4].addresses == ()
    assert exit_.opcode == "EXIT" and w0.cluster is None


def test_current_grouped_format_reads_cluster_lines():
    k1, k2 = _warps(FIXTURES / "v5_clusters_grouped")
    assert [(w.cta, w.warp_id) for w in k1] == [((0, 0, 0), 0), ((0, 0, 0), 1),
                                                 ((1, 0, 0), 0), ((1, 0, 0), 1)]
    assert k1[2].cluster == ClusterPosition((1, 0, 0), (0, 0, 0), 0)
    assert [len(w.instructions) for w in k1] == [11, 11, 11, 11]
    exit_mask = [w.instructions[4].mask for w in k1]
    assert exit_mask == [0, 0, 0, 0xFFFFFFF0]  # @P0 EXIT: off, off, off, 28 lanes retire
    ldg = k1[3].instructions[6]
    assert ldg.mask == 0xF and ldg.addresses == tuple(A + 4 * (96 + i) for i in range(4))
    assert len(k2) == 4 and k2[0].instructions[6].addresses[0] == C  # .xz, lineinfo


def test_current_raw_format_has_eleven_leading_fields_and_matches_grouped():
    grouped = _warps(FIXTURES / "v5_clusters_grouped")
    raw_kernels = list(iter_kernels(FIXTURES / "v5_clusters_raw"))
    assert [k.path.name for k in raw_kernels] == ["kernel-1.trace", "kernel-2.trace.xz"]
    assert not raw_kernels[0].grouped and raw_kernels[1].lineinfo
    raw = [list(k.warps()) for k in raw_kernels]
    assert raw == grouped  # same warps, instructions and cluster positions


def test_tracer_kernelslist_names_raw_files_and_memcpys():
    items = list(read_trace_dir(FIXTURES / "v5_clusters_raw"))
    assert items[:2] == [MemcpyCommand("MemcpyHtoD", A, 400), MemcpyCommand("MemcpyHtoD", B, 400)]
    assert [type(i).__name__ for i in items[2:]] == ["TraceKernelFile"] * 2


def test_raw_lines_with_print_core_id_and_lineinfo(tmp_path: Path):
    header = (FIXTURES / "v4_raw" / "kernel-1.trace").read_text().split("\n\n")[0]
    header = header.replace("enable lineinfo = 0", "enable lineinfo = 1")
    lines = ["0 0 0 0 3 7 12 0000 ffffffff 1 R1 MOV 0 0",  # block xyz, warp, sm, warp in sm
             "0 0 0 1 3 8 12 0000 ffffffff 1 R1 MOV 0 0",
             "0 0 0 0 3 7 13 0010 0000ffff 0 STG.E 2 R2 R1 4 1 0x7f0000000000 4 0"]
    path = tmp_path / "kernel-1.trace"
    path.write_text(header + "\n\n" + "\n".join(lines) + "\n")
    w0, w1 = TraceKernelFile(path).warps()
    assert [i.opcode for i in w0.instructions] == ["MOV", "STG.E"] and len(w1.instructions) == 1
    assert w0.instructions[1].addresses[15] == 0x7F0000000000 + 60


def test_raw_ldgsts_pairs_keep_one_line_as_the_post_processor_does(tmp_path: Path):
    header = (FIXTURES / "v4_raw" / "kernel-1.trace").read_text().split("\n\n")[0]
    lines = ["0 0 0 0 0 0 0 0 0 0 0 0010 ffffffff 0 LDGSTS.E 1 R2 4 1 0x7f0000000000 4 0",
             "0 0 0 0 0 0 0 0 0 0 0 0010 ffffffff 0 LDGSTS.E 1 R2 4 1 0x100 4 0",
             "0 0 0 0 0 0 0 0 0 0 0 0020 ffffffff 0 EXIT 0 0 0"]
    path = tmp_path / "kernel-1.trace"
    path.write_text(header + "\n\n" + "\n".join(lines) + "\n")
    (w,) = TraceKernelFile(path).warps()
    assert [i.opcode for i in w.instructions] == ["LDGSTS.E", "EXIT"]
    assert w.instructions[0].addresses[0] == 0x100  # the second of the pair is kept


def test_tma_address_modes(tmp_path: Path):
    text = (FIXTURES / "v5_grouped" / "kernel-1.traceg").read_text().split("#BEGIN_TB")[0]
    body = ("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n"
            "0010 00000001 0 UTMALDG.2D 1 R4 128 3 2 0x7f0000000000 0x7f0000000080 0\n"
            "0020 00000001 0 UTMALDG.2D 1 R4 128 4 0x7f0000001000 3 256 256 0\n#END_TB\n")
    path = tmp_path / "kernel-1.traceg"
    path.write_text(text + body)
    (w,) = TraceKernelFile(path).warps()
    assert w.instructions[0].addresses == (0x7F0000000000, 0x7F0000000080)
    base = 0x7F0000001000
    assert w.instructions[1].addresses == (base, base + 256, base + 512)


def test_writer_round_trips_cluster_positions(tmp_path: Path):
    (k,) = [k for k in iter_kernels(FIXTURES / "v5_clusters_grouped")][:1]
    streams = list(k.warps())
    with TraceDirWriter(tmp_path, xz=True) as w:
        w.begin_kernel(k.info)
        for s in streams:
            w.warp(s)
    back = list(next(iter_kernels(tmp_path)).warps())
    assert back == streams
    assert "cluster rank = 0" in lzma.open(tmp_path / "kernel-1.traceg.xz", "rt").read()


# ------------------------------------------------------------------ malformed input
HEADER = (FIXTURES / "v5_clusters_grouped" / "kernel-1.traceg").read_text().split("#BEGIN_TB")[0]


def _grouped_with(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "kernel-1.traceg"
    path.write_text(HEADER + body)
    return path


GOOD = "0000 ffffffff 1 R0 S2R 0 0 0\n"


@pytest.mark.parametrize(("body", "line", "expected"), [
    ("#BEGIN_TB\nthread block = 0,0,0\ncluster id = 0,0\n", 3, "'cluster id = x,y,z'"),
    ("#BEGIN_TB\nthread block = 0,0,0\ncluster rank = one\n", 3, "'cluster rank = n'"),
    ("#BEGIN_TB\nthread block = 0,0,0\n" + GOOD, 3, "'warp = n' before instruction"),
    ("#BEGIN_TB\nthread block = 0,0,0\nwarp = x\n", 3, "'warp = n' \\(an int\\)"),
    ("thread block = 0,0,0\n", 1, "'#BEGIN_TB'"),
    ("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n" + GOOD + "#END_TB\n", 3,
     "declares insts = 2 but has 1"),
    ("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n" + GOOD + "#BEGIN_TB\n", 5, "'#END_TB'"),
    ("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n0000 ffffffff 1 R0 S2R 0\n", 4,
     "field 7: expected mem_width"),
    ("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n0000 fffzffff 1 R0 S2R 0 0 0\n", 4,
     "field 2: expected a hex active mask"),
    ("#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n0060 0000000f 1 R4 LDG.E 1 R2 4 0 0x1 0\n",
     4, "mode 0 needs 4 address fields"),
])
def test_malformed_grouped_input_names_file_line_and_expectation(
        tmp_path: Path, body: str, line: int, expected: str):
    """``line``: where the error is, counted from the first line after the header."""
    path = _grouped_with(tmp_path, body)
    line += HEADER.count("\n")  # ``line`` counts from the first body line
    with pytest.raises(TraceFormatError, match=rf"kernel-1.traceg:{line}: .*{expected}"):
        list(TraceKernelFile(path).warps())


def test_truncated_grouped_file_is_an_error(tmp_path: Path):
    path = _grouped_with(tmp_path, "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n" + GOOD)
    with pytest.raises(TraceFormatError, match="ends inside a thread block"):
        list(TraceKernelFile(path).warps())


def test_malformed_raw_input_names_file_line_and_expectation(tmp_path: Path):
    header = (FIXTURES / "v4_raw" / "kernel-1.trace").read_text().split("\n\n")[0]
    path = tmp_path / "kernel-1.trace"
    path.write_text(header + "\n\n0 0 0 0 0 0000 ffffffff 1 R1 MOV 0 0\n")  # 5 fields
    with pytest.raises(TraceFormatError, match=r"kernel-1.trace:16: expected a raw trace line"):
        list(TraceKernelFile(path).warps())
    path.write_text(header + "\n\n0 0 0 0 0000 ffffffff 1 R1 MOV 0 0\n"
                    "0 0 0 0 0010 ffffffff 1 R1 MOV 2 R3\n")
    with pytest.raises(TraceFormatError, match=r"trace:17: .*field 9: expected mem_width"):
        list(TraceKernelFile(path).warps())


def test_unknown_kernelslist_command_is_an_error(tmp_path: Path):
    (tmp_path / "kernelslist.g").write_text("MemcpyHtoD,0x1000,64\nlaunch something\n")
    with pytest.raises(TraceFormatError, match=r"kernelslist.g:2: expected 'MemcpyHtoD"):
        list(read_trace_dir(tmp_path))


def test_in_memory_streams_default_to_no_cluster():
    w = WarpStream((0, 0, 0), 0, (TraceInstruction(0, 1, "EXIT"),))
    assert w.cluster is None
