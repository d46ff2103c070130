# A MindSpore static-graph dump in msprobe's cell-dump layout (level L0), on CPU, for the graph's
# --code_mapping (issue 15). Usage: static_cell_dump.py OUT_DIR   (make_static_dump.sh runs it)
#
# One training step of train_step.py's Net in graph mode with save_graphs (OUT_DIR/ir) and MindSpore's
# own kernel dump (MINDSPORE_DUMP_CONFIG, OUT_DIR/kernels: what code_mapping ties to code).
#
# msprobe's static-graph cell dump cannot run on CPU: it wraps each cell's construct with
# mindspore.ops.TensorDump, and MindSpore 2.10 has no CPU kernel for it ("Unsupported op [TensorDump]
# on CPU" when the graph compiles; msprobe 26.2.0). So the cells' tensors are taken from the kernel
# dump (a cell's forward input is its first kernel's input, its output its last kernel's output;
# backward likewise from the gradient kernels), saved under the names TensorDump gives them
# ("Cell.dense.Dense.forward.input.0_float32_<id>.npy", ids in execution order), and msprobe 26.2.0's
# own post-processing (cell_dump_process: rename_filename, generate_construct, generate_dump_info,
# generate_stack_info, as its process_step runs them) writes OUT_DIR/cells/step0/rank/{dump.json,
# construct.json, stack.json, dump_tensor_data/}.
import glob, json, os, shutil, sys
import numpy as np
out = os.path.abspath(sys.argv[1])
os.makedirs(out, exist_ok=True)
kernel_config = {"common_dump_settings": {"dump_mode": 0, "path": os.path.join(out, "kernels"), "net_name": "Net",
                 "iteration": "all", "saved_data": "tensor", "input_output": 0, "kernels": [],
                 "support_device": [0, 1, 2, 3, 4, 5, 6, 7], "op_debug_mode": 0, "file_format": "npy"},
                 "e2e_dump_settings": {"enable": True, "trans_flag": True}}
with open(os.path.join(out, "kernel_dump.json"), "w") as f:
    json.dump(kernel_config, f)
os.environ["MINDSPORE_DUMP_CONFIG"] = os.path.join(out, "kernel_dump.json")
import mindspore as ms
from mindspore import nn, ops
ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU", save_graphs=True, save_graphs_path=os.path.join(out, "ir"))


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 3)
        self.relu = nn.ReLU()

    def construct(self, x):
        y = self.dense(x)
        y = self.relu(y)
        return ops.softmax(y * 2.0, axis=-1)


ms.set_seed(0)
net = Net()
x = ms.Tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 8)
label = ms.Tensor(np.array([0, 2], dtype=np.int32))
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params(), learning_rate=0.1))
print(step(x, label))

kernels = os.path.join(out, "kernels/rank_0/Net/0/0")


def kernel_tensor(op, scope, io, slot):
    found = glob.glob(os.path.join(kernels, f"{op}.{scope}-op0.*.{io}.{slot}.*.npy"))
    assert len(found) == 1, (op, scope, io, slot, found)
    return np.load(found[0])


net_scope = "Default_network-WithLossCell__backbone-Net"
grad_scope = "Gradients_" + net_scope
cells = [  # (TensorDump name, tensor) in the order the step runs them
    ("Cell.dense.Dense.forward.input.0", kernel_tensor("MatMul", f"{net_scope}_dense-Dense_MatMul", "input", 0)),
    ("Cell.dense.Dense.forward.output.0", kernel_tensor("BiasAdd", f"{net_scope}_dense-Dense_BiasAdd", "output", 0)),
    ("Cell.relu.ReLU.forward.input.0", kernel_tensor("ReLU", f"{net_scope}_relu-ReLU_ReLU", "input", 0)),
    ("Cell.relu.ReLU.forward.output.0", kernel_tensor("ReLU", f"{net_scope}_relu-ReLU_ReLU", "output", 0)),
    ("Cell.relu.ReLU.backward.input.0",
     kernel_tensor("ReluGrad", f"{grad_scope}_relu-ReLU_Grad_ReLU_ReluGrad", "input", 0)),
    ("Cell.relu.ReLU.backward.output.0",
     kernel_tensor("ReluGrad", f"{grad_scope}_relu-ReLU_Grad_ReLU_ReluGrad", "output", 0)),
    ("Cell.dense.Dense.backward.input.0",
     kernel_tensor("BiasAddGrad", f"{grad_scope}_dense-Dense_Grad_BiasAdd_BiasAddGrad", "input", 0)),
]
from msprobe.mindspore.dump.dump_processor import cell_dump_process as cdp  # noqa: E402

rank_path = os.path.join(out, "cells", "step0", "rank0")
npy_path = os.path.join(rank_path, "dump_tensor_data")
os.makedirs(npy_path)
for i, (name, tensor) in enumerate(cells):
    np.save(os.path.join(npy_path, f"{name}_{tensor.dtype}_{i}.npy"), tensor)
cdp.dump_task = "tensor"
cdp.rename_filename(path=npy_path)
cdp.generate_construct(npy_path)
cdp.generate_dump_info(npy_path)
cdp.generate_stack_info(npy_path)
shutil.move(rank_path, os.path.join(out, "cells", "step0", "rank"))  # process_step's single-card rename
