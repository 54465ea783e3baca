"""A reusable pytest suite every backend must pass (like Optuna's ``testing/pytest_samplers``).

Subclass :class:`BackendContract` in a test module, set ``backend_name`` and provide the
sources and the launch call::

    class TestCppBackend(BackendContract):
        backend_name = "cpp"
        vector_add_source = VADD_SRC  # defines `vadd(a, b, out, n)`

        def launch_vector_add(self, module, a, b, out, n):
            module.vadd(a, b, out, n)

Each class gets its own backend instance; all share one temporary cache directory per test
session (so one-time tool builds such as the SYCL shim happen once), and every source the
suite builds carries a unique nonce declaration (a comment would not do: SYCL's persistent
cache keys on preprocessed code), so no earlier build can be a cache hit. Launch
tests skip when :meth:`launch_skip_reason` returns a reason (e.g. no device).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kernelwright.errors import BuildError
from kernelwright.registry import lookup
from kernelwright.tools.backends import BACKENDS
from kernelwright.tools.backends.base import Backend, BackendStatus, BuildResult, KernelModule

N = 1000  # not a multiple of any work-group size: bounds checks matter


class BackendContract:
    """The behaviour every backend promises; subclasses supply sources and launches."""

    backend_name: ClassVar[str] = ""
    language: ClassVar[str | None] = None
    #: Defines ``vadd(const float* a, const float* b, float* out, int n)``: out = a + b.
    vector_add_source: ClassVar[str] = ""
    #: A program-scope declaration valid in this language; ``{hex}`` makes it unique.
    nonce_template: ClassVar[str] = "static const int kw_contract_nonce_{hex} = 0;"
    #: A name the compiler will report in its error for ``broken_source``.
    undeclared_name: ClassVar[str] = "undeclared_identifier_xyz"

    # -- hooks -----------------------------------------------------------------------------

    @classmethod
    def make_backend(cls, settings: Any) -> Backend:
        """A new backend instance using ``settings`` (override to pass extra arguments)."""
        return lookup(BACKENDS, cls.backend_name, "backend")(settings)

    def broken_source(self) -> str:
        """The vector-add source with an undeclared identifier in the kernel body."""
        return self.vector_add_source.replace("b[i]", f"{self.undeclared_name}[i]", 1)

    def launch_vector_add(
        self, module: KernelModule, a: Any, b: Any, out: Any, n: int, *, wait: bool = True
    ) -> None:
        """Launch ``vadd`` with this backend's launch keywords; with ``wait=False`` launch
        asynchronously where the backend can (the suite then calls ``synchronize()``)."""
        raise NotImplementedError

    def make_inputs(self, n: int) -> tuple[Any, Any, Any]:
        """``a``, ``b`` and a poisoned ``out`` where this backend's kernels can read them."""
        import torch

        gen = torch.Generator().manual_seed(0)
        a, b = torch.randn(n, generator=gen), torch.randn(n, generator=gen)
        return a, b, torch.full((n,), float("nan"))

    @classmethod
    def launch_skip_reason(cls, backend: Backend) -> str | None:
        """Why launch tests cannot run here (``None``: they run)."""
        status = backend.status()
        return None if status.can_run else f"{cls.backend_name} cannot run here: {status.fix}"

    # -- fixtures --------------------------------------------------------------------------

    @pytest.fixture(scope="class")
    @classmethod
    def backend(cls, tmp_path_factory: pytest.TempPathFactory) -> Backend:
        from kernelwright.config import Settings

        root = contract_cache_root(tmp_path_factory)
        return cls.make_backend(Settings(data_dir=root / "data", cache_dir=root / "cache"))

    @pytest.fixture(scope="class")
    @classmethod
    def module(cls, backend: Backend) -> KernelModule:
        reason = cls.launch_skip_reason(backend)
        if reason:
            pytest.skip(reason)
        return backend.load_inline(cls.vector_add_source, language=cls.language)

    @classmethod
    def fresh(cls, source: str) -> str:
        """``source`` with a unique leading declaration, so no cache can already hold it."""
        return f"{cls.nonce_template.format(hex=uuid.uuid4().hex)}\n{source}"

    @pytest.fixture(scope="class")
    @classmethod
    def fresh_source(cls) -> str:
        return cls.fresh(cls.vector_add_source)

    @pytest.fixture(scope="class")
    @classmethod
    def first_build(cls, backend: Backend, fresh_source: str) -> BuildResult:
        return backend.build(fresh_source, language=cls.language)

    @pytest.fixture(scope="class")
    @classmethod
    def broken(cls) -> str:
        return cls.fresh(cls().broken_source())

    # -- the contract ----------------------------------------------------------------------

    def test_status_is_a_backend_status(self, backend: Backend) -> None:
        status = backend.status()
        assert isinstance(status, BackendStatus)
        assert status.name == self.backend_name
        assert status.usable or status.fix or status.detail

    def test_build_ok_lists_kernels(self, first_build: BuildResult) -> None:
        assert isinstance(first_build, BuildResult)
        assert first_build.ok, first_build.log
        assert first_build.backend == self.backend_name
        assert "vadd" in first_build.kernels
        assert not first_build.cached
        assert first_build.seconds > 0

    def test_rebuild_is_a_cache_hit(
        self, backend: Backend, fresh_source: str, first_build: BuildResult
    ) -> None:
        again = backend.build(fresh_source, language=self.language)
        assert again.ok and again.cached
        assert again.source_hash == first_build.source_hash
        assert again.kernels == first_build.kernels

    def test_options_change_the_build_key(
        self, backend: Backend, fresh_source: str, first_build: BuildResult
    ) -> None:
        defined = backend.build(fresh_source, language=self.language,
                                options=["-DKW_CONTRACT=1"])
        assert defined.ok, defined.log
        assert defined.source_hash != first_build.source_hash
        assert defined.options == ["-DKW_CONTRACT=1"]

    def test_compile_error_is_data_with_a_readable_log(
        self, backend: Backend, broken: str
    ) -> None:
        result = backend.build(broken, language=self.language)
        assert not result.ok
        assert self.undeclared_name in result.log
        assert "error" in result.log.lower()

    def test_load_inline_raises_build_error_with_the_log(
        self, backend: Backend, broken: str
    ) -> None:
        with pytest.raises(BuildError) as info:
            backend.load_inline(broken, language=self.language)
        assert self.undeclared_name in info.value.log

    def test_vector_add_is_exact(self, backend: Backend, module: KernelModule) -> None:
        a, b, out = self.make_inputs(N)
        self.launch_vector_add(module, a, b, out, N)
        backend.synchronize()
        assert _equal(out, a + b)

    def test_synchronize_waits_for_launched_work(
        self, backend: Backend, module: KernelModule
    ) -> None:
        a, b, out = self.make_inputs(N)
        for _ in range(3):
            self.launch_vector_add(module, a, b, out, N, wait=False)
        assert backend.synchronize() is None
        assert _equal(out, a + b)

    def test_unknown_kernel_is_a_clear_attribute_error(self, module: KernelModule) -> None:
        with pytest.raises(AttributeError, match=r"no_such_kernel.*vadd"):
            module.no_such_kernel  # noqa: B018


def contract_cache_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache root per test session shared by every contract class."""
    root = tmp_path_factory.getbasetemp() / "kernelwright-backend-contract"
    root.mkdir(exist_ok=True)
    return root


def _equal(x: Any, y: Any) -> bool:
    if hasattr(x, "cpu"):
        x, y = x.cpu(), y.cpu()
    return bool((x == y).all())
