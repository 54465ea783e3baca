"""numpy (float64) reference of the LLM decode workloads: the logits of every step."""

from __future__ import annotations

import numpy as np


def _norm(cfg, x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    if cfg.norm == "rmsnorm":
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + cfg.eps) * g
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + cfg.eps) * g + b


def _rotary(cfg, x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    half = cfg.rot // 2
    if not half:
        return x
    inv = (10000.0 ** (-np.arange(half) * 2.0 / cfg.rot)).astype(np.float32).astype(np.float64)
    ang = pos[:, None].astype(np.float64) * inv[None, :]  # [T, half]
    xs = x.reshape(x.shape[0], cfg.heads, cfg.hd).copy()
    x1, x2 = xs[:, :, :half].copy(), xs[:, :, half : cfg.rot].copy()
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    xs[:, :, :half], xs[:, :, half : cfg.rot] = x1 * c - x2 * s, x2 * c + x1 * s
    return xs.reshape(x.shape)


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


def _lin(w, name: str, x: np.ndarray, bias: bool) -> np.ndarray:
    y = x @ w[name].T
    return y + w[f"{name}.b"] if bias else y


def _attention(cfg, w, i, h, cache, pos0):
    T = h.shape[0]
    pos = np.arange(pos0, pos0 + T)
    q = _rotary(cfg, _lin(w, f"L{i}.q", h, cfg.qkv_bias), pos)
    k = _rotary(cfg, _lin(w, f"L{i}.k", h, cfg.qkv_bias), pos)
    v = _lin(w, f"L{i}.v", h, cfg.qkv_bias)
    cache[0][pos0 : pos0 + T], cache[1][pos0 : pos0 + T] = k, v
    L = pos0 + T
    qh = q.reshape(T, cfg.heads, cfg.hd)
    kh = cache[0][:L].reshape(L, cfg.heads, cfg.hd)
    vh = cache[1][:L].reshape(L, cfg.heads, cfg.hd)
    s = np.einsum("thc,jhc->htj", qh, kh) * cfg.hd**-0.5
    s = np.where(np.arange(L)[None, None, :] > pos[None, :, None], -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = np.einsum("htj,jhc->thc", p, vh).reshape(T, cfg.d)
    return _lin(w, f"L{i}.o", out, cfg.out_bias)


def _mlp(cfg, w, i, h):
    f1 = _lin(w, f"L{i}.fc1", h, cfg.mlp_bias)
    if cfg.mlp == "gelu":
        act = _gelu(f1)
    else:
        act = f1 / (1 + np.exp(-f1)) * _lin(w, f"L{i}.up", h, cfg.mlp_bias)
    return _lin(w, f"L{i}.fc2", act, cfg.mlp_bias)


def reference_logits(cfg, weights: dict[str, np.ndarray], prompt: int, steps: int) -> np.ndarray:
    """Logits of the last token after the prefill and after each decode step: [steps+1, vocab]."""
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    tokens = weights["tokens"]
    total = prompt + steps
    caches = [(np.zeros((total, cfg.d)), np.zeros((total, cfg.d))) for _ in range(cfg.layers)]
    out, pos0 = [], 0
    for T in [prompt] + [1] * steps:
        x = w["embed"][tokens[pos0 : pos0 + T]]
        for i in range(cfg.layers):
            h = _norm(cfg, x, w[f"L{i}.ln1.g"], w[f"L{i}.ln1.b"])
            a = _attention(cfg, w, i, h, caches[i], pos0)
            if cfg.parallel:
                h2 = h if cfg.shared_norm else _norm(cfg, x, w[f"L{i}.ln2.g"], w[f"L{i}.ln2.b"])
                x = x + a + _mlp(cfg, w, i, h2)
            else:
                x = x + a
                x = x + _mlp(cfg, w, i, _norm(cfg, x, w[f"L{i}.ln2.g"], w[f"L{i}.ln2.b"]))
        hn = _norm(cfg, x[-1:], w["final.g"], w["final.b"])
        out.append((hn @ w["lm_head"].T)[0])
        pos0 += T
    return np.stack(out)
