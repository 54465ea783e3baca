"""GraphCL-style contrastive training of the RGCN encoder (You et al., 2020).

Each graph gives two views, each made by a random subset (at least one) of three augmentations:

* node dropping - remove a fraction ``p`` of instruction nodes and their edges;
* edge perturbation - remove a fraction ``p`` of edges and add as many random ones (random
  relation);
* attribute masking - zero the feature rows of a fraction ``p`` of instruction nodes.

The loss is NT-Xent over a batch of ``n`` graphs (``2n`` views, ``z`` L2-normalised, ``tau``
temperature), for the positive pair (i, j):

    l(i, j) = -log( exp(z_i . z_j / tau) / sum_{k != i} exp(z_i . z_k / tau) )

averaged over both directions of every pair. Everything is seeded (``torch.Generator`` and a
``numpy.random.Generator`` owned by the trainer) and runs on the CPU.

Example:
    >>> result = train_encoder(graphs, TrainConfig(epochs=5, seed=0))  # doctest: +SKIP
    >>> result.seconds, result.losses[-1] < result.losses[0]  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.data import Batch, Data

from kernelwright.tools.sampler.hrg import NUM_RELATIONS, TraceGraph
from kernelwright.tools.sampler.rgcn import RGCNEncoder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of contrastive training (defaults used by the benchmark)."""

    epochs: int = 8
    batch_size: int = 64
    lr: float = 1e-3
    tau: float = 0.2
    drop: float = 0.1  # fraction for each augmentation
    hidden: int = 32
    layers: int = 2
    num_bases: int = 4
    seed: int = 0
    threads: int = 1  # torch intra-op threads (the CI machine is small)


@dataclass
class TrainResult:
    """A trained encoder and what training cost."""

    encoder: RGCNEncoder
    config: TrainConfig
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0
    graphs: int = 0

    def save(self, path: str | Path) -> Path:
        """Write ``state_dict`` to ``path`` (``.pt``) and the config to ``path.json``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save(self.encoder.state_dict(), path)
        meta = {"config": asdict(self.config), "losses": self.losses, "seconds": self.seconds,
                "graphs": self.graphs}  # fmt: skip
        path.with_suffix(".json").write_text(json.dumps(meta, indent=1))
        return path


def load_encoder(path: str | Path) -> tuple[RGCNEncoder, TrainConfig]:
    """An encoder saved by :meth:`TrainResult.save`."""
    path = Path(path)
    cfg = TrainConfig(**json.loads(path.with_suffix(".json").read_text())["config"])
    enc = RGCNEncoder(cfg.hidden, cfg.layers, cfg.num_bases)
    enc.load_state_dict(torch.load(path, weights_only=True))
    enc.eval()
    return enc, cfg


def to_data(g: TraceGraph) -> Data:
    """A PyG ``Data`` of a :class:`TraceGraph`."""
    return Data(x=torch.from_numpy(g.x), edge_index=torch.from_numpy(g.edge_index),
                edge_type=torch.from_numpy(g.edge_type),
                node_type=torch.from_numpy(g.node_type))  # fmt: skip


class Augmenter:
    """Random GraphCL views of instruction graphs (node 0, the kernel node, is always kept)."""

    def __init__(self, p: float, rng: np.random.Generator) -> None:
        self.p, self.rng = p, rng

    def view(self, d: Data) -> Data:
        ops = [op for op in (self.drop_nodes, self.perturb_edges, self.mask_attributes)
               if self.rng.random() < 0.5]  # fmt: skip
        if not ops:
            ops = [(self.drop_nodes, self.perturb_edges, self.mask_attributes)[
                self.rng.integers(3)]]  # fmt: skip
        for op in ops:
            d = op(d)
        return d

    def _instructions(self, d: Data) -> np.ndarray:
        return np.flatnonzero(d.node_type.numpy() == 0)

    def drop_nodes(self, d: Data) -> Data:
        inst = self._instructions(d)
        k = int(len(inst) * self.p)
        if k == 0:
            return d
        keep = np.ones(d.num_nodes, bool)
        keep[self.rng.choice(inst, k, replace=False)] = False
        remap = np.cumsum(keep) - 1
        ei = d.edge_index.numpy()
        ok = keep[ei[0]] & keep[ei[1]]
        return Data(x=d.x[torch.from_numpy(keep)],
                    edge_index=torch.from_numpy(remap[ei[:, ok]]),
                    edge_type=d.edge_type[torch.from_numpy(ok)],
                    node_type=d.node_type[torch.from_numpy(keep)])  # fmt: skip

    def perturb_edges(self, d: Data) -> Data:
        e = d.edge_type.numel()
        k = int(e * self.p)
        if k == 0:
            return d
        keep = np.ones(e, bool)
        keep[self.rng.choice(e, k, replace=False)] = False
        new = torch.from_numpy(self.rng.integers(0, d.num_nodes, (2, k)))
        rel = torch.from_numpy(self.rng.integers(0, NUM_RELATIONS, k))
        mask = torch.from_numpy(keep)
        return Data(x=d.x, edge_index=torch.cat([d.edge_index[:, mask], new], 1),
                    edge_type=torch.cat([d.edge_type[mask], rel]),
                    node_type=d.node_type)  # fmt: skip

    def mask_attributes(self, d: Data) -> Data:
        inst = self._instructions(d)
        k = int(len(inst) * self.p)
        if k == 0:
            return d
        x = d.x.clone()
        x[torch.from_numpy(self.rng.choice(inst, k, replace=False))] = 0.0
        return Data(x=x, edge_index=d.edge_index, edge_type=d.edge_type, node_type=d.node_type)


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, tau: float) -> torch.Tensor:
    """NT-Xent loss of two batches of views (row i of ``z1`` and ``z2`` are a positive pair)."""
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    n = z1.shape[0]
    sim = z @ z.T / tau
    sim.fill_diagonal_(float("-inf"))
    target = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, target)


def train_encoder(graphs: Sequence[TraceGraph], config: TrainConfig | None = None) -> TrainResult:
    """Train an :class:`RGCNEncoder` on ``graphs`` with two augmented views per graph."""
    cfg = config or TrainConfig()
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    rng = np.random.default_rng(cfg.seed)
    enc = RGCNEncoder(cfg.hidden, cfg.layers, cfg.num_bases)
    opt = torch.optim.Adam(enc.parameters(), lr=cfg.lr)
    data = [to_data(g) for g in graphs]
    aug = Augmenter(cfg.drop, rng)
    result = TrainResult(enc, cfg, graphs=len(data))
    t0 = time.perf_counter()
    enc.train()
    for epoch in range(cfg.epochs):
        order = rng.permutation(len(data))
        total, batches = 0.0, 0
        for start in range(0, len(order), cfg.batch_size):
            idx = order[start : start + cfg.batch_size]
            if len(idx) < 2:
                continue
            v1 = Batch.from_data_list([aug.view(data[i]) for i in idx])
            v2 = Batch.from_data_list([aug.view(data[i]) for i in idx])
            loss = nt_xent(enc(v1), enc(v2), cfg.tau)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total, batches = total + float(loss.detach()), batches + 1
        result.losses.append(total / max(batches, 1))
        log.info("epoch %d: NT-Xent %.4f", epoch, result.losses[-1])
    enc.eval()
    result.seconds = time.perf_counter() - t0
    return result


@torch.no_grad()
def embed_graphs(encoder: RGCNEncoder, graphs: Sequence[TraceGraph],
                 batch_size: int = 128) -> np.ndarray:  # fmt: skip
    """Readout embeddings [len(graphs), 3 * hidden] (no augmentation, eval mode)."""
    encoder.eval()
    out = []
    for start in range(0, len(graphs), batch_size):
        batch = Batch.from_data_list([to_data(g) for g in graphs[start : start + batch_size]])
        out.append(encoder.embed(batch).numpy())
    return np.concatenate(out) if out else np.zeros((0, 3 * encoder.config["hidden"]))
