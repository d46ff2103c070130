"""What mindtorch (mindnlp 0.5.1) on MindSpore 2.7.0 needs, on CPU, to run under msprobe 26.2.0's dump.

Imported by msadapter.py before `import torch`, and only on its mindtorch side. Each shim is a name
that one of the three packages expects of another and does not find on a CPU machine; none touches
what msprobe writes (names, statistics, structure). samples/README.md lists them with the errors they
avoid.
"""

import numpy as np

import mindspore

# 4. mindtorch replaces Tensor.register_hook by one that reads `self._data`, an attribute of the
#    stub tensors of older MindSpore that its parameters lack ("AttributeError: 'Parameter' object
#    has no attribute '_data'" when msprobe hooks a parameter's gradient); MindSpore's own is kept.
_ms_register_hook = mindspore.Tensor.register_hook

import mindtorch  # noqa: E402  (its import puts the `torch` proxy on sys.meta_path)
from mindtorch import torch_proxy  # noqa: E402

mindspore.Tensor.register_hook = _ms_register_hook

# 1. mindtorch redirects `torch_npu` to mindtorch.npu only when DEVICE_TARGET is Ascend, and msprobe
#    imports torch_npu in mindtorch mode ("ModuleNotFoundError: No module named 'torch_npu'" from
#    msprobe/mindspore/dump/dump_processor/hook_cell/api_register.py).
torch_proxy.REDIRECT_MAP["torch_npu"] = "mindtorch.npu"  # the finder holds this very dict

import torch  # noqa: E402  (mindtorch's proxy module from here on)

# 5. msprobe hooks the torch.* functions that `dir(torch)` lists; the proxy module lists only its own
#    few attributes (it forwards the rest through __getattr__), so no `Torch.*` API would be dumped
#    (torch.exp ran undumped). dir() now lists mindtorch's names; msprobe's setattr of a wrapped
#    function lands on the proxy, which the model's `torch.exp` then finds.
type(torch).__dir__ = lambda self: sorted(set(object.__dir__(self)) | set(dir(mindtorch)))

# 2. The tensors that MindSpore's CellBackwardHook returns (msprobe hooks every API's backward with
#    it) lack mindtorch's `_device`, and mindtorch's dispatcher asks every input for it ("ValueError:
#    Tensor must have device" in the first API after a hooked one). Those tensors are on the CPU.
mindspore.Tensor.device = property(lambda self: getattr(self, "_device", torch.device("cpu")))


class _CpuNorm:
    """mint as msprobe's statistics see it, with a norm that runs on the CPU (shim 3)."""

    def __init__(self, mint):
        self._mint = mint

    def __getattr__(self, name):
        return getattr(self._mint, name)

    @staticmethod
    def norm(x):
        return np.linalg.norm(x.asnumpy().reshape(-1)).astype(np.float32)


def after_msprobe_import():
    """3. MindSpore 2.7's CPU has no kernel for mint.norm ("RuntimeError: The kernel LinalgVectorNorm
    unregistered." when msprobe writes the Norm of the first tensor); numpy computes the same float32
    L2 norm (as bench/divergence/corpus_mindspore.py does for MindSpore 2.10)."""
    from msprobe.core.dump.data_dump.data_processor import mindspore_processor

    mindspore_processor.mint = _CpuNorm(mindspore_processor.mint)
