"""`mcp`: serve kernelwright's tools to other agents over MCP (stdio or streamable HTTP)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

import typer

from kernelwright.cli._app import BackendOpt, ClusterOpt, StoreOpt, _fail, _settings, app


@app.command("mcp")
def mcp_server(
    transport: Annotated[
        Literal["stdio", "http"],
        typer.Option("--transport", help="http = streamable HTTP", case_sensitive=False),
    ] = "stdio",
    root: Annotated[
        list[Path] | None,
        typer.Option("--root", help="directory callers may name files in (repeatable)"),
    ] = None,
    store: StoreOpt = None,
    cluster: ClusterOpt = None,
    backend: BackendOpt = None,
    budget: Annotated[int | None, typer.Option(help="default evaluations per run",
                                               show_default="24")] = None,
    host: Annotated[str, typer.Option(help="http: address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="http: port to listen on")] = 8765,
) -> None:
    """Run the MCP server: optimize_kernel, run_status, best_kernel, evaluate_kernel, ..."""
    for folder in root or []:
        if not folder.is_dir():
            _fail(FileNotFoundError(f"--root {folder} is not a directory: pass a folder "
                                    "callers may name files in"))  # fmt: skip
    settings = _settings(backend=backend, budget=budget, cluster=cluster)
    if cluster:  # the runs it starts in the background read it from their environment
        os.environ["KERNELWRIGHT_CLUSTER"] = cluster
    try:
        from kernelwright.serve.mcp import serve
    except ImportError as exc:
        _fail(ImportError(f"the MCP server needs the mcp package ({exc}): "
                          "pip install 'kernelwright[mcp]'"))  # fmt: skip
    roots = root or [Path.cwd()]
    kind: Literal["stdio", "http"] = "http" if transport == "http" else "stdio"
    serve(settings, roots, store, kind, host, port)
