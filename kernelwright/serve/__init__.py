"""kernelwright for other agents: an MCP server and a LangChain / LangGraph tool.

Modules are imported lazily by their users (``mcp`` is an optional dependency).
"""

__all__: list[str] = []
