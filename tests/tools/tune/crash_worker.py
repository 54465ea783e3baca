"""A tuning loop run as a child process by test_crash_resume.py (not a test module).

Usage: crash_worker.py JOURNAL ARCHIVE LOG TARGET HANG_AT
Evaluates from the recorded table until TARGET evaluations are done; at trial HANG_AT it
writes LOG.hang and sleeps, mid-trial, so the parent can SIGKILL it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from conftest import make_table  # noqa: E402

from kernelwright.tools.evolve.archive import MapElitesArchive  # noqa: E402
from kernelwright.tools.tune.tuner import OptunaTuner  # noqa: E402


def cell(params: dict) -> tuple[int, int, int]:
    return (params["unroll"].bit_length() - 1, (params["tile"] - 1) // 2, params["vec"] // 2)


def main(journal: str, archive_path: str, log: str, target: int, hang_at: int) -> None:
    table = make_table()
    tuner = OptunaTuner(table.space(), storage_path=journal, seed=0)
    path = Path(archive_path)
    archive = MapElitesArchive.load(path) if path.exists() else MapElitesArchive(n_islands=2)
    with open(log, "a") as out:
        out.write(f"resumed recovered={tuner.recovered}\n")
        while tuner.n_evaluations < target:
            number, params = tuner.ask()
            out.write(f"start {number}\n")
            out.flush()
            if number == hang_at:
                Path(log + ".hang").write_text(str(number))
                time.sleep(600)
            result = table.result(params)
            record = tuner.tell(number, result)
            archive.add(result.candidate_id, cell(params), result, island=number % 2)
            archive.end_generation()
            archive.save(path)
            out.write(f"done {number} {record.value}\n")
            out.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
