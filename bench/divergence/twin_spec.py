"""What the PyTorch and the MindSpore twin models of the corpus share (numpy only, no framework).

The twins (corpus_models.TwinNet in PyTorch, corpus_mindspore.TwinNet in MindSpore) are the same
tiny decoder, with the same module and parameter names, the same weights and the same batch, so that
the MindSpore run against the PyTorch run differs only by the frameworks' own kernels (and the bug).
"""

import zlib

import numpy as np

VOCAB, DIM, HEADS, SEQ, LAYERS = 32, 16, 2, 6, 2
# variant -> (norm, activation): gpt = LayerNorm + GELU MLP; llama = RMSNorm (hand-written) + SiLU MLP
VARIANTS = {"twin_gpt": ("layer", "gelu"), "twin_llama": ("rms", "silu")}
MS_MODELS = set(VARIANTS)


def weight(name, shape):
    """The value of parameter `name`: norms 1 / 0, others normal(0, 0.3), seeded by the name."""
    if name.endswith("norm.weight") or ".norm" in name and name.endswith(".weight"):
        return np.ones(shape, np.float32)
    if name.endswith(".bias"):
        return np.zeros(shape, np.float32)
    rng = np.random.RandomState(zlib.crc32(name.encode()))
    return (rng.standard_normal(shape) * 0.3).astype(np.float32)


def batch():
    """(ids, target) of the one step, int64 [1, SEQ]."""
    ids = np.random.RandomState(1235).randint(0, VOCAB, (1, SEQ)).astype(np.int64)
    return ids, ids


def causal_mask(diagonal):
    """True where a token may not look (diagonal 1: the future; 2: off by one, it sees the next)."""
    return np.triu(np.ones((SEQ, SEQ), bool), k=diagonal)
