"""Relational GCN encoder with basis decomposition and a pooled readout.

Layer (Schlichtkrull et al., 2018), with ``B`` bases shared by the relations of a layer:

    h_i' = W_0 h_i + sum_r sum_{j in N_r(i)} (1 / |N_r(i)|) W_r h_j,    W_r = sum_b a_rb V_b

Readout of a graph: ``[mean_i h_i | max_i h_i | h_kernel]`` over the last layer (the kernel node,
node 0 of every graph, carries the launch geometry). A two-layer projection head maps the
readout to the space of the contrastive loss; clustering uses the readout (as GraphCL does).
This module imports torch and torch-geometric; the rest of the sampler imports it lazily.

Example:
    >>> enc = RGCNEncoder(hidden=32)
    >>> enc
    RGCNEncoder(hidden=32, layers=2, num_bases=4, relations=10)
"""

from __future__ import annotations

import torch
from torch_geometric.nn import RGCNConv, global_max_pool, global_mean_pool

from kernelwright.tools.sampler.hrg import NUM_FEATURES, NUM_RELATIONS


class RGCNEncoder(torch.nn.Module):
    """RGCN layers (basis decomposition), a pooled readout and a projection head."""

    def __init__(self, hidden: int = 64, layers: int = 2, num_bases: int = 4, proj: int = 64):
        super().__init__()
        self.config = {"hidden": hidden, "layers": layers, "num_bases": num_bases, "proj": proj}
        dims = [NUM_FEATURES] + [hidden] * layers
        self.convs = torch.nn.ModuleList(
            RGCNConv(dims[i], dims[i + 1], NUM_RELATIONS, num_bases=num_bases)
            for i in range(layers)
        )
        self.head = torch.nn.Sequential(
            torch.nn.Linear(3 * hidden, proj), torch.nn.ReLU(), torch.nn.Linear(proj, proj)
        )

    def __repr__(self) -> str:
        c = self.config
        return (f"RGCNEncoder(hidden={c['hidden']}, layers={c['layers']}, "
                f"num_bases={c['num_bases']}, relations={NUM_RELATIONS})")  # fmt: skip

    def embed(self, batch) -> torch.Tensor:
        """Readout ``[mean | max | kernel node]`` per graph of a PyG ``Batch``."""
        h = batch.x
        for conv in self.convs:
            h = torch.relu(conv(h, batch.edge_index, batch.edge_type))
        kernel = h[batch.ptr[:-1]]
        return torch.cat([global_mean_pool(h, batch.batch), global_max_pool(h, batch.batch),
                          kernel], 1)  # fmt: skip

    def forward(self, batch) -> torch.Tensor:
        """Projection of the readout (the contrastive loss's space)."""
        return self.head(self.embed(batch))
