"""Which loops of the lowered C++ kernels g++ vectorises, and why the others are not.

Lowers every task file of the given directories for the cpp backend (default schedule),
compiles the source the way the backend does (plus ``-fopt-info-vec-all``) and counts, per
task, the loops inside the kernels (``extern "C"`` functions, not the prelude) that were
vectorised and those that were not, with g++'s reason. A loop left scalar in a memory-bound
kernel costs up to the vector width (8 lanes with AVX2) in speed, so this is the first thing
to check when a C++ kernel trails eager.

    python benchmarks/vector_audit.py examples/tasks tests/corpus/tasks [--flags "-fno-math-errno"]

Compile only; nothing is run or timed.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from kernelwright.errors import KernelwrightError
from kernelwright.spec import Task
from kernelwright.tools.backends.cpp import DEFAULT_FLAGS
from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.backends import codegen_for

MESSAGE = re.compile(r":(\d+):\d+: (optimized|missed): (.*)")
LOOP_MISS = re.compile(r"not vectorized: (.*)")
OUTER_LOOP = ("two or more consecutive inner loops", "multiple nested loops")  # not a loss


def kernel_lines(source: str) -> set[int]:
    """Line numbers that belong to the kernels (from the first ``extern "C"`` on)."""
    lines = source.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith('extern "C"')),
                 len(lines))
    return set(range(first + 1, len(lines) + 1))


def audit(source: str, flags: list[str]) -> tuple[int, collections.Counter]:
    """(loops vectorised, Counter of reasons for loops left scalar) in the kernels.

    g++ reports a loop at a statement of its body: "couldn't vectorize loop" and then the
    reason. An outer loop fails at the same statement where its inner loop succeeds, or
    because it holds several inner loops; such a failure is no loss and is not counted."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.cpp"
        path.write_text(source)
        done = subprocess.run(["g++", *DEFAULT_FLAGS, *flags, "-fPIC", "-shared",
                               "-fopt-info-vec-all", str(path), "-o", str(Path(tmp) / "k.so")],
                              capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    ours = kernel_lines(source)
    vectorised: set[int] = set()
    failed: dict[int, str] = {}
    pending: int | None = None  # the line of the last "couldn't vectorize loop"
    for line in done.stderr.splitlines():
        found = MESSAGE.search(line)
        if not found or int(found.group(1)) not in ours:
            continue
        lineno, kind, text = int(found.group(1)), found.group(2), found.group(3)
        if kind == "optimized" and "loop vectorized" in text:
            vectorised.add(lineno)
        elif kind == "missed" and "couldn't vectorize loop" in text:
            pending = lineno
            failed.setdefault(lineno, "no reason given")
        elif kind == "missed" and pending is not None and (why := LOOP_MISS.search(text)):
            failed[pending] = why.group(1).rstrip(".")
            pending = None
    reasons = collections.Counter(r for n, r in failed.items() if n not in vectorised
                                  and not any(o in r for o in OUTER_LOOP))
    return len(vectorised), reasons


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--flags", default="", help="extra g++ options to compare")
    args = parser.parse_args()
    flags = [*codegen_for("cpp").compile_options, *args.flags.split()]
    print(f"g++ {' '.join(DEFAULT_FLAGS)} {' '.join(flags)}")
    total_v, total_m = 0, collections.Counter()
    for path in sorted(p for d in args.dirs for p in d.glob("*.py") if p.stem[0] != "_"):
        try:
            source = lower_task(Task.from_path(path), "cpp").source
            vectorised, reasons = audit(source, flags)
        except (KernelwrightError, RuntimeError, ValueError) as exc:
            print(f"{path.stem:60s} skipped: {str(exc).splitlines()[0][:80]}")
            continue
        total_v += vectorised
        total_m += reasons
        why = "; ".join(f"{n}x {r}" for r, n in reasons.most_common())
        print(f"{path.stem:60s} {vectorised:3d} vectorised  {sum(reasons.values()):3d} scalar"
              f"{'  (' + why + ')' if why else ''}")
    print(f"\nall: {total_v} loops vectorised, {sum(total_m.values())} left scalar")
    for reason, n in total_m.most_common():
        print(f"  {n:4d}  {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
