"""Workload sampling: choose the few kernel invocations worth simulating, and their weights.

GCL-Sampler (trace graphs -> relational GCN trained by contrastive learning -> K-Means) beside
the published baselines (PKA, Sieve, STEM+ROOT, Photon) and random sampling. Samplers read
traces and cheap profiles only; :mod:`.groundtruth` holds the reference cycles they are scored
against (:mod:`.score`). torch / torch-geometric are imported only when the GCL encoder is used.
"""

from kernelwright.tools.sampler.api import Representative, SampleReport, sample_trace_dir
from kernelwright.tools.sampler.base import Sample, Sampler, Selection
from kernelwright.tools.sampler.hrg import GraphOptions, TraceGraph, build_graph
from kernelwright.tools.sampler.invocations import (
    Invocation,
    KernelProfile,
    WorkloadTraces,
    scan_trace_dir,
)
from kernelwright.tools.sampler.reduce import read_weights, write_reduced_trace
from kernelwright.tools.sampler.registry import SAMPLERS, get_sampler
from kernelwright.tools.sampler.score import Score, Summary, score, summarize

__all__ = [
    "SAMPLERS",
    "GraphOptions",
    "Invocation",
    "KernelProfile",
    "Representative",
    "Sample",
    "SampleReport",
    "Sampler",
    "Score",
    "Selection",
    "Summary",
    "TraceGraph",
    "WorkloadTraces",
    "build_graph",
    "get_sampler",
    "read_weights",
    "sample_trace_dir",
    "scan_trace_dir",
    "score",
    "summarize",
    "write_reduced_trace",
]
