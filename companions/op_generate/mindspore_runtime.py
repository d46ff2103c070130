# The runner of a graph-ascend single-API reproduction script (MindSpore).
#
# graph-ascend op_generate -f mindspore writes this file's text into every script, followed by SPEC,
# the API's entry from an msprobe MindSpore dump, and a call of main(SPEC). It rebuilds the inputs
# (random ones from the dumped dtype, shape and Min/Max, or the dumped .npy files), runs the API with
# MindSpore on the device under test (Ascend, GPU, or the CPU when neither exists) and again on the
# CPU one precision step up (the bench), compares every output as msprobe doc 33 does (cosine
# similarity, max absolute and max relative error) and writes its two CSV files:
# accuracy_checking_details_<time>.csv and accuracy_checking_result_<time>.csv.
import argparse
import csv
import math
import os
import sys
import time

import numpy as np

import mindspore as ms

TENSOR_TYPES = ("mindspore.Tensor", "mindspore.common.tensor.Tensor", "mindspore.Parameter")
# The APIs this runner may call, by module (msprobe's support lists): op_generate writes the
# list after this runner, before SPEC. resolve() looks up nothing else, whatever SPEC says.
SUPPORTED_APIS = {}
# MindSpore's dtypes by their lower-case names (ms_dtype looks up nothing else).
MS_DTYPES = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
             "float32", "float64", "bfloat16", "complex64", "complex128")
NP_DTYPES = {
    "Float16": np.float16,
    "Float32": np.float32,
    "Float64": np.float64,
    "BFloat16": np.float32,  # numpy has none: made in float32, then cast
    "Int8": np.int8,
    "UInt8": np.uint8,
    "Int16": np.int16,
    "Int32": np.int32,
    "Int64": np.int64,
    "Bool": np.bool_,
}
FLOAT_DTYPES = ("Float16", "BFloat16", "Float32", "Float64")
UPCAST = {"Float16": "Float32", "BFloat16": "Float32", "Float32": "Float64"}
# Doc 33's rule: an output passes when cosine > 0.99 and max absolute error < 0.001.
COS_THRESHOLD = 0.99
MAX_ABS_ERR_THRESHOLD = 0.001
EPSILON = 1e-8
DETAIL_HEADER = ["API Name", "Bench Dtype", "Tested Dtype", "Shape", "Cosine", "MaxAbsErr", "MaxRelativeErr",
                 "Status", "Message"]
RESULT_HEADER = ["API Name", "Forward Test Success", "Backward Test Success", "Message"]


class InputError(Exception):
    pass


def ms_dtype(name):
    key = str(name).lower()
    key = "bool_" if key == "bool" else key
    if key not in MS_DTYPES or getattr(ms, key, None) is None:
        raise InputError(f"unknown dtype {name!r}")
    return getattr(ms, key)


def finite_or(x, default):
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else default


def random_array(info, rng):
    dtype = info.get("dtype", "Float32")
    if dtype not in NP_DTYPES:
        raise InputError(f"unsupported dtype {dtype!r}")
    shape = tuple(info.get("shape") or ())
    lo, hi = finite_or(info.get("Min"), -1.0), finite_or(info.get("Max"), 1.0)
    if hi < lo:
        lo, hi = hi, lo
    if dtype == "Bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype not in FLOAT_DTYPES:
        return rng.integers(int(math.floor(lo)), int(math.floor(hi)) + 1, size=shape).astype(NP_DTYPES[dtype])
    a = rng.uniform(lo, hi, size=shape).astype(np.float64)
    if a.size >= 2:  # the dumped extremes are part of the data, as msprobe places them
        a.flat[0], a.flat[-1] = lo, hi
    return a


def real_array(info):
    path = info.get("data_name")
    if not path or not os.path.isfile(path):
        raise InputError(f"real_data: the tensor file {path!r} does not exist")
    try:
        return np.load(path, allow_pickle=False)  # a dumped file is data: never unpickled
    except (OSError, ValueError) as e:
        raise InputError(f"{path!r}: cannot load the tensor: {e}") from e


def build(info, real_data, rng):
    """The input as numpy arrays (tensors) and Python values, before placing on a device."""
    if isinstance(info, list):
        return [build(x, real_data, rng) for x in info]
    if isinstance(info, dict) and info.get("type") in TENSOR_TYPES:
        a = real_array(info) if real_data else random_array(info, rng)
        return ("tensor", info.get("dtype", "Float32"), a)
    if isinstance(info, dict) and "type" in info:
        if info["type"].startswith("mindspore.") and "dtype" in info["type"]:
            return ms_dtype(str(info.get("value")).split(".")[-1])
        return info.get("value")
    if isinstance(info, dict):
        return {k: build(v, real_data, rng) for k, v in info.items()}
    return info


def place(value, upcast):
    """MindSpore tensors of the built value; `upcast`: floating tensors one precision step up."""
    if isinstance(value, tuple) and len(value) == 3 and value[0] == "tensor":
        _, dtype, a = value
        target = UPCAST.get(dtype, dtype) if upcast else dtype
        return ms.Tensor(a.astype(np.float64) if dtype in FLOAT_DTYPES else a).astype(ms_dtype(target))
    if isinstance(value, list):
        return [place(v, upcast) for v in value]
    if isinstance(value, dict):
        return {k: place(v, upcast) for k, v in value.items()}
    return value


def resolve(api):
    """The callable of `api` ("mindspore.mint.add"): a name of SUPPORTED_APIS only."""
    modules = {"mindspore.mint.nn.functional": ms.mint.nn.functional, "mindspore.mint": ms.mint,
               "mindspore.ops": ms.ops, "mindspore.Tensor": ms.Tensor}
    for module in sorted(modules, key=len, reverse=True):
        name = api[len(module) + 1:] if api.startswith(module + ".") else ""
        if name in SUPPORTED_APIS.get(module, ()):
            target = modules[module]
            for part in name.split("."):  # the list's own entry: "auto_generate.quant_matmul" at most
                target = getattr(target, part, None)
            if not callable(target):
                raise InputError(f"{api} does not exist in MindSpore {ms.__version__}")
            return target
    raise InputError(f"{api!r} is not an API msprobe dumps (SUPPORTED_APIS): refused")


def flatten(value):
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in flatten(v)]
    return [value]


def run(fn, args, kwargs, grads):
    """Forward outputs, or with `grads` the gradients of the floating tensor arguments (ms.vjp)."""
    if grads is None:
        return flatten(fn(*args, **kwargs))
    slots = [i for i, a in enumerate(args) if isinstance(a, ms.Tensor) and ms.ops.is_floating_point(a)]
    if not slots:
        raise InputError("backward: the API has no floating tensor argument to differentiate")

    def forward(*tensors):
        full = list(args)
        for i, t in zip(slots, tensors):
            full[i] = t
        return fn(*full, **kwargs)

    out, vjp_fn = ms.vjp(forward, *[args[i] for i in slots])
    outs = out if isinstance(out, (list, tuple)) else (out,)
    sens = [g.astype(o.dtype) for g, o in zip(grads, outs)]
    got = vjp_fn(tuple(sens) if isinstance(out, (list, tuple)) else sens[0])
    return flatten(got)


def device_under_test(requested):
    if requested:
        return requested.upper() if requested != "gpu" else "GPU"
    for target in ("Ascend", "GPU"):
        try:
            if ms.hal.is_available(target):
                return target
        except Exception:  # an old MindSpore without hal, or a broken driver: not this device
            continue
    return "CPU"


def as_float64(t):
    return t.astype(ms.float64).asnumpy() if ms.ops.is_floating_point(t) else t.asnumpy().astype(np.float64)


def compare(bench, tested):
    """Doc 33's three metrics of one output and its status and message."""
    b, t = as_float64(bench), as_float64(tested)
    if b.shape != t.shape:
        return None, None, None, "error", f"shape {tuple(t.shape)} differs from the bench's {tuple(b.shape)} "
    dot = float(np.dot(b.reshape(-1), t.reshape(-1)))
    cos = (EPSILON + dot) / (EPSILON + float(np.linalg.norm(b) * np.linalg.norm(t)))
    diff = np.abs(b - t)
    max_abs = float(diff.max()) if diff.size else 0.0
    max_rel = float((diff / (np.abs(b) + (b == 0) * EPSILON)).max()) if diff.size else 0.0
    msg = ""
    if not cos > COS_THRESHOLD:
        msg += f"cosine similarity is less than threshold: {COS_THRESHOLD} "
    if not max_abs < MAX_ABS_ERR_THRESHOLD:
        msg += f"max absolute difference is greater than threshold: {MAX_ABS_ERR_THRESHOLD} "
    return cos, max_abs, max_rel, "pass" if not msg else "error", msg


def dtype_name(t):
    return {"float16": "Float16", "bfloat16": "BFloat16", "float32": "Float32", "float64": "Float64"}.get(
        str(t.dtype).lower(), str(t.dtype))


def write_rows(path, header, rows):
    """Appends rows; a new file gets the header first (UTF-8 with a BOM, as msprobe writes)."""
    new = not os.path.exists(path)
    with open(path, "a", newline="", encoding="utf-8-sig" if new else "utf-8") as f:
        w = csv.writer(f)
        if new:
            w.writerow(header)
        w.writerows(rows)


def main(spec):
    parser = argparse.ArgumentParser(description=f"Reproduces {spec['api_name']} ({spec['propagation']}).")
    parser.add_argument(
        "--device", choices=["cpu", "gpu", "ascend"], help="device under test (default: the first present)"
    )
    parser.add_argument("--output", default="op_result_output", help="folder of the two CSV files")
    args = parser.parse_args()
    device = device_under_test(args.device)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_device(device)
    print(f"device under test: {device} (MindSpore {ms.__version__}); bench: the same device, one precision step up")
    real = spec["data_mode"] == "real_data"
    backward = spec["propagation"] == "backward"
    try:
        fn = resolve(spec["api"])
    except InputError as e:
        print("error: " + " ".join(str(e).splitlines()), file=sys.stderr)
        return 2
    stamp = time.strftime("%Y%m%d%H%M%S", time.localtime())
    os.makedirs(args.output, exist_ok=True)
    result_path = os.path.join(args.output, f"accuracy_checking_result_{stamp}.csv")
    detail_path = os.path.join(args.output, f"accuracy_checking_details_{stamp}.csv")
    failed = False
    for it in range(spec["iter_times"]):
        rng = np.random.default_rng(spec["random_seed"] + it)
        try:
            forward = spec["forward"]
            built_args = build(forward.get("input_args", []), real, rng)
            built_kwargs = build(forward.get("input_kwargs", {}), real, rng)
            built_grads = build(spec["backward"].get("input", []), real, rng) if backward else None
            outs = {}
            for side, upcast in (("tested", False), ("bench", True)):
                grads = place(built_grads, upcast) if backward else None
                outs[side] = run(fn, place(built_args, upcast), place(built_kwargs, upcast), grads)
        except InputError as e:
            print("error: " + " ".join(str(e).splitlines()), file=sys.stderr)
            return 2
        details, messages, status = [], "", "pass"
        print(f"iteration {it}:")
        print(f"  {'output':<44} {'Cosine':>12} {'MaxAbsErr':>12} {'MaxRelativeErr':>15}  status")
        i = 0
        for bench, tested in zip(outs["bench"], outs["tested"]):
            if not isinstance(bench, ms.Tensor) or not isinstance(tested, ms.Tensor):
                continue
            if backward and dtype_name(tested) not in FLOAT_DTYPES:
                continue
            name = f"{spec['api_name']}.{spec['propagation']}.output.{i}"
            i += 1
            cos, max_abs, max_rel, st, msg = compare(bench, tested)
            details.append([name, dtype_name(bench), dtype_name(tested), str(tuple(tested.shape)), cos, max_abs,
                            max_rel, st, msg])
            shown = ["-" if v is None else f"{v:.6g}" for v in (cos, max_abs, max_rel)]
            print(f"  {name:<44} {shown[0]:>12} {shown[1]:>12} {shown[2]:>15}  {st}")
            if st != "pass":
                status, messages = "error", messages + msg
        forward_status, backward_status = (None, status) if backward else (status, None)
        write_rows(detail_path, DETAIL_HEADER, details)
        write_rows(result_path, RESULT_HEADER, [[spec["api_name"], forward_status, backward_status, messages]])
        failed |= status != "pass"
    print(f"wrote {detail_path}")
    print(f"wrote {result_path}")
    return 1 if failed else 0
