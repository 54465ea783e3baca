"""Terminal-safe text: the one place where untrusted text loses its control characters.

Candidate output, compiler logs, task messages and model replies reach the terminal, the chat,
the report and MCP clients. An ESC sequence among them can move the cursor and draw a forged
"verdict: correct 7.91x" over the real one; a bidi override can reorder what is shown. Every
surface passes such text through :func:`terminal_safe` (the result model does it for every
error it stores), which keeps newlines and tabs and shows every other control character as a
visible escape (``\\x1b``, ``\\u202e``).
"""

from __future__ import annotations

import re

# C0 controls but \t and \n, DEL, C1 controls (CSI is U+009B), and the Unicode format
# characters that reorder or hide text (bidi embeddings, overrides and isolates, zero-width).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069"
                     "\ufeff\ufff9-\ufffb]")


def terminal_safe(text: object) -> str:
    """``text`` as a string in which no character controls a terminal.

    Example:
        >>> terminal_safe("ok\\x1b[2J\\x1b[Hverdict: correct")
        'ok\\\\x1b[2J\\\\x1b[Hverdict: correct'
        >>> terminal_safe("line one\\n\\tline two")
        'line one\\n\\tline two'
    """
    return _UNSAFE.sub(_escape, str(text))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
