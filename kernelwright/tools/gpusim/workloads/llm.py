"""LLM decode loops shaped like phi-2, qwen1.5 and pythia: a prefill, then N decode steps.

Per layer and token: norm(s), q/k/v projections (GEMM in prefill, GEMV in decode), rotary
embedding, KV-cache append, attention scores over the growing cache, softmax, attention output,
output projection, MLP (GELU or SwiGLU) and residual adds. Configs keep each model's structure
(norm type, activation, parallel residual, partial rotary, biases) with sizes scaled down.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np

from kernelwright.tools.gpusim.workloads._llm_ref import reference_logits
from kernelwright.tools.gpusim.workloads.base import Launcher, Workload, blocks


@dataclass(frozen=True)
class LlmConfig:
    """A decoder's structure; sizes are scaled down from the real model's config."""

    layers: int
    d: int
    heads: int
    ffn: int
    vocab: int
    norm: str  # "layernorm" | "rmsnorm"
    mlp: str  # "gelu" | "swiglu"
    parallel: bool  # attention and MLP both read the layer input (GPT-J/NeoX style)
    shared_norm: bool  # phi-2: one layernorm feeds both branches
    rotary_pct: float
    qkv_bias: bool
    out_bias: bool
    mlp_bias: bool
    eps: float = 1e-5

    @property
    def hd(self) -> int:
        return self.d // self.heads

    @property
    def rot(self) -> int:
        return int(self.hd * self.rotary_pct) // 2 * 2


# Real: phi-2 32 layers, d 2560, 32 heads, ffn 10240, partial rotary 0.4, parallel, one LN.
PHI2 = LlmConfig(2, 64, 4, 256, 256, "layernorm", "gelu", True, True, 0.4, True, True, True)
# Real: Qwen1.5-0.5B 24 layers, d 1024, 16 heads, ffn 2816, RMSNorm, SwiGLU, qkv bias only.
QWEN15 = LlmConfig(2, 64, 4, 176, 256, "rmsnorm", "swiglu", False, False, 1.0, True, False,
                   False, 1e-6)  # fmt: skip
# Real: pythia-160m 12 layers, d 768, 12 heads, ffn 3072, rotary 0.25, parallel, two LNs.
PYTHIA = LlmConfig(2, 64, 4, 256, 256, "layernorm", "gelu", True, False, 0.25, True, True, True)


def make_weights(cfg: LlmConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random weights (std 0.08) for every tensor the config uses, named ``L<i>.<name>``."""
    w: dict[str, np.ndarray] = {"embed": rng.normal(0, 0.5, (cfg.vocab, cfg.d))}
    w["lm_head"] = rng.normal(0, 0.08, (cfg.vocab, cfg.d))
    w["final.g"], w["final.b"] = 1 + rng.normal(0, 0.05, cfg.d), rng.normal(0, 0.05, cfg.d)
    for i in range(cfg.layers):
        shapes = {"q": (cfg.d, cfg.d), "k": (cfg.d, cfg.d), "v": (cfg.d, cfg.d),
                  "o": (cfg.d, cfg.d), "fc1": (cfg.ffn, cfg.d), "fc2": (cfg.d, cfg.ffn),
                  "up": (cfg.ffn, cfg.d)}  # fmt: skip
        for n, s in shapes.items():
            w[f"L{i}.{n}"] = rng.normal(0, 0.08, s)
            w[f"L{i}.{n}.b"] = rng.normal(0, 0.02, s[0])
        for n in ("ln1", "ln2"):
            w[f"L{i}.{n}.g"] = 1 + rng.normal(0, 0.05, cfg.d)
            w[f"L{i}.{n}.b"] = rng.normal(0, 0.05, cfg.d)
    return {k: v.astype(np.float32) for k, v in w.items()}


class LlmDecode(Workload):
    """Prefill ``prompt`` tokens, then ``steps`` teacher-forced decode steps."""

    source = "llm.cu"
    config: ClassVar[LlmConfig]
    defaults = {"prompt": 8, "steps": 4}

    def inputs(self, rng: np.random.Generator, p: dict[str, Any]) -> dict[str, np.ndarray]:
        w = make_weights(self.config, rng)
        n_tok = p["prompt"] + p["steps"]
        w["tokens"] = rng.integers(0, self.config.vocab, n_tok).astype(np.int32)
        return w

    def _execute(self, launch: Launcher, p: dict[str, Any], w: dict[str, np.ndarray]):
        cfg, total = self.config, p["prompt"] + p["steps"]
        rot = cfg.rot
        inv = (10000.0 ** (-np.arange(max(rot // 2, 1)) * 2.0 / max(rot, 1))).astype(np.float32)
        cache = [(np.zeros((total, cfg.d), np.float32), np.zeros((total, cfg.d), np.float32))
                 for _ in range(cfg.layers)]  # fmt: skip
        logits, pos = [], 0
        for t_count in [p["prompt"]] + [1] * p["steps"]:
            step = _Step(launch, cfg, w, t_count, pos, inv)
            x = step.embed(w["tokens"][pos : pos + t_count])
            for i in range(cfg.layers):
                step.layer(i, x, cache[i])
            logits.append(step.head(x))
            pos += t_count
        return {"logits": np.stack(logits)}

    def reference(self, p: dict[str, Any], w: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"logits": reference_logits(self.config, w, p["prompt"], p["steps"])}


class _Step:
    """The launches of one forward step over ``T`` tokens starting at position ``pos0``."""

    def __init__(self, launch: Launcher, cfg: LlmConfig, w, T: int, pos0: int, inv):
        self.launch, self.cfg, self.w, self.T, self.pos0, self.inv = launch, cfg, w, T, pos0, inv
        self.dummy = np.zeros(1, np.float32)

    def buf(self, n: int) -> np.ndarray:
        return np.zeros((self.T, n), np.float32)

    def embed(self, tokens: np.ndarray) -> np.ndarray:
        x = self.buf(self.cfg.d)
        n = x.size
        self.launch("embed", blocks(n, 128), 128, np.ascontiguousarray(tokens), self.w["embed"],
                    x, self.cfg.d, self.T)  # fmt: skip
        return x

    def norm(self, x: np.ndarray, prefix: str) -> np.ndarray:
        cfg, y = self.cfg, self.buf(self.cfg.d)
        g, b = self.w[f"{prefix}.g"], self.w[f"{prefix}.b"]
        if cfg.norm == "rmsnorm":
            self.launch("rmsnorm", x.shape[0], 64, x, g, y, cfg.d, np.float32(cfg.eps))
        else:
            self.launch("layernorm", x.shape[0], 64, x, g, b, y, cfg.d, np.float32(cfg.eps))
        return y

    def linear(self, x: np.ndarray, name: str, bias: bool) -> np.ndarray:
        wt = self.w[name]
        out, inp = wt.shape
        y = np.zeros((x.shape[0], out), np.float32)
        b = self.w[f"{name}.b"] if bias else self.dummy
        if x.shape[0] == 1:
            self.launch("gemv", blocks(out, 4), 128, wt, x, b, y, inp, out, int(bias))
        else:
            grid = (blocks(out, 16), blocks(x.shape[0], 16))
            self.launch("gemm", grid, (16, 16), x, wt, b, y, x.shape[0], inp, out, int(bias))
        return y

    def attention(self, i: int, h: np.ndarray, cache) -> np.ndarray:
        cfg, T, pos0 = self.cfg, self.T, self.pos0
        q, k, v = (self.linear(h, f"L{i}.{n}", cfg.qkv_bias) for n in "qkv")
        half = cfg.rot // 2
        if half:
            self.launch("rotary", blocks(T * cfg.heads * half, 64), 64, q, k, self.inv, T,
                        cfg.heads, cfg.hd, cfg.rot, pos0)  # fmt: skip
        kc, vc = cache
        self.launch("kv_append", blocks(T * cfg.d, 128), 128, k, v, kc, vc, T, cfg.d, pos0)
        length = pos0 + T
        scores = np.zeros((cfg.heads, T, length), np.float32)
        self.launch("attn_scores", (blocks(length, 64), T, cfg.heads), 64, q, kc, scores, T,
                    cfg.heads, cfg.hd, length, pos0, np.float32(cfg.hd**-0.5))  # fmt: skip
        self.launch("softmax", cfg.heads * T, 32, scores, length)
        out = self.buf(cfg.d)
        self.launch("attn_out", blocks(T * cfg.d, 64), 64, scores, vc, out, T, cfg.heads,
                    cfg.hd, length, pos0)  # fmt: skip
        return self.linear(out, f"L{i}.o", cfg.out_bias)

    def mlp(self, i: int, h: np.ndarray) -> np.ndarray:
        cfg = self.cfg
        f1 = self.linear(h, f"L{i}.fc1", cfg.mlp_bias)
        if cfg.mlp == "gelu":
            self.launch("gelu", blocks(f1.size, 128), 128, f1, f1.size)
            act = f1
        else:
            up = self.linear(h, f"L{i}.up", cfg.mlp_bias)
            act = self.buf(cfg.ffn)
            self.launch("silu_mul", blocks(act.size, 128), 128, f1, up, act, act.size)
        return self.linear(act, f"L{i}.fc2", cfg.mlp_bias)

    def layer(self, i: int, x: np.ndarray, cache) -> None:
        cfg, n = self.cfg, x.size
        h = self.norm(x, f"L{i}.ln1")
        a = self.attention(i, h, cache)
        if cfg.parallel:
            h2 = h if cfg.shared_norm else self.norm(x, f"L{i}.ln2")
            m = self.mlp(i, h2)
            self.launch("residual_add", blocks(n, 128), 128, x, a, m, n, 1)
            return
        self.launch("residual_add", blocks(n, 128), 128, x, a, self.dummy, n, 0)
        m = self.mlp(i, self.norm(x, f"L{i}.ln2"))
        self.launch("residual_add", blocks(n, 128), 128, x, m, self.dummy, n, 0)

    def head(self, x: np.ndarray) -> np.ndarray:
        last = np.ascontiguousarray(x[-1:])
        h = self.norm(last, "final")
        return self.linear(h, "lm_head", False)[0]


class Phi2Decode(LlmDecode):
    name = "phi2"
    config = PHI2


class Qwen15Decode(LlmDecode):
    name = "qwen15"
    config = QWEN15


class PythiaDecode(LlmDecode):
    name = "pythia"
    config = PYTHIA


__all__ = ["PHI2", "PYTHIA", "QWEN15", "LlmConfig", "Phi2Decode", "PythiaDecode", "Qwen15Decode",
           "asdict"]  # fmt: skip
