"""The SYCL runtime environment: computed without dpctl, applied before dpctl is imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernelwright.tools.backends import sycl_env as _env


def test_runtime_env_names_the_icd_and_the_cache(tmp_settings):
    env = _env.runtime_env(tmp_settings)
    assert env["ONEAPI_DEVICE_SELECTOR"] == "*:cpu"
    assert env["SYCL_CACHE_PERSISTENT"] == "1"
    assert env["SYCL_CACHE_DIR"] == str(tmp_settings.cache_dir / _env.sycl_cache_name())
    icd = _env.find_icd_library()
    if icd is not None:
        assert env["OCL_ICD_FILENAMES"] == str(icd) and icd.name == "libintelocl.so"


def test_icd_is_found_next_to_site_packages(tmp_path, monkeypatch):
    prefix = tmp_path / "venv"
    (prefix / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (prefix / "lib" / "libintelocl.so").write_bytes(b"")
    monkeypatch.setattr(_env.sys, "prefix", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(_env.site, "getsitepackages",
                        lambda: [str(prefix / "lib" / "python3.11" / "site-packages")])
    assert _env.find_icd_library() == prefix / "lib" / "libintelocl.so"


def test_missing_runtime_leaves_the_icd_unset(tmp_settings, monkeypatch):
    monkeypatch.setattr(_env, "find_icd_library", lambda: None)
    assert "OCL_ICD_FILENAMES" not in _env.runtime_env(tmp_settings)


@pytest.mark.slow
def test_computing_the_env_does_not_import_dpctl():
    code = textwrap.dedent("""
        import sys
        from kernelwright.tools.backends.sycl_env import runtime_env
        runtime_env()
        import kernelwright.tools.backends.sycl  # importing the backend must stay cheap too
        assert "dpctl" not in sys.modules, "dpctl imported"
    """)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_apply_sets_os_environ_before_dpctl(tmp_settings, monkeypatch):
    monkeypatch.delitem(sys.modules, "dpctl", raising=False)
    for key in ("OCL_ICD_FILENAMES", "SYCL_CACHE_DIR", "ONEAPI_DEVICE_SELECTOR"):
        monkeypatch.delenv(key, raising=False)
    applied = _env.apply_runtime_env(tmp_settings)
    assert applied and _env.os.environ["SYCL_CACHE_DIR"] == applied["SYCL_CACHE_DIR"]
    assert _env.os.environ["ONEAPI_DEVICE_SELECTOR"] == "*:cpu"


def test_apply_after_dpctl_warns_and_changes_nothing(tmp_settings, monkeypatch):
    monkeypatch.setitem(sys.modules, "dpctl", object())
    monkeypatch.delenv("OCL_ICD_FILENAMES", raising=False)
    monkeypatch.delenv("SYCL_CACHE_DIR", raising=False)
    with pytest.warns(RuntimeWarning, match="dpctl was imported before"):
        assert _env.apply_runtime_env(tmp_settings) == {}
    assert "SYCL_CACHE_DIR" not in _env.os.environ


@pytest.mark.requires_sycl
def test_a_fresh_process_sees_the_intel_cpu_device(tmp_settings):
    code = "import dpctl; d = dpctl.SyclDevice('opencl:cpu'); print(d.name)"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), **_env.runtime_env(tmp_settings)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize(("vendor", "flags", "own", "want"), [
    ("AuthenticAMD", "sse4_2 avx2 avx512f", None, "core-avx2"),  # its AVX-512 code ran slower
    ("AuthenticAMD", "sse4_2", None, None),  # no AVX2: the runtime's own choice
    ("GenuineIntel", "sse4_2 avx2 avx512f", None, None),
    ("AuthenticAMD", "avx2 avx512f", "skx", "skx"),  # the user's setting wins everywhere
])
def test_the_opencl_target_isa_follows_the_cpu_and_the_user(tmp_settings, monkeypatch, vendor,
                                                              flags, own, want):
    monkeypatch.setattr(_env, "cpu_fields", lambda: {"vendor_id": vendor, "flags": flags})
    if own is None:
        monkeypatch.delenv(_env.TARGET_ARCH, raising=False)
    else:
        monkeypatch.setenv(_env.TARGET_ARCH, own)
    assert _env.runtime_env(tmp_settings).get(_env.TARGET_ARCH) == want


@pytest.mark.requires_sycl
def test_doctor_names_the_target_isa(tmp_settings, monkeypatch):
    from kernelwright.tools.backends.sycl import SyclBackend

    monkeypatch.setenv(_env.TARGET_ARCH, "core-avx2")
    assert "target ISA core-avx2 (CL_CONFIG_CPU_TARGET_ARCH)" in SyclBackend(
        tmp_settings).status().detail
