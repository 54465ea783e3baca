"""The request parser: offline rules on the words users type, and the LLM policy's fallback."""

from __future__ import annotations

import pytest

from kernelwright.agents.llm import LLMClient, LLMSettings, make_chat_model
from kernelwright.agents.request_parser import (
    LLMRequestParser,
    OfflineRequestParser,
    RunRequest,
)
from kernelwright.spec import ImplementationSpace
from kernelwright.testing.scripted_llm import ScriptedLLM, reply, tool_call

VENDOR, FRAMEWORK, CUSTOM = (
    ImplementationSpace.VENDOR_LIBRARY,
    ImplementationSpace.FRAMEWORK,
    ImplementationSpace.CUSTOM_KERNEL,
)
PASTED = """make this softmax faster, bf16 ok
```python
import torch

class Model(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)

def get_inputs():
    return [torch.randn(8, 16)]
```
"""


def parse(text: str) -> RunRequest:
    return OfflineRequestParser().parse(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("make examples/tasks/l1_gelu.py faster, keep fp32 exact", {"float32": (0.0, 0.0)}),
        ("speed up t.py, exact please", {"*": (0.0, 0.0)}),
        ("t.py: bit-exact in fp16", {"float16": (0.0, 0.0)}),
        ("t.py bf16 ok", {"float32": (1e-2, 1e-2)}),
        ("t.py, fp16 is fine", {"float32": (1e-2, 1e-2)}),
        ("t.py with tolerance 1e-3", {"*": (1e-3, 1e-3)}),
        ("t.py within 0.0005", {"*": (5e-4, 5e-4)}),
        ("t.py atol 1e-5 rtol 1e-3", {"*": (1e-5, 1e-3)}),
        ("t.py, 2e-4 is enough", {"*": (2e-4, 2e-4)}),
        ("t.py as fast as possible", {}),
    ],
)
def test_tolerance_words(text, expected):
    assert parse(text).tolerances == expected


@pytest.mark.parametrize(
    ("text", "include", "exclude", "only"),
    [
        ("t.py, no vendor libraries", [], [VENDOR], []),
        ("t.py without cuBLAS", [], [VENDOR], []),
        ("t.py, vendor libraries are fine", [VENDOR], [], []),
        ("t.py, torch ops ok", [FRAMEWORK], [], []),
        ("t.py, no torch ops", [], [FRAMEWORK], []),
        ("t.py, custom kernels only", [], [], [CUSTOM]),
    ],
)
def test_space_words(text, include, exclude, only):
    request = parse(text)
    assert (request.include_spaces, request.exclude_spaces, request.only_spaces) == (
        include,
        exclude,
        only,
    )


def test_task_backend_budget_and_time():
    request = parse("please make ./kernels/my_op.py faster on cpp, budget 12, in 5 minutes")
    assert request.task_path == "./kernels/my_op.py"
    assert (request.backend, request.budget, request.time_limit_s) == ("cpp", 12, 300.0)
    assert parse("x.py, 20 evaluations with c++").budget == 20
    assert parse("x.py, 20 evaluations with c++").backend == "cpp"
    assert parse("x.py no cuda, use sycl").backend == "sycl"  # "no cuda" is not a choice
    assert parse("x.py").backend is None and parse("x.py").budget is None


def test_pasted_module_is_the_task_and_its_words_still_count():
    request = parse(PASTED)
    assert request.task_path is None
    assert request.task_source.startswith("import torch") and "get_inputs" in request.task_source
    assert request.task_name == "chat_softmax"
    assert request.tolerances == {"float32": (1e-2, 1e-2)}


def test_unfenced_pasted_module():
    text = "faster please\nimport torch\nclass Model(torch.nn.Module):\n    pass\n"
    text += "def get_inputs():\n"
    request = parse(text + "    return []\n")
    assert request.task_source.startswith("import torch")


def test_allowed_spaces_and_amendments():
    first = parse("t.py vendor libraries ok, fp32 exact")
    assert first.allowed_spaces([CUSTOM]) == [CUSTOM, VENDOR]
    later = first.amended(parse("no vendor libraries, tolerance 1e-4"))
    assert later.allowed_spaces([CUSTOM, VENDOR]) == [CUSTOM]
    assert later.tolerances == {"float32": (0.0, 0.0), "*": (1e-4, 1e-4)}
    assert later.task_path == "t.py"
    assert "tolerance float32: atol=0 rtol=0" in later.describe()


@pytest.fixture
def client(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedLLM() as llm:
        settings = LLMSettings(model=llm.model, base_url=llm.base_url, max_retries=0)
        yield llm, LLMClient(make_chat_model(settings), settings)


def test_llm_parser_uses_the_models_fields_but_never_an_invented_path(client):
    llm, chat = client
    llm.push(
        tool_call(
            "RequestReply",
            {
                "task_path": "invented.py",
                "backend": "cpp",
                "budget": 9,
                "tolerances": [{"dtype": "fp32", "atol": 0, "rtol": 0}],
                "exclude_spaces": ["vendor_library"],
            },
        )
    )
    request = LLMRequestParser(chat).parse("speed up real.py; keep single precision identical")
    assert request.parser == "llm"
    assert (request.backend, request.budget) == ("cpp", 9)
    assert request.tolerances == {"float32": (0.0, 0.0)}
    assert request.exclude_spaces == [VENDOR]
    assert request.task_path == "real.py"  # from the text; the model's name is not in it
    sent = llm.requests[0]["messages"][-1]["content"]
    assert "keep single precision identical" in sent


def test_llm_parser_falls_back_to_the_offline_rules_with_a_note(client):
    llm, chat = client
    llm.push(reply("sure! budget is big"), reply('{"backend": "fortran"}'))
    request = LLMRequestParser(chat).parse("make t.py faster with cpp, budget 3")
    assert request.parser == "offline"
    assert (request.task_path, request.backend, request.budget) == ("t.py", "cpp", 3)
    assert any("malformed" in note for note in request.notes)
    assert chat.ledger.totals().calls == 2


def test_llm_parser_falls_back_when_the_endpoint_fails(client):
    llm, chat = client  # an empty script answers HTTP 500
    request = LLMRequestParser(chat).parse("t.py, budget 4")
    assert request.budget == 4 and request.parser == "offline"
    assert any("failed" in note for note in request.notes)
