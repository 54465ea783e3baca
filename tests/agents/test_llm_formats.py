"""Reply formats: code blocks, SEARCH/REPLACE edits of evolve blocks, JSON; malformed variants."""

from __future__ import annotations

import pytest

from kernelwright.errors import ReplyFormatError
from kernelwright.prompts import (
    Edit,
    apply_edits,
    evolve_regions,
    extract_json,
    extract_module,
    parse_edits,
)

MODULE = (
    "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
    "        return x\n"
)

PARENT = '''import torch
from kernelwright.tools.backends import sycl

SRC = r"""
// [EVOLVE_START]
extern "C" void k(const float* x, float* y, int n) {
    y[0] = x[0];
}
// [EVOLVE_END]
"""
kern = sycl.load_inline(SRC)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        return y
'''


def edit(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"


@pytest.mark.parametrize(
    "text",
    [
        f"Here it is:\n```python\n{MODULE}```\nDone.",
        f"```py\n{MODULE}```",
        f"```\n{MODULE}```",
        f"````python\n{MODULE}````",
        f"```python\r\n{MODULE.replace(chr(10), chr(13) + chr(10))}```",
        f"```cpp\nint x;\n```\n```python\n{MODULE}```",
        MODULE,  # bare module, no fences
    ],
)
def test_extract_module_accepts(text):
    src = extract_module(text)
    assert "class ModelNew" in src and src.startswith("import torch")


def test_extract_module_prefers_block_defining_modelnew():
    text = f"```python\nprint('helper')\n```\n```python\n{MODULE}```"
    assert "class ModelNew" in extract_module(text)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "no code block"),
        ("I cannot help with that.", "no code block"),
        (f"```python\n{MODULE}", "cut off"),
        ("```python\nimport torch\nclass Model(torch.nn.Module): pass\n```", "ModelNew"),
        ("```cpp\nclass ModelNew {};\n```", "ModelNew"),
        ("```python\nclass ModelNew(:\n    pass\n```", "syntax error at line 1"),
        ("class ModelNew(\n", "syntax error"),
    ],
)
def test_extract_module_rejects(text, why):
    with pytest.raises(ReplyFormatError, match=why):
        extract_module(text)


def test_parse_edits_several_and_tolerant_markers():
    text = (
        "Reasoning first.\n" + edit("a = 1", "a = 2")
        + "<<<<<<<< SEARCH  \nb = 1\n========\nb = 3\n>>>>>>>> REPLACE\n"
    )
    assert parse_edits(text) == [Edit("a = 1\n", "a = 2\n"), Edit("b = 1\n", "b = 3\n")]


def test_parse_edits_empty_replace_deletes_lines():
    edits = parse_edits("<<<<<<< SEARCH\nx = 1\n=======\n>>>>>>> REPLACE\n")
    assert edits == [Edit("x = 1\n", "")]
    assert apply_edits("a = 0\nx = 1\nb = 2\n", edits) == "a = 0\nb = 2\n"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("no edits here", "no SEARCH/REPLACE"),
        ("<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", "lacks"),
        ("<<<<<<< SEARCH\na\n=======\nb\n", "lacks"),
        ("<<<<<<< SEARCH\n\n=======\nb\n>>>>>>> REPLACE\n", "empty SEARCH"),
        ("<<<<<<< SEARCH\na\n<<<<<<< SEARCH\nb\n=======\nc\n>>>>>>> REPLACE\n", "new SEARCH"),
        ("<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n=======\n", "lacks"),
    ],
)
def test_parse_edits_rejects(text, why):
    with pytest.raises(ReplyFormatError, match=why):
        parse_edits(text)


def test_evolve_regions_and_edit_inside():
    assert len(evolve_regions(PARENT)) == 1
    out = apply_edits(PARENT, parse_edits(edit("    y[0] = x[0];", "    y[0] = 2 * x[0];")))
    assert "2 * x[0]" in out and out.count("[EVOLVE_START]") == 1


def test_edit_with_trailing_whitespace_differences_still_applies():
    out = apply_edits(PARENT, [Edit("    y[0] = x[0];   ", "    y[0] = 0;")])
    assert "y[0] = 0;" in out


@pytest.mark.parametrize(
    ("edits", "why"),
    [
        ([Edit("y = torch.empty_like(x)", "y = x")], "outside"),
        ([Edit("not in the source", "x")], "not found"),
        ([Edit("x", "z")], "matches"),
        ([Edit("    y[0] = x[0];", "// [EVOLVE_END]\n")], "markers"),
        ([Edit("// [EVOLVE_END]", "")], "outside"),
    ],
)
def test_apply_edits_rejects(edits, why):
    with pytest.raises(ReplyFormatError, match=why):
        apply_edits(PARENT, edits)


def test_without_markers_whole_module_is_editable():
    out = apply_edits(MODULE, [Edit("return x", "return x + 0")])
    assert "return x + 0" in out


@pytest.mark.parametrize(
    "source", ["# [EVOLVE_START]\n", "# [EVOLVE_END]\n", "# [EVOLVE_START]\n# [EVOLVE_START]\n"]
)
def test_unbalanced_markers(source):
    with pytest.raises(ReplyFormatError):
        evolve_regions(source)


@pytest.mark.parametrize(
    "text",
    ['{"a": 1}', 'Sure!\n```json\n{"a": 1}\n```', 'prefix {"a": 1} suffix', '```\n{"a": 1}\n```'],
)
def test_extract_json(text):
    assert extract_json(text) == {"a": 1}


@pytest.mark.parametrize("text", ["", "[1, 2]", "{not json}", '```json\n{"a": \n```'])
def test_extract_json_rejects(text):
    with pytest.raises(ReplyFormatError, match="no valid JSON"):
        extract_json(text)
