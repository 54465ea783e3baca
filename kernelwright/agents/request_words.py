"""The words the offline request parser reads: dtypes, numbers, and one pattern per field
(task path, backend, budget, time limit, tolerances, implementation spaces).

Kept apart from the parser's logic (``request_parser.py``) so each file stays small; the
paraphrases each family covers are tested in ``tests/chat/test_request_parser.py``.
"""

from __future__ import annotations

import re

from kernelwright.spec.opclass import ImplementationSpace

DTYPE_WORDS = {
    "fp32": "float32", "float32": "float32", "f32": "float32", "single": "float32",
    "fp16": "float16", "float16": "float16", "f16": "float16", "half": "float16",
    "bf16": "bfloat16", "bfloat16": "bfloat16",
    "fp64": "float64", "float64": "float64", "double": "float64",
}  # fmt: skip
_DTYPE = "|".join(sorted(DTYPE_WORDS, key=len, reverse=True))
_NUMBER = r"(\d+(?:\.\d+)?(?:e-?\d+)?)"
SCI = r"\b(\d+(?:\.\d+)?e-\d+)\b"

FENCE = re.compile(r"```[a-zA-Z0-9_+-]*[ \t]*\n(.*?)(?:\n```|\Z)", re.S)
PATH = re.compile(r"(?<![\w/.~-])((?:~|\.{1,2})?/?[\w./~-]*[\w-]\.py)\b")
BACKEND_WORDS = {
    "sycl": "sycl", "dpc++": "sycl", "dpcpp": "sycl", "oneapi": "sycl", "cpp": "cpp",
    "c++": "cpp", "openmp": "cpp", "omp": "cpp", "cuda": "cuda", "nvcc": "cuda",
}  # fmt: skip
_NOT = (r"no|not|without|avoid|instead\s+of|rather\s+than|never|don'?t\s+use|do\s+not\s+use|"
        r"not\s+in|not\s+on|skip")  # fmt: skip
BACKEND = re.compile(
    rf"(?<![\w+])((?:{_NOT})\s+)?(" + "|".join(map(re.escape, BACKEND_WORDS)) + r")"
    r"(?![\w+])",
    re.I,
)
BUDGET = [
    re.compile(r"\bbudget(?:\s+of)?\s*(?:=|:|to)?\s*(\d+)", re.I),
    re.compile(
        r"\b(\d+)\s*(?:more\s+|extra\s+|further\s+)?(?:evaluations?|evals?|tries|attempts|"
        r"candidates|kernels|rounds?|iterations?|shots?|goes|variants?)\b",
        re.I,
    ),
    re.compile(r"\b(?:try|give\s+it|another|spend|allow)\s+(\d+)(?:\s+more)?\b"
               r"(?!\s*(?:s\b|sec|min|m\b|h\b|hours?|%|x\b))", re.I),  # fmt: skip
    re.compile(r"\b(\d+)\s+more\b(?!\s*(?:s\b|sec|min|m\b|h\b|hours?|%))", re.I),
]
TIME = re.compile(
    r"\b(?:in|within|for|under|at\s+most|no\s+more\s+than|no\s+longer\s+than|up\s+to|"
    r"max(?:imum)?|you\s+have|stop\s+after|after|limit(?:\s+it)?\s+to|"
    r"time\s*limit(?:\s+of)?(?:\s*[:=])?)\s+" + _NUMBER
    + r"\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h)\b",
    re.I,
)  # fmt: skip
UNIT = {"s": 1.0, "m": 60.0, "h": 3600.0}
EXACT = re.compile(
    rf"(?:\b({_DTYPE})\s+)?\b(?:(?:bit[- ]?)?exact(?:ly)?|bit[- ]?for[- ]bit|bitwise(?:\s+"
    rf"identical)?|identical\s+(?:results|outputs?|numbers)|no\s+(?:numerical\s+)?"
    rf"(?:error|drift)\s+at\s+all)\b(?:\s+(?:in\s+|for\s+)?({_DTYPE})\b)?",
    re.I,
)  # fmt: skip
LOOSE = re.compile(
    rf"\b({_DTYPE})(?:[- ]level)?\s+(?:precision\s+|accuracy\s+|error\s+|rounding\s+)?"
    r"(?:is\s+|are\s+)?(?:ok|okay|fine|acceptable|good\s+enough|enough|allowed|alright)\b"
    rf"|\b(?:allow|accept|tolerate)\s+({_DTYPE})(?:[- ]level)?(?:\s+(?:error|precision|"
    r"accuracy|rounding))?\b",
    re.I,
)  # fmt: skip
ATOL = re.compile(rf"\batol\s*[=:]?\s*{_NUMBER}", re.I)
RTOL = re.compile(rf"\brtol\s*[=:]?\s*{_NUMBER}", re.I)
TOL = re.compile(
    rf"\b(?:tolerance|tol|within|error)\s*(?:of\s+)?[=:]?\s*{_NUMBER}(?!\s*[a-z])", re.I
)
_VENDOR, _FRAMEWORK = ImplementationSpace.VENDOR_LIBRARY, ImplementationSpace.FRAMEWORK
_LIBS = (r"(?:vendor\s+(?:lib\w*|code|routines|kernels)|(?:external|third[- ]party|math|"
         r"linear[- ]algebra)\s+lib\w*|libraries|libs|cublas\w*|cudnn|cutlass|onednn|dnnl|mkl|"
         r"onemkl|blas|gemm\s+libraries)")  # fmt: skip
_TORCH = (r"(?:torch|pytorch|framework|aten)(?:\.compile|\s+ops|\s+operators|\s+calls|"
          r"\s+functions|\s+kernels)?")  # fmt: skip
_NEG = (r"(?:no|without|avoid|not|never|skip|ban|forbid|don'?t\s+(?:use|call|touch)|"
        r"do\s+not\s+(?:use|call|touch)|can'?t\s+use|cannot\s+use|mustn'?t\s+use|"
        r"must\s+not\s+use|not\s+allowed\s+to\s+use)")  # fmt: skip
_YES = (r"(?:ok|okay|fine|allowed|permitted|acceptable|welcome|good|alright)")
_MAY = (r"(?:may|can|could|are\s+free\s+to|feel\s+free\s+to|free\s+to|allowed\s+to|go\s+ahead"
        r"\s+and|ok\s+to|okay\s+to|fine\s+to|are\s+welcome\s+to)")  # fmt: skip


def _space_rule(terms: str) -> list[tuple[re.Pattern, str]]:
    """The exclude and include patterns for one family of terms (libraries, torch)."""
    return [
        (re.compile(rf"\b{_NEG}\s+(?:any\s+|the\s+|using\s+|calling\s+|falling\s+back\s+"
                    rf"to\s+)?{terms}\b|\b{terms}\s+(?:are|is)\s+(?:not\s+{_YES}|forbidden|"
                    rf"off[- ]limits|banned|out)\b|\bdon'?t\s+fall\s+back\s+to\s+{terms}\b",
                    re.I), "exclude"),  # fmt: skip
        (re.compile(rf"\b{terms}\s+(?:are\s+|is\s+)?{_YES}\b|\b{_MAY}\s+(?:use|call|try|rely"
                    rf"\s+on)\s+(?:the\s+|a\s+|some\s+)?{terms}\b|\b(?:allow|permit|"
                    rf"enable)\s+(?:the\s+)?{terms}\b|^\s*(?:please\s+)?(?:use|try|call)\s+"
                    rf"(?:the\s+|a\s+)?{terms}\b",
                    re.I | re.M), "include"),  # fmt: skip
    ]


SPACE_RULES: list[tuple[re.Pattern, str, ImplementationSpace]] = [
    *((p, kind, _VENDOR) for p, kind in _space_rule(_LIBS)),
    *((p, kind, _FRAMEWORK) for p, kind in _space_rule(_TORCH)),
    (re.compile(r"\b(?:custom|hand[- ]?written|handwritten|your\s+own)\s+kernels?\s+only\b|"
                r"\bonly\s+(?:custom|hand[- ]?written|handwritten|your\s+own)\s+kernels?\b|"
                r"\bwrite\s+(?:the|your|a)\s+(?:own\s+)?kernels?\s+(?:yourself|by\s+hand)\b|"
                r"\bnothing\s+but\s+(?:custom|hand[- ]?written)\s+kernels?\b",
                re.I), "only", ImplementationSpace.CUSTOM_KERNEL),
]  # fmt: skip
NAME_WORDS = (
    "softmax", "layernorm", "layer_norm", "rmsnorm", "gelu", "relu", "matmul", "gemm",
    "transpose", "reduction", "sum", "attention", "conv",
)  # fmt: skip
