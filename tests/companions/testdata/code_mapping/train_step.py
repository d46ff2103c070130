# One MindSpore training step in graph mode on CPU with save_graphs and the CPU tensor dump: the real
# IR and dump files of the code_mapping tests (make_data.sh runs it). Usage: train_step.py OUT_DIR tensor
import json, os, sys
import numpy as np
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
cfg = {"common_dump_settings": {"dump_mode": 0, "path": os.path.join(out, "dump"), "net_name": "Net",
        "iteration": "all", "saved_data": "statistic", "input_output": 0, "kernels": [], "support_device": [0, 1, 2, 3, 4, 5, 6, 7],
        "op_debug_mode": 0, "file_format": "npy", "statistic_category": ["max", "min", "l2norm"]},
       "e2e_dump_settings": {"enable": True, "trans_flag": True}}
mode = sys.argv[2] if len(sys.argv) > 2 else "statistic"
cfg["common_dump_settings"]["saved_data"] = mode
with open(os.path.join(out, "dump.json"), "w") as f:
    json.dump(cfg, f)
os.environ["MINDSPORE_DUMP_CONFIG"] = os.path.join(out, "dump.json")
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

net = Net()
x = ms.Tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 8)
label = ms.Tensor(np.array([0, 2], dtype=np.int32))
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params(), learning_rate=0.1))
print(step(x, label))
