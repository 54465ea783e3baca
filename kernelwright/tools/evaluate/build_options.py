"""The build options a candidate may ask for: a fixed allow-list, checked by the orchestrator.

A candidate builds its kernels inside its sandbox with whatever options it likes (that build
is private and thrown away). What it *reports* having built is compiled again by the trusted
builder, and there options are instructions to a compiler outside the candidate's reach
(``-wrapper``, ``-fplugin=``, ``-specs=``, ``-ccbin`` or ``@file`` run or load arbitrary
programs). So every option must match one of the patterns below, whole; a candidate that asked
for another is rejected with the option named, and nothing of it reaches the builder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_MACRO = r"-D[A-Za-z_][A-Za-z0-9_]{0,63}(=[A-Za-z0-9_.+-]{0,64})?"
_COMMON = (_MACRO, r"-O[0-3s]", r"-std=c\+\+(14|17|20)", r"-g0?")
ALLOWED: dict[str, tuple[str, ...]] = {
    "cpp": (*_COMMON, r"-Ofast", r"-march=native", r"-mtune=native", r"-ffast-math",
            r"-funroll-loops", r"-fno-math-errno", r"-fopenmp(-simd)?", r"-fno-trapping-math",
            r"-m(avx|avx2|fma|f16c|avx512f|avx512bw|avx512vl|avx512dq|sse4\.2)"),
    "cuda": (*_COMMON, r"--use_fast_math", r"-use_fast_math", r"-lineinfo",
             r"--maxrregcount=[0-9]{1,3}", r"-Xptxas=-v", r"--extra-device-vectorization"),
    "sycl": (*_COMMON, r"-cl-fast-relaxed-math", r"-cl-mad-enable", r"-cl-no-signed-zeros",
             r"-cl-unsafe-math-optimizations", r"-cl-finite-math-only", r"-cl-std=CL[123]\.[0-2]"),
}
_COMPILED = {name: re.compile("|".join(f"(?:{p})" for p in pats)) for name, pats in
             ALLOWED.items()}


def disallowed(backend: str, options: Iterable[Any]) -> list[str]:
    """The options in ``options`` that ``backend``'s allow-list does not admit."""
    pattern = _COMPILED.get(str(backend))
    bad = []
    for option in options:
        text = option if isinstance(option, str) else repr(option)
        if pattern is None or not pattern.fullmatch(text):
            bad.append(text)
    return bad


def check_builds(builds: list[Any]) -> str | None:
    """Why the builds a runner reported cannot be accepted (``None`` when they can)."""
    for build in builds:
        if not isinstance(build, dict):
            return "the runner reported a malformed build"
        backend = str(build.get("backend"))
        options = build.get("options") or []
        if not isinstance(options, list):
            return "the runner reported a malformed build (options is not a list)"
        bad = disallowed(backend, options)
        if bad:
            shown = ", ".join(repr(b[:80]) for b in bad[:3])
            allowed = ", ".join(ALLOWED.get(backend, ()))
            return (f"build option {shown} is not allowed for the {backend} backend. Fix: use "
                    f"only these options (each matched whole): {allowed or 'none'}")
    return None


def allowed_builds(builds: list[Any]) -> list[dict[str, Any]]:
    """The builds whose every option is allowed (what may reach the trusted builder)."""
    return [b for b in builds if isinstance(b, dict) and check_builds([b]) is None]
