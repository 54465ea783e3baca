"""terminal_safe: no character of untrusted text controls a terminal; ordinary text is kept."""

import pytest

from kernelwright.spec.result import EvalResult, VariantCheck
from kernelwright.spec.text import terminal_safe


@pytest.mark.parametrize("raw", ["\x1b[2J", "\x9b2J", "\r", "\x07", "\x08", "\x7f", "\u202e",
                                 "\u2066", "\u200b", "\x00", "\x1b]8;;file:///x\x1b\\"])
def test_control_characters_are_shown_escaped(raw):
    safe = terminal_safe(f"a{raw}b")
    assert safe.startswith("a") and safe.endswith("b")
    assert not any(ch in safe for ch in raw if not ch.isprintable())
    assert "\\x" in safe or "\\u" in safe


def test_ordinary_text_is_unchanged():
    text = "line 1\n\tline 2: max abs error 1e-3, naïve → 2.0x, 漢字"
    assert terminal_safe(text) == text


def test_results_hold_only_terminal_safe_text():
    r = EvalResult(task_name="t\x1b[1A", candidate_id="c", backend="torch", level=2,
                   error="boom\x1b[2K", variants=[VariantCheck(variant="v", seeds=1, ok=False,
                                                               message="x\x9by")])
    dumped = r.model_dump_json()
    assert "\x1b" not in dumped and "\x9b" not in dumped and "\\\\x1b[2K" in dumped
