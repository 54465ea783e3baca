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


# Paraphrases a user types in a rejection or a first request, by family. Each row is
# (text, the field, what it must read as); the families were written before the rules.
PARAPHRASES = [
    # vendor libraries allowed
    ("you may use vendor libraries (BLAS)", "include_spaces", [VENDOR]),
    ("feel free to use cuBLAS", "include_spaces", [VENDOR]),
    ("go ahead and call MKL", "include_spaces", [VENDOR]),
    ("vendor libs are allowed", "include_spaces", [VENDOR]),
    ("BLAS is fine", "include_spaces", [VENDOR]),
    ("you can rely on oneDNN", "include_spaces", [VENDOR]),
    ("allow vendor libraries", "include_spaces", [VENDOR]),
    ("use oneMKL", "include_spaces", [VENDOR]),
    # vendor libraries excluded
    ("don't use vendor libraries", "exclude_spaces", [VENDOR]),
    ("do not call cuBLAS please", "exclude_spaces", [VENDOR]),
    ("avoid MKL", "exclude_spaces", [VENDOR]),
    ("no external libraries", "exclude_spaces", [VENDOR]),
    ("vendor libraries are not allowed", "exclude_spaces", [VENDOR]),
    ("you must not use BLAS", "exclude_spaces", [VENDOR]),
    # torch operators
    ("torch ops are fine", "include_spaces", [FRAMEWORK]),
    ("you can use torch.compile", "include_spaces", [FRAMEWORK]),
    ("don't fall back to torch", "exclude_spaces", [FRAMEWORK]),
    ("no pytorch calls in the kernel", "exclude_spaces", [FRAMEWORK]),
    ("pytorch operators are off-limits", "exclude_spaces", [FRAMEWORK]),
    # custom kernels only
    ("only hand-written kernels", "only_spaces", [CUSTOM]),
    ("write the kernel yourself", "only_spaces", [CUSTOM]),
    ("nothing but custom kernels", "only_spaces", [CUSTOM]),
    ("handwritten kernels only", "only_spaces", [CUSTOM]),
    # backends
    ("use OpenMP on the CPU", "backend", "cpp"),
    ("target CUDA", "backend", "cuda"),
    ("port it to SYCL", "backend", "sycl"),
    ("in C++ instead of sycl", "backend", "cpp"),
    ("not cuda, use cpp", "backend", "cpp"),
    ("try oneAPI", "backend", "sycl"),
    # budgets
    ("try 10 more", "budget", 10),
    ("give it 8 more evaluations", "budget", 8),
    ("spend up to 20 evaluations", "budget", 20),
    ("at most 15 candidates", "budget", 15),
    ("budget: 5", "budget", 5),
    ("another 6 rounds", "budget", 6),
    # time limits
    ("take at most 5 minutes", "time_limit_s", 300.0),
    ("you have 10 min", "time_limit_s", 600.0),
    ("stop after 2 hours", "time_limit_s", 7200.0),
    ("no more than 30 seconds", "time_limit_s", 30.0),
    ("time limit: 90 s", "time_limit_s", 90.0),
    # tolerances
    ("keep it bit-exact", "tolerances", {"*": (0.0, 0.0)}),
    ("must match exactly in fp32", "tolerances", {"float32": (0.0, 0.0)}),
    ("half precision is acceptable", "tolerances", {"float32": (1e-2, 1e-2)}),
    ("bf16 accuracy is good enough", "tolerances", {"float32": (1e-2, 1e-2)}),
    ("allow fp16-level error", "tolerances", {"float32": (1e-2, 1e-2)}),
    ("1e-3 error is fine", "tolerances", {"*": (1e-3, 1e-3)}),
    ("bitwise identical outputs", "tolerances", {"*": (0.0, 0.0)}),
]


def test_at_least_forty_paraphrases():
    assert len(PARAPHRASES) >= 40


@pytest.mark.parametrize(("text", "field", "expected"), PARAPHRASES,
                         ids=[t for t, _, _ in PARAPHRASES])  # fmt: skip
def test_paraphrases_are_understood(text, field, expected):
    request = parse(text)
    assert getattr(request, field) == expected, request.describe()


@pytest.mark.parametrize("text", [
    "make it faster", "the last one was slower", "try larger work per thread",
    "use fewer registers", "looks wrong to me",
])  # fmt: skip
def test_words_without_a_field_change_no_field_and_chat_says_so(text):
    from kernelwright.cli.chat import understood

    request = parse(text)
    assert request.model_dump(exclude={"text"}) == RunRequest().model_dump(exclude={"text"})
    assert not understood(text)  # the chat tells the user the reason changed no setting
    assert understood(text + ", and you may use BLAS")
