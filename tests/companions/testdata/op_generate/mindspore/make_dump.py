"""Writes the MindSpore-shaped dump of the op_generate -f mindspore tests (run by make_dump.sh).

Real msprobe cannot dump MindSpore on CPU (README.md here says why), so this runs five APIs (mint and ops) of a
small layer with real MindSpore on CPU in PyNative mode, takes their real inputs, outputs and input
gradients (mindspore.vjp), and writes them in msprobe's MindSpore tensor-dump layout: dump.json
(task "tensor", level "L1", framework "mindspore"; per call "<api>.forward" with input_args,
input_kwargs, output and "<api>.backward" with input (output gradients) and output (input gradients);
each tensor {type "mindspore.Tensor", dtype, shape, Max, Min, Mean, Norm, data_name}) and
dump_tensor_data/<api>.<forward|backward>.<input|output>.<i>.npy (save_tensor_as_npy's names).
"""

import json
import os
import sys

import numpy as np

import mindspore as ms
from mindspore import mint

out = sys.argv[1]
tensors = os.path.join(out, "dump_tensor_data")
os.makedirs(tensors, exist_ok=True)
ms.set_context(mode=ms.PYNATIVE_MODE)
ms.set_device("CPU")
rng = np.random.default_rng(0)


def tensor_json(t, name):
    a = t.asnumpy()
    np.save(os.path.join(tensors, name), a)
    f = a.astype(np.float64)
    return {"type": "mindspore.Tensor", "dtype": str(t.dtype), "shape": list(a.shape), "Max": float(f.max()),
            "Min": float(f.min()), "Mean": float(f.mean()), "Norm": float(np.linalg.norm(f)), "data_name": name}


def arg_json(v, name):
    if isinstance(v, ms.Tensor):
        return tensor_json(v, name)
    if isinstance(v, (tuple, list)):
        return [arg_json(x, f"{name[:-4]}.{i}.npy") for i, x in enumerate(v)]
    return {"type": type(v).__name__, "value": v}


data = {}


def record(api, fn, args, kwargs):
    out_t = fn(*args, **kwargs)
    slots = [i for i, a in enumerate(args) if isinstance(a, ms.Tensor)]

    def forward(*ts):
        full = list(args)
        for i, t in zip(slots, ts):
            full[i] = t
        return fn(*full, **kwargs)

    _, vjp_fn = ms.vjp(forward, *[args[i] for i in slots])
    grad_out = ms.Tensor(rng.standard_normal(out_t.shape).astype(np.float32))
    grads = vjp_fn(grad_out)
    f = f"{api}.forward"
    data[f] = {
        "input_args": [arg_json(a, f"{f}.input.{i}.npy") for i, a in enumerate(args)],
        "input_kwargs": {k: arg_json(v, f"{f}.input.{k}.npy") for k, v in kwargs.items()},
        "output": [tensor_json(out_t, f"{f}.output.0.npy")],
    }
    b = f"{api}.backward"
    data[b] = {
        "input": [tensor_json(grad_out, f"{b}.input.0.npy")],
        "output": [tensor_json(g, f"{b}.output.{i}.npy") for i, g in enumerate(grads)],
    }
    return out_t


x = ms.Tensor(rng.standard_normal((2, 8)).astype(np.float32))
w = ms.Tensor(rng.standard_normal((6, 8)).astype(np.float32) * 0.3)
bias = ms.Tensor(rng.standard_normal(6).astype(np.float32))
y = record("MintFunctional.linear.0", mint.nn.functional.linear, [x, w, bias], {})
y = record("Functional.gelu.0", ms.ops.gelu, [y], {"approximate": "tanh"})
y = record("MintFunctional.relu.0", mint.nn.functional.relu, [y], {})
y = record("Mint.add.0", mint.add, [y, 1.0], {})
y = record("MintFunctional.softmax.0", mint.nn.functional.softmax, [y], {"dim": -1})
with open(os.path.join(out, "dump.json"), "w") as f:
    json.dump({"task": "tensor", "level": "L1", "framework": "mindspore", "dump_data_dir": tensors, "data": data},
              f, indent=1)
