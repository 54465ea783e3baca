"""The timing engine's event loop as numba-compiled functions over flat arrays.

A line-by-line port of :class:`._timing_reference.ReferenceEngine` (read that first: it is the
specification). What changes is only the representation:

* the heap is a binary heap over three arrays (cycle, priority, warp); its keys are unique
  (priorities are), so it pops in exactly the order of Python's ``heapq``;
* a sectored LRU cache is ``tags[set, way]``, ``state[set, way]`` (valid | dirty << 4; 0 = an
  empty way: a present line always has a valid sector) and ``stamp[set, way]``; the least
  recent stamp is the entry Python's insertion-ordered dict
  evicts first, so hits, misses and evictions match;
* register ready times live in one row per resident warp slot, reset when a warp starts;
* floating-point expressions keep the reference's order of operations, so cycles are equal.

Scalars that change live in small arrays: ``fs`` (float: l2_free, dram_free, end) and ``ist``
(int: seq, next thread block, cache clock). Counters are ``cnt`` in the order of ``COUNTERS``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernelwright.tools.gpusim._opclass import OpClass

COUNTERS = ("warp_insts", "thread_insts", "ctas", "l1_hit", "l1_miss", "l2_hit", "l2_miss",
            "dram_read", "dram_write", "gld_sectors", "gst_sectors", "shared_waves",
            "shared_ideal")
(C_WARP, C_THREAD, C_CTAS, C_L1H, C_L1M, C_L2H, C_L2M, C_DR, C_DW, C_GLD, C_GST, C_SW,
 C_SI) = range(len(COUNTERS))
F_L2, F_DRAM, F_END = 0, 1, 2
I_SEQ, I_NEXT, I_CLOCK = 0, 1, 2
NUM_UNITS = 6
RESERVE = 4.0

_O = OpClass
LD_GLOBAL, ST_GLOBAL, LD_LOCAL, ST_LOCAL = (int(_O.LD_GLOBAL), int(_O.ST_GLOBAL),
                                            int(_O.LD_LOCAL), int(_O.ST_LOCAL))
LD_SHARED, ST_SHARED, LD_CONST = int(_O.LD_SHARED), int(_O.ST_SHARED), int(_O.LD_CONST)
ATOM_GLOBAL, ATOM_SHARED, ASYNC_COPY = (int(_O.ATOM_GLOBAL), int(_O.ATOM_SHARED),
                                        int(_O.ASYNC_COPY))
ASYNC_WAIT, SHUFFLE, BARRIER = int(_O.ASYNC_WAIT), int(_O.SHUFFLE), int(_O.BARRIER)
MEMORY = np.zeros(len(OpClass), np.bool_)
MEMORY[[LD_GLOBAL, ST_GLOBAL, LD_LOCAL, ST_LOCAL, LD_SHARED, ST_SHARED, LD_CONST, ATOM_GLOBAL,
        ATOM_SHARED, ASYNC_COPY, SHUFFLE]] = True
POP4 = np.array([bin(i).count("1") for i in range(16)], np.int64)


# ------------------------------------------------------------------ heap
@njit(cache=True, inline="always")
def _less(ht, hp, i, j):
    return ht[i] < ht[j] or (ht[i] == ht[j] and hp[i] < hp[j])


@njit(cache=True, inline="always")
def _sift_down(ht, hp, hw, n, pos):
    while True:
        left = 2 * pos + 1
        if left >= n:
            return
        child = left
        if left + 1 < n and _less(ht, hp, left + 1, left):
            child = left + 1
        if _less(ht, hp, child, pos):
            ht[pos], ht[child] = ht[child], ht[pos]
            hp[pos], hp[child] = hp[child], hp[pos]
            hw[pos], hw[child] = hw[child], hw[pos]
            pos = child
        else:
            return


@njit(cache=True, inline="always")
def heap_push(ht, hp, hw, hn, t, p, w):
    pos = hn[0]
    hn[0] = pos + 1
    ht[pos], hp[pos], hw[pos] = t, p, w
    while pos > 0:
        parent = (pos - 1) >> 1
        if _less(ht, hp, pos, parent):
            ht[pos], ht[parent] = ht[parent], ht[pos]
            hp[pos], hp[parent] = hp[parent], hp[pos]
            hw[pos], hw[parent] = hw[parent], hw[pos]
            pos = parent
        else:
            return


@njit(cache=True, inline="always")
def heap_pop_into(ht, hp, hw, hn, out_t, out_p):
    """Remove the smallest entry; returns its warp and writes its keys to out_t[0]/out_p[0]."""
    n = hn[0] - 1
    out_t[0], out_p[0] = ht[0], hp[0]
    w = hw[0]
    hn[0] = n
    if n > 0:
        ht[0], hp[0], hw[0] = ht[n], hp[n], hw[n]
        _sift_down(ht, hp, hw, n, 0)
    return w


@njit(cache=True, inline="always")
def heap_pushpop(ht, hp, hw, hn, t, p, w, out_t, out_p):
    """``heapq.heappushpop``: push (t, p, w) then pop the smallest; returns the popped warp."""
    n = hn[0]
    if n == 0 or t < ht[0] or (t == ht[0] and p < hp[0]):
        out_t[0], out_p[0] = t, p
        return w
    out_t[0], out_p[0] = ht[0], hp[0]
    top = hw[0]
    ht[0], hp[0], hw[0] = t, p, w
    _sift_down(ht, hp, hw, n, 0)
    return top


# ------------------------------------------------------------------ caches
@njit(cache=True)
def cache_access(tags, state, stamp, c, line, mask, write, clock, evicted):
    """SectorCache.access on cache ``c``; returns missing sectors, evicted[0] = dirty evicted."""
    nsets, assoc = tags.shape[1], tags.shape[2]
    s = (line ^ (line >> 13)) % nsets
    clock[I_CLOCK] += 1
    now = clock[I_CLOCK]
    empty = -1
    oldest = -1
    for way in range(assoc):
        v = state[c, s, way]
        if v != 0 and tags[c, s, way] == line:
            state[c, s, way] = (v | mask | (mask << 4)) if write else (v | mask)
            stamp[c, s, way] = now
            evicted[0] = 0
            return mask & ~v & 0xF
        if v == 0:
            if empty == -1:
                empty = way
        elif oldest == -1 or stamp[c, s, way] < stamp[c, s, oldest]:
            oldest = way
    if empty != -1:
        way = empty
        evicted[0] = 0
    else:
        way = oldest
        evicted[0] = POP4[state[c, s, way] >> 4]
    tags[c, s, way] = line
    state[c, s, way] = (mask | (mask << 4)) if write else mask
    stamp[c, s, way] = now
    return mask


@njit(cache=True)
def cache_clean(state):
    """Clear every dirty bit; returns how many sectors were dirty."""
    flat = state.reshape(-1)
    dirty = 0
    for k in range(flat.size):
        v = flat[k]
        if v >= 16:
            dirty += POP4[v >> 4]
            flat[k] = v & 0xF
    return dirty


# ------------------------------------------------------------------ memory
@njit(cache=True)
def _dram(fs, t, nbytes, dram_bw):
    x = fs[F_DRAM]
    if t > x:
        x = t
    fs[F_DRAM] = x + nbytes / dram_bw
    return fs[F_DRAM]


@njit(cache=True)
def _l2(line, mask, t, write, fs, cnt, l2t, l2s, l2p, ist, evicted, gp):
    l2_bw, dram_bw, l2_latency, dram_latency = gp[0], gp[1], gp[2], gp[3]
    n = POP4[mask]
    start = fs[F_L2]
    if t > start:
        start = t
    start = start + 32 * n / l2_bw
    fs[F_L2] = start
    miss = cache_access(l2t, l2s, l2p, 0, line, mask, write, ist, evicted)
    if evicted[0]:
        _dram(fs, t, 32 * evicted[0], dram_bw)
        cnt[C_DW] += 32 * evicted[0]
    done = start + l2_latency
    if write:
        return done
    if not miss:
        cnt[C_L2H] += n
        return done
    m = POP4[miss]
    cnt[C_L2H] += n - m
    cnt[C_L2M] += m
    cnt[C_DR] += 32 * m
    x = _dram(fs, t, 32 * m, dram_bw) + dram_latency
    return x if x > done else done


@njit(cache=True)
def _load(sm, lo, hi, t, lines, masks, lsu_free, fs, cnt, l1t, l1s, l1p, l2t, l2s, l2p, ist,
          evicted, gp):
    step, l1_latency = gp[4], gp[5]
    done = t + l1_latency
    busy = (hi - lo) * step
    lsu_free[sm] = t + (busy if busy > 1.0 else 1.0)
    requested = 0
    missed = 0
    for k in range(hi - lo):
        line, mask = lines[lo + k], masks[lo + k]
        miss = cache_access(l1t, l1s, l1p, sm, line, mask, False, ist, evicted)
        requested += POP4[mask]
        if miss:
            missed += POP4[miss]
            x = _l2(line, miss, t + k * step, False, fs, cnt, l2t, l2s, l2p, ist, evicted, gp)
            if x > done:
                done = x
    cnt[C_GLD] += requested
    cnt[C_L1H] += requested - missed
    cnt[C_L1M] += missed
    return done


@njit(cache=True)
def _store(sm, lo, hi, t, cls, lines, masks, lsu_free, fs, cnt, l1t, l1s, l1p, l2t, l2s, l2p,
           ist, evicted, gp):
    step = gp[4]
    done = t + 1
    write = cls != ATOM_GLOBAL
    busy = (hi - lo) * step
    lsu_free[sm] = t + (busy if busy > 1.0 else 1.0)
    sectors = 0
    for k in range(hi - lo):
        line, mask = lines[lo + k], masks[lo + k]
        sectors += POP4[mask]
        if cls == ST_LOCAL:
            cache_access(l1t, l1s, l1p, sm, line, mask, False, ist, evicted)
        x = _l2(line, mask, t + k * step, write, fs, cnt, l2t, l2s, l2p, ist, evicted, gp)
        if x > done:
            done = x
    cnt[C_GST] += sectors
    return done


# ------------------------------------------------------------------ the engine
class Kernel:
    """Namespace for the arrays one run needs (built by :mod:`._timing_compiled`)."""


@njit(cache=True, inline="always")
def _ready(w, t, w_idx, sig, s_cls, s_src, s_dst, regs, w_slot, w_async):
    """Earliest cycle >= t at which warp w's next instruction has its registers ready."""
    sg = sig[w_idx[w]]
    ready = t
    row = w_slot[w]
    for j in range(s_src.shape[1]):
        r = s_src[sg, j]
        if r < 0:
            break
        if regs[row, r] > ready:
            ready = regs[row, r]
    for j in range(s_dst.shape[1]):
        r = s_dst[sg, j]
        if r < 0:
            break
        if regs[row, r] > ready:
            ready = regs[row, r]
    if s_cls[sg] == ASYNC_WAIT and w_async[w] > ready:
        ready = w_async[w]
    return ready


@njit(cache=True)
def run(sig, ma, mb, lines, masks, s_cls, s_lat, s_unit, s_int, s_src, s_dst,
        w_start, w_end, c_w0, c_nw,
        w_idx, w_sm, w_sched, w_prio, w_mem, w_async, w_slot, w_wait,
        c_sm, c_live, c_arrived, c_bar, c_finish,
        regs, free_slots, nfree,
        ht, hp, hw, hn,
        sched_free, unit_free, lsu_free, warp_count,
        l1t, l1s, l1p, l2t, l2s, l2p,
        fs, ist, cnt, gp, ip):
    """Simulate every thread block; returns the last finish cycle (counters in ``cnt``).

    ``gp`` (float): l2_bw, dram_bw, l2_latency, dram_latency, step, l1_latency,
    barrier_latency, atomic_latency, const_latency, shared_latency.
    ``ip`` (int): num_sms, schedulers_per_sm, ctas_per_sm, lrr.
    """
    num_sms, n_sched, ctas_per_sm, lrr = ip[0], ip[1], ip[2], ip[3]
    evicted = np.zeros(1, np.int64)
    out_t = np.zeros(1, np.float64)
    out_p = np.zeros(1, np.int64)
    for _slot in range(ctas_per_sm):
        for sm in range(num_sms):
            if ist[I_NEXT] >= len(c_nw):  # nothing left to start (the reference loops idle)
                break
            _launch(sm, 0.0, sig, s_cls, s_src, s_dst, w_start, w_end, c_w0, c_nw, w_idx, w_sm,
                    w_sched, w_prio, w_mem, w_async, w_slot, c_sm, c_live, c_arrived, c_bar,
                    c_finish, regs, free_slots, nfree, ht, hp, hw, hn, warp_count, ist, cnt,
                    n_sched)
    count = 0
    has = hn[0] > 0
    if has:
        w = heap_pop_into(ht, hp, hw, hn, out_t, out_p)
    while has:
        popped = out_t[0]
        prio = out_p[0]
        t = popped
        i = w_idx[w]
        sg = sig[i]
        cls = s_cls[sg]
        sched = w_sched[w]
        uidx = sched * NUM_UNITS + s_unit[sg]
        x = sched_free[sched]
        if x > t:
            t = x
        x = unit_free[uidx]
        if x > t:
            t = x
        if t > popped + RESERVE:
            w = heap_pushpop(ht, hp, hw, hn, t, prio, w, out_t, out_p)
            continue
        sched_free[sched] = t + 1
        unit_free[uidx] = t + s_int[sg]
        if MEMORY[cls]:
            done = _memory(w, cls, i, t, ma, mb, lines, masks, w_sm, w_mem, w_async, lsu_free,
                           fs, cnt, l1t, l1s, l1p, l2t, l2s, l2p, ist, evicted, gp)
        else:
            done = t + s_lat[sg]
        row = w_slot[w]
        for j in range(s_dst.shape[1]):
            r = s_dst[sg, j]
            if r < 0:
                break
            regs[row, r] = done
        count += 1
        i += 1
        w_idx[w] = i
        if cls == BARRIER or i >= w_end[w]:
            if i < w_end[w]:
                _arrive(w, t, sig, s_cls, s_src, s_dst, w_idx, w_prio, w_async, w_slot, w_wait,
                        c_w0, c_nw, c_live, c_arrived, c_bar, regs, ht, hp, hw, hn, gp)
            else:
                _finish(w, t + 1, sig, s_cls, s_src, s_dst, w_start, w_end, c_w0, c_nw, w_idx,
                        w_sm, w_sched, w_prio, w_mem, w_async, w_slot, w_wait, c_sm, c_live,
                        c_arrived, c_bar, c_finish, regs, free_slots, nfree, ht, hp, hw, hn,
                        warp_count, fs, ist, cnt, gp, n_sched)
            has = hn[0] > 0
            if has:
                w = heap_pop_into(ht, hp, hw, hn, out_t, out_p)
            continue
        if lrr:
            ist[I_SEQ] += 1
            prio = ist[I_SEQ]
            w_prio[w] = prio
        ready = _ready(w, t + 1, w_idx, sig, s_cls, s_src, s_dst, regs, w_slot, w_async)
        w = heap_pushpop(ht, hp, hw, hn, ready, prio, w, out_t, out_p)
    cnt[C_WARP] += count
    return fs[F_END]


@njit(cache=True)
def _memory(w, cls, i, t, ma, mb, lines, masks, w_sm, w_mem, w_async, lsu_free, fs, cnt,
            l1t, l1s, l1p, l2t, l2s, l2p, ist, evicted, gp):
    sm = w_sm[w]
    if lsu_free[sm] > t:
        t = lsu_free[sm]
    if cls == LD_GLOBAL or cls == LD_LOCAL or cls == ASYNC_COPY:
        done = _load(sm, ma[i], mb[i], t, lines, masks, lsu_free, fs, cnt, l1t, l1s, l1p, l2t,
                     l2s, l2p, ist, evicted, gp)
        if cls == ASYNC_COPY:
            if done > w_async[w]:
                w_async[w] = done
            return t + 1
        return done
    if cls == ST_GLOBAL or cls == ST_LOCAL or cls == ATOM_GLOBAL:
        done = _store(sm, ma[i], mb[i], t, cls, lines, masks, lsu_free, fs, cnt, l1t, l1s, l1p,
                      l2t, l2s, l2p, ist, evicted, gp)
        if done > w_mem[w]:
            w_mem[w] = done
        return done + gp[7] if cls == ATOM_GLOBAL else t + 1
    if cls == LD_CONST:
        return t + gp[8] + ma[i] - 1
    if cls == SHUFFLE:
        lsu_free[sm] = t + 1
        return t + gp[9]
    waves = ma[i]
    if cls == ATOM_SHARED:
        waves *= 2
    cnt[C_SW] += waves
    cnt[C_SI] += mb[i]
    lsu_free[sm] = t + waves
    return t + gp[9] + waves - 1


@njit(cache=True)
def _launch(sm, t, sig, s_cls, s_src, s_dst, w_start, w_end, c_w0, c_nw, w_idx, w_sm, w_sched,
            w_prio, w_mem, w_async, w_slot, c_sm, c_live, c_arrived, c_bar, c_finish, regs,
            free_slots, nfree, ht, hp, hw, hn, warp_count, ist, cnt, n_sched):
    """Start the next thread block with work on ``sm`` (empty ones are counted and skipped)."""
    while ist[I_NEXT] < len(c_nw):
        c = ist[I_NEXT]
        ist[I_NEXT] = c + 1
        cnt[C_CTAS] += 1
        if c_nw[c] == 0:
            continue
        c_sm[c], c_live[c], c_arrived[c] = sm, c_nw[c], 0
        c_bar[c] = 0.0
        c_finish[c] = 0.0
        for w in range(c_w0[c], c_w0[c] + c_nw[c]):
            w_sched[w] = sm * n_sched + warp_count[sm] % n_sched
            warp_count[sm] += 1
            ist[I_SEQ] += 1
            w_prio[w] = ist[I_SEQ]
            w_idx[w], w_sm[w] = w_start[w], sm
            w_mem[w], w_async[w] = 0.0, 0.0
            nfree[0] -= 1
            row = free_slots[nfree[0]]
            w_slot[w] = row
            regs[row, :] = 0.0
            heap_push(ht, hp, hw, hn, t, w_prio[w], w)
        return


@njit(cache=True)
def _finish(w, t, sig, s_cls, s_src, s_dst, w_start, w_end, c_w0, c_nw, w_idx, w_sm, w_sched,
            w_prio, w_mem, w_async, w_slot, w_wait, c_sm, c_live, c_arrived, c_bar, c_finish,
            regs, free_slots, nfree, ht, hp, hw, hn, warp_count, fs, ist, cnt, gp, n_sched):
    c = _cta_of(w, c_w0, c_nw)
    free_slots[nfree[0]] = w_slot[w]
    nfree[0] += 1
    c_live[c] -= 1
    f = c_finish[c]
    if t > f:
        f = t
    if w_mem[w] > f:
        f = w_mem[w]
    if w_async[w] > f:
        f = w_async[w]
    c_finish[c] = f
    if c_live[c] == 0:
        if f > fs[F_END]:
            fs[F_END] = f
        _launch(c_sm[c], f, sig, s_cls, s_src, s_dst, w_start, w_end, c_w0, c_nw, w_idx, w_sm,
                w_sched, w_prio, w_mem, w_async, w_slot, c_sm, c_live, c_arrived, c_bar,
                c_finish, regs, free_slots, nfree, ht, hp, hw, hn, warp_count, ist, cnt,
                n_sched)
    elif c_arrived[c] > 0 and c_arrived[c] >= c_live[c]:
        _release(c, sig, s_cls, s_src, s_dst, w_idx, w_prio, w_async, w_slot, w_wait, c_w0,
                 c_nw, c_arrived, c_bar, regs, ht, hp, hw, hn, gp)


@njit(cache=True)
def _arrive(w, t, sig, s_cls, s_src, s_dst, w_idx, w_prio, w_async, w_slot, w_wait, c_w0, c_nw,
            c_live, c_arrived, c_bar, regs, ht, hp, hw, hn, gp):
    c = _cta_of(w, c_w0, c_nw)
    c_arrived[c] += 1
    w_wait[w] = True
    if t > c_bar[c]:
        c_bar[c] = t
    if c_arrived[c] >= c_live[c]:
        _release(c, sig, s_cls, s_src, s_dst, w_idx, w_prio, w_async, w_slot, w_wait, c_w0,
                 c_nw, c_arrived, c_bar, regs, ht, hp, hw, hn, gp)


@njit(cache=True)
def _release(c, sig, s_cls, s_src, s_dst, w_idx, w_prio, w_async, w_slot, w_wait, c_w0, c_nw,
             c_arrived, c_bar, regs, ht, hp, hw, hn, gp):
    go = c_bar[c] + gp[6]
    for w in range(c_w0[c], c_w0[c] + c_nw[c]):
        if w_wait[w]:
            w_wait[w] = False
            ready = _ready(w, go, w_idx, sig, s_cls, s_src, s_dst, regs, w_slot, w_async)
            heap_push(ht, hp, hw, hn, ready, w_prio[w], w)
    c_arrived[c] = 0


@njit(cache=True)
def _cta_of(w, c_w0, c_nw):
    """The thread block of warp ``w`` (binary search over first-warp indices)."""
    lo, hi = 0, len(c_w0) - 1
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if c_w0[mid] <= w:
            lo = mid
        else:
            hi = mid - 1
    while c_nw[lo] == 0 or w >= c_w0[lo] + c_nw[lo]:  # empty blocks share a first index
        lo -= 1
    return lo


# ------------------------------------------------------------------ decoding helpers
@njit(cache=True)
def shared_wavefronts_flat(addrs, counts, widths):
    """:func:`._memsys.shared_wavefronts` over flat arrays, one instruction at a time.

    Per instruction: the distinct 4-byte words its lanes touch (``width // 4`` words a lane,
    at least one), counted per bank (word mod 32); wavefronts = the largest count, at least 1.
    """
    n = len(counts)
    out = np.ones(n, np.int64)
    mask40 = (1 << 40) - 1
    pos = 0
    per_bank = np.zeros(32, np.int64)
    for i in range(n):
        c = counts[i]
        nw = widths[i] // 4
        if nw < 1:
            nw = 1
        if c > 0:
            words = np.empty(c * nw, np.int64)
            m = 0
            for lane in range(c):
                w0 = addrs[pos + lane] >> 2
                for k in range(nw):
                    words[m] = (w0 + k) & mask40
                    m += 1
            words.sort()
            per_bank[:] = 0
            best = 0
            for j in range(m):
                if j == 0 or words[j] != words[j - 1]:
                    b = words[j] & 31
                    per_bank[b] += 1
                    if per_bank[b] > best:
                        best = per_bank[b]
            if best > 1:
                out[i] = best
        pos += c
    return out
