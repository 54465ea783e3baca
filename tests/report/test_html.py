"""The HTML and Markdown reports: self-contained, and untrusted text stays text."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app
from kernelwright.report.html import write_report
from kernelwright.report.markdown import md_code, md_text


@pytest.fixture(scope="module")
def written(scripted_store, tmp_path_factory):
    """The scripted campaign's report, written once: (html text, markdown text)."""
    out = tmp_path_factory.mktemp("report")
    write_report(scripted_store, ["good", "hostile"], out / "r.html", out / "r.md")
    return (out / "r.html").read_text(), (out / "r.md").read_text()


@pytest.mark.slow
def test_html_is_self_contained_and_escapes_run_text(written):
    page = written[0]
    tags = _tags(page)
    assert not {"script", "iframe", "object", "embed", "link", "base"} & {t for t, _ in tags}
    handlers = [(t, a) for t, attrs in tags for a, _ in attrs if a.lower().startswith("on")]
    assert handlers == []
    assert not [t for t, _ in tags if t == "img"]  # the hostile <img> stayed text
    assert "&lt;script&gt;console.error(&#34;xss&#34;)&lt;/script&gt;" in page
    # nothing is fetched: every reference is a fragment or inline data, CSS included
    refs = [v for _, attrs in tags for a, v in attrs
            if a in ("src", "href", "xlink:href", "srcset", "action", "data") and v]  # fmt: skip
    assert refs and all(v.startswith(("#", "data:")) for v in refs), refs
    assert all(u.startswith(("#", "data:")) for u in re.findall(r"url\(\s*['\"]?([^)'\"]+)", page))
    assert page.count("<svg") == 2 + 2  # progress, roofline, one archive per run
    assert "Content-Security-Policy" in page


def test_markdown_escapes_and_fences(written):
    text = written[1]
    prose = re.sub(r"(`{3,})diff\n.*?\n\1", "", text, flags=re.S)  # code fences are inert
    assert "<script>" not in prose and r"\<script\>" in prose
    assert "fast\\_1" not in text and "| 3.00x [2.70x-3.30x] |" in text
    assert "````diff" in text  # the sources hold a ``` line, so the fence is longer


def test_md_helpers():
    assert md_text("a|b\nc [x](http://e)") == r"a\|b c \[x\]\(http://e\)"
    block = md_code("x = 1\n```\ny")
    assert block.startswith("````\n") and block.endswith("\n````")


@pytest.mark.slow
def test_cli_report_writes_both_files(scripted_store, tmp_path):
    out, md = tmp_path / "out" / "r.html", tmp_path / "out" / "r.md"
    result = CliRunner().invoke(
        app, ["report", "good", "hostile", "--html", str(out), "--md", str(md),
              "--store", str(scripted_store)]  # fmt: skip
    )
    assert result.exit_code == 0, result.output
    assert out.stat().st_size > 10_000 and md.read_text().startswith("# kernelwright report")


def test_cli_report_unknown_run_is_a_plain_error(scripted_store, tmp_path):
    result = CliRunner().invoke(
        app, ["report", "missing-run", "--html", str(tmp_path / "r.html"),
              "--store", str(scripted_store)]  # fmt: skip
    )
    assert result.exit_code == 2
    assert "no run 'missing-run'" in result.output and not (tmp_path / "r.html").exists()


def _tags(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Every start tag a browser's parser would build, with its attributes."""
    found: list = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Collect().feed(page)
    return found


def test_a_run_killed_before_its_first_step_still_reports(tmp_path):
    from kernelwright.graphs.store import RunStore

    RunStore(tmp_path).create_run("empty", {"task": "t", "backend": "cpp", "budget": 4,
                                            "status": "created"})  # fmt: skip
    write_report(tmp_path, ["empty"], tmp_path / "r.html", tmp_path / "r.md")
    page = (tmp_path / "r.html").read_text()
    assert "no correct kernel" in page and "nothing evaluated" in page
    assert "no correct candidate yet" in page and "no timed kernel" in page
    md = (tmp_path / "r.md").read_text()
    assert "| t | `empty` | created | **no correct kernel** | - |" in md
