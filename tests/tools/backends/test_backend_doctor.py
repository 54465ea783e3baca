"""doctor(): one status per registered backend, never raising."""

from __future__ import annotations

import pytest

from kernelwright.config import Settings
from kernelwright.testing.backend_contract import contract_cache_root
from kernelwright.tools.backends import BACKENDS, doctor


@pytest.fixture
def settings(tmp_path_factory):
    """The contract suite's session cache: the SYCL shim is built once per session."""
    return Settings(cache_dir=contract_cache_root(tmp_path_factory) / "cache")


@pytest.mark.slow
def test_every_backend_reports(settings):
    statuses = doctor.doctor(settings)
    assert [s.name for s in statuses] == list(BACKENDS)
    for s in statuses:
        assert s.usable or s.fix, f"{s.name} is unusable without a fix: {s.detail}"


def test_a_broken_backend_is_reported_not_raised(tmp_settings, monkeypatch):
    monkeypatch.setitem(BACKENDS, "broken", "kernelwright.tools.backends.no_such_module:X")
    status = doctor.probe("broken", tmp_settings)
    assert not status.can_compile and not status.can_run
    assert "ModuleNotFoundError" in status.detail and status.fix
