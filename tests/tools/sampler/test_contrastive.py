"""GraphCL augmentations, the NT-Xent loss, seeded training, saved weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelwright.tools.sampler.contrastive import (
    Augmenter,
    TrainConfig,
    embed_graphs,
    load_encoder,
    nt_xent,
    to_data,
    train_encoder,
)
from kernelwright.tools.sampler.hrg import NUM_RELATIONS


def test_nt_xent_prefers_matching_views():
    torch.manual_seed(0)
    z = torch.randn(8, 16)
    matched = nt_xent(z, z + 0.01 * torch.randn(8, 16), tau=0.2)
    shuffled = nt_xent(z, z[torch.randperm(8)], tau=0.2)
    assert matched < shuffled
    # lower bound: log(2n - 1) - (1 - min off-diagonal)/tau style sanity: positive
    assert matched > 0


def test_augmentations_keep_the_kernel_node_and_valid_edges(tiny_traces):
    d = to_data(max(tiny_traces.graphs, key=lambda g: g.num_nodes))
    aug = Augmenter(0.3, np.random.default_rng(0))
    dropped = aug.drop_nodes(d)
    assert dropped.num_nodes < d.num_nodes and int(dropped.node_type[0]) == 3
    assert int(dropped.edge_index.max()) < dropped.num_nodes
    perturbed = aug.perturb_edges(d)
    assert perturbed.edge_type.numel() == d.edge_type.numel()
    assert not torch.equal(perturbed.edge_index, d.edge_index)
    assert int(perturbed.edge_type.max()) < NUM_RELATIONS
    masked = aug.mask_attributes(d)
    zero_rows = int((masked.x.abs().sum(1) == 0).sum()) - int((d.x.abs().sum(1) == 0).sum())
    assert zero_rows == int(int((d.node_type == 0).sum()) * 0.3)


@pytest.mark.slow
def test_training_is_seeded_lowers_the_loss_and_round_trips(tiny_traces, tmp_path):
    cfg = TrainConfig(epochs=6, batch_size=8, hidden=16, seed=3)
    graphs = tiny_traces.graphs * 3
    a = train_encoder(graphs, cfg)
    b = train_encoder(graphs, cfg)
    assert a.losses == b.losses
    assert a.losses[-1] < a.losses[0]
    assert a.seconds > 0
    path = a.save(tmp_path / "enc.pt")
    enc, cfg2 = load_encoder(path)
    assert cfg2 == cfg
    e1, e2 = embed_graphs(a.encoder, tiny_traces.graphs), embed_graphs(enc, tiny_traces.graphs)
    np.testing.assert_allclose(e1, e2, rtol=1e-5)
    assert e1.shape == (len(tiny_traces.graphs), 3 * 16)


@pytest.mark.parametrize("p", [0.0])
def test_zero_fraction_augmentation_is_identity(tiny_traces, p):
    d = to_data(tiny_traces.graphs[0])
    aug = Augmenter(p, np.random.default_rng(0))
    assert torch.equal(aug.view(d).x, d.x)
