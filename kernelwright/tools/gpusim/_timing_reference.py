"""The event loop of the reference timing model, in plain Python (the specification).

:mod:`._timing_compiled` runs the same rules compiled with numba and must give identical
results; this one stays as the reference the tests and ``benchmarks/gpusim.py`` compare it to,
and as the fallback where numba is not installed.

Warps wait in one global heap keyed by ``(cycle, priority)``; popping a warp tries to issue its
next instruction at that cycle. It issues only if its scoreboard (source and destination
registers), its scheduler (one issue per cycle), its execution unit (busy for the class's issue
interval) and, for memory instructions, its SM's load/store unit are free; otherwise it goes back
at the earliest cycle that might work. Because cycles come out of the heap in order, the shared
L2 and DRAM queues see requests in time order: ``start = max(t, free); free = start + bytes/bw``.

Thread blocks (CTAs) start on SMs round-robin up to the occupancy limit; when one finishes, the
next one starts on the same SM. Priority is the warp's age (greedy-then-oldest, "gto") or the
cycle it last issued (loose round robin, "lrr").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from heapq import heappop, heappush, heappushpop
from itertools import islice

from kernelwright.tools.gpusim._memsys import SectorCache
from kernelwright.tools.gpusim._opclass import OpClass
from kernelwright.tools.gpusim._timing_decode import NUM_UNITS, Decoded, Decoder
from kernelwright.tools.gpusim.gpus import GPUConfig
from kernelwright.tools.gpusim.records import WarpStream

_O = OpClass
_MEMORY = frozenset(int(c) for c in (
    _O.LD_GLOBAL, _O.ST_GLOBAL, _O.LD_LOCAL, _O.ST_LOCAL, _O.LD_SHARED, _O.ST_SHARED,
    _O.LD_CONST, _O.ATOM_GLOBAL, _O.ATOM_SHARED, _O.ASYNC_COPY, _O.SHUFFLE))
_BARRIER, _ASYNC_WAIT = int(_O.BARRIER), int(_O.ASYNC_WAIT)
_BATCH = 64  # thread blocks decoded per numpy batch
_RESERVE = 4  # a warp may book an issue slot up to this many cycles ahead


class _Cta:
    __slots__ = ("sm", "live", "arrived", "waiting", "bar_time", "finish")

    def __init__(self, sm: int, live: int) -> None:
        self.sm, self.live, self.arrived = sm, live, 0
        self.waiting: list[_Warp] = []
        self.bar_time = self.finish = 0.0


class _Warp:
    __slots__ = ("insts", "idx", "regs", "sm", "sched", "cta", "prio", "mem_done", "async_done")

    def __init__(self, insts: list[Decoded], sm: int, sched: int, cta: _Cta, prio: int) -> None:
        self.insts, self.idx, self.regs = insts, 0, {}
        self.sm, self.sched, self.cta, self.prio = sm, sched, cta, prio
        self.mem_done = self.async_done = 0.0


def _ready(w: _Warp, t: float) -> float:
    """Earliest cycle >= t at which ``w``'s next instruction has its registers ready."""
    cls, _, _, _, srcs, dests, _ = w.insts[w.idx]
    ready = max([t, *(w.regs.get(r, 0.0) for r in srcs + dests)])
    return max(ready, w.async_done) if cls == _ASYNC_WAIT else ready


class ReferenceEngine:
    """Simulates one kernel; ``run()`` returns its cycle count, counters stay on the object."""

    def __init__(self, gpu: GPUConfig, ctas_per_sm: int, ctas: Iterator[list[WarpStream]],
                 policy: str = "gto", shared_per_sm: int = 0,
                 l2: SectorCache | None = None) -> None:
        self.gpu, self.ctas_per_sm, self._ctas, self.lrr = gpu, ctas_per_sm, ctas, policy == "lrr"
        self.decoder = Decoder(gpu)
        n, s = gpu.num_sms, gpu.schedulers_per_sm
        self.sched_free = [0.0] * (n * s)
        self.unit_free = [0.0] * (n * s * NUM_UNITS)
        self.lsu_free = [0.0] * n
        self.warp_count = [0] * n
        l1_bytes = gpu.l1_bytes_for(shared_per_sm)
        self.l1 = [SectorCache(l1_bytes, gpu.l1_assoc, gpu.line_bytes) for _ in range(n)]
        self.l2 = l2 if l2 is not None else SectorCache(gpu.l2_bytes, gpu.l2_assoc,
                                                        gpu.line_bytes)
        self.l2_free = self.dram_free = 0.0
        self.l2_bw, self.dram_bw = gpu.l2_bytes_per_cycle, gpu.dram_bytes_per_cycle
        self.l2_latency, self.dram_latency = gpu.l2_latency, gpu.dram_latency
        self.step = 1.0 / gpu.lsu_lines_per_cycle
        self.heap: list[tuple[float, int, _Warp]] = []
        self._decoded: deque[tuple[list[WarpStream], list[list[Decoded]]]] = deque()
        self.seq = 0
        self.end = 0.0
        self.c: dict[str, float] = dict.fromkeys((
            "warp_insts", "thread_insts", "ctas", "l1_hit", "l1_miss", "l2_hit", "l2_miss",
            "dram_read", "dram_write", "gld_sectors", "gst_sectors", "shared_waves",
            "shared_ideal"), 0)

    # ------------------------------------------------------------------ thread blocks
    def _next_cta(self) -> tuple[list[WarpStream], list[list[Decoded]]] | None:
        """The next thread block, decoded in batches of ``_BATCH`` so numpy calls amortise."""
        if not self._decoded:
            batch = list(islice(self._ctas, _BATCH))
            if not batch:
                return None
            flat, threads = self.decoder.decode_cta([w for cta in batch for w in cta])
            self.c["thread_insts"] += threads
            pos = 0
            for cta in batch:
                self._decoded.append((cta, flat[pos:pos + len(cta)]))
                pos += len(cta)
        return self._decoded.popleft()

    def _launch(self, sm: int, t: float) -> None:
        while (nxt := self._next_cta()) is not None:
            _, decoded = nxt
            self.c["ctas"] += 1
            busy = [insts for insts in decoded if insts]
            if busy:  # a block whose warps are all empty ends at once: take the next one
                self._start(sm, t, busy)
                return

    def _start(self, sm: int, t: float, decoded: list[list[Decoded]]) -> None:
        s = self.gpu.schedulers_per_sm
        cta = _Cta(sm, len(decoded))
        for insts in decoded:
            sched = sm * s + self.warp_count[sm] % s
            self.warp_count[sm] += 1
            self.seq += 1
            w = _Warp(insts, sm, sched, cta, self.seq)
            heappush(self.heap, (_ready(w, t), w.prio, w))

    def _finish(self, w: _Warp, t: float) -> None:
        cta = w.cta
        cta.live -= 1
        cta.finish = max(cta.finish, t, w.mem_done, w.async_done)
        if cta.live == 0:
            self.end = max(self.end, cta.finish)
            self._launch(cta.sm, cta.finish)
        elif cta.waiting and cta.arrived >= cta.live:
            self._release(cta)

    def _arrive(self, w: _Warp, t: float) -> None:
        cta = w.cta
        cta.arrived += 1
        cta.waiting.append(w)
        cta.bar_time = max(cta.bar_time, t)
        if cta.arrived >= cta.live:
            self._release(cta)

    def _release(self, cta: _Cta) -> None:
        go = cta.bar_time + self.gpu.barrier_latency
        for w in cta.waiting:
            heappush(self.heap, (_ready(w, go), w.prio, w))
        cta.waiting, cta.arrived = [], 0

    # ------------------------------------------------------------------ main loop
    def run(self) -> float:
        """Simulate until every thread block has finished; returns the last finish cycle."""
        for _slot in range(self.ctas_per_sm):
            for sm in range(self.gpu.num_sms):
                self._launch(sm, 0.0)
        heap, sched_free, unit_free = self.heap, self.sched_free, self.unit_free
        memory, lrr, count = _MEMORY, self.lrr, 0
        item = heappop(heap) if heap else None
        while item is not None:
            popped, prio, w = item
            t = popped
            insts = w.insts
            cls, lat, unit, interval, _, dests, mem = insts[w.idx]
            sched = w.sched
            uidx = sched * NUM_UNITS + unit
            x = sched_free[sched]
            if x > t:
                t = x
            x = unit_free[uidx]
            if x > t:
                t = x
            if t > popped + _RESERVE:  # busy for long: let other warps use the slots between
                item = heappushpop(heap, (t, prio, w))
                continue
            sched_free[sched] = t + 1
            unit_free[uidx] = t + interval
            done = self._memory(w, cls, mem, t) if cls in memory else t + lat
            regs = w.regs
            for r in dests:
                regs[r] = done
            count += 1
            idx = w.idx = w.idx + 1
            if cls == _BARRIER or idx >= len(insts):  # the decoder cut the stream at its EXIT
                if idx < len(insts):
                    self._arrive(w, t)
                else:
                    self._finish(w, t + 1)
                item = heappop(heap) if heap else None
                continue
            if lrr:
                self.seq += 1
                prio = w.prio = self.seq
            nxt = insts[idx]
            ready = t + 1
            for r in nxt[4]:
                x = regs.get(r, 0.0)
                if x > ready:
                    ready = x
            for r in nxt[5]:
                x = regs.get(r, 0.0)
                if x > ready:
                    ready = x
            if nxt[0] == _ASYNC_WAIT and w.async_done > ready:
                ready = w.async_done
            item = heappushpop(heap, (ready, prio, w))  # the same warp again if it is first
        self.c["warp_insts"] += count
        return self.end

    # ------------------------------------------------------------------ memory
    def _memory(self, w: _Warp, cls: int, mem: object, t: float) -> float:
        g, sm = self.gpu, w.sm
        t = max(t, self.lsu_free[sm])  # waits in the SM's memory-instruction queue
        if cls in (_O.LD_GLOBAL, _O.LD_LOCAL, _O.ASYNC_COPY):
            done = self._load(sm, mem, t)  # type: ignore[arg-type]
            if cls == _O.ASYNC_COPY:
                w.async_done = max(w.async_done, done)
                return t + 1
            return done
        if cls in (_O.ST_GLOBAL, _O.ST_LOCAL, _O.ATOM_GLOBAL):
            done = self._store(sm, mem, t, cls)  # type: ignore[arg-type]
            w.mem_done = max(w.mem_done, done)
            return done + g.atomic_latency if cls == _O.ATOM_GLOBAL else t + 1
        if cls == _O.LD_CONST:
            return t + g.const_latency + mem - 1  # type: ignore[operator]
        if cls == _O.SHUFFLE:
            self.lsu_free[sm] = t + 1
            return t + g.shared_latency
        waves, ideal = mem  # type: ignore[misc]
        waves *= 2 if cls == _O.ATOM_SHARED else 1
        self.c["shared_waves"] += waves
        self.c["shared_ideal"] += ideal
        self.lsu_free[sm] = t + waves
        return t + g.shared_latency + waves - 1

    def _load(self, sm: int, lines: list[tuple[int, int]], t: float) -> float:
        access, l2 = self.l1[sm].access, self._l2
        done = t + self.gpu.l1_latency
        step = self.step
        busy = len(lines) * step
        self.lsu_free[sm] = t + (busy if busy > 1.0 else 1.0)
        requested = missed = 0
        for k, (line, mask) in enumerate(lines):
            miss = access(line, mask)
            requested += mask.bit_count()
            if miss:
                missed += miss.bit_count()
                x = l2(line, miss, t + k * step, False)
                if x > done:
                    done = x
        c = self.c
        c["gld_sectors"] += requested
        c["l1_hit"] += requested - missed
        c["l1_miss"] += missed
        return done

    def _store(self, sm: int, lines: list[tuple[int, int]], t: float, cls: int) -> float:
        done, step, write, l2 = t + 1, self.step, cls != _O.ATOM_GLOBAL, self._l2
        busy = len(lines) * step
        self.lsu_free[sm] = t + (busy if busy > 1.0 else 1.0)
        sectors = 0
        for k, (line, mask) in enumerate(lines):
            sectors += mask.bit_count()
            if cls == _O.ST_LOCAL:
                self.l1[sm].access(line, mask)
            x = l2(line, mask, t + k * step, write)
            if x > done:
                done = x
        self.c["gst_sectors"] += sectors
        return done

    def _l2(self, line: int, mask: int, t: float, write: bool) -> float:
        """One L1 miss (or store) at the L2; returns when its data is back at the SM."""
        n = mask.bit_count()
        start = self.l2_free
        if t > start:
            start = t
        self.l2_free = start = start + 32 * n / self.l2_bw
        l2 = self.l2
        miss = l2.access(line, mask, write)
        if l2.evicted_dirty:
            self._dram(t, 32 * l2.evicted_dirty)
            self.c["dram_write"] += 32 * l2.evicted_dirty
        done = start + self.l2_latency
        if write:
            return done
        c = self.c
        if not miss:
            c["l2_hit"] += n
            return done
        m = miss.bit_count()
        c["l2_hit"] += n - m
        c["l2_miss"] += m
        c["dram_read"] += 32 * m
        x = self._dram(t, 32 * m) + self.dram_latency
        return x if x > done else done

    def _dram(self, t: float, nbytes: int) -> float:
        self.dram_free = max(t, self.dram_free) + nbytes / self.dram_bw
        return self.dram_free

    def write_back(self) -> int:
        """Bytes still dirty in L2 at the end, now marked clean (written back after the kernel,
        not charged to cycles; a warm L2 passed to the next kernel holds them clean)."""
        return 32 * self.l2.clean()
