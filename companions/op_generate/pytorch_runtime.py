# The runner of a graph-ascend single-API reproduction script (PyTorch).
#
# graph-ascend op_generate writes this file's text into every script, followed by SPEC, the
# API's entry from the dump, and a call of main(SPEC). It rebuilds the inputs (random ones from
# the dumped dtype, shape and Min/Max, or the dumped tensor files), runs the API on the device
# under test and on a CPU bench in higher precision, and prints the metrics of msprobe's
# "new precision standard" with the rule that decides each status.
import argparse
import json
import math
import pickle
import sys

import torch

# MSAdapter (mindtorch) dumps hold PyTorch API names with MindSpore tensors: rebuilt as torch tensors.
TENSOR_TYPES = ("torch.Tensor", "torch.nn.parameter.Parameter", "mindspore.Tensor", "mindspore.common.tensor.Tensor",
                "mindspore.Parameter")
# The APIs this runner may call, by module (msprobe's support lists): op_generate writes the
# list after this runner, before SPEC. resolve() looks up nothing else, whatever SPEC says.
SUPPORTED_APIS = {}
API_MODULES = {"torch.nn.functional": torch.nn.functional, "torch.Tensor": torch.Tensor, "torch": torch}
# The bench runs one precision step up, as msprobe's accuracy checker does.
UPCAST = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.float32: torch.float64}

# Which standard judges which API (msprobe api_precision_standard.yaml); the rest use the
# benchmark standard.
BINARY_APIS = {
    "abs",
    "abs_",
    "absolute",
    "absolute_",
    "argmin",
    "bitwise_and",
    "bitwise_and_",
    "broadcast_to",
    "ceil",
    "ceil_",
    "equal",
    "fill_",
    "flatten",
    "floor",
    "floor_",
    "gather",
    "greater",
    "greater_",
    "greater_equal",
    "greater_equal_",
    "histc",
    "isfinite",
    "isnan",
    "less",
    "less_",
    "less_equal",
    "less_equal_",
    "logical_and",
    "logical_and_",
    "logical_not",
    "logical_not_",
    "logical_or",
    "logical_or_",
    "masked_fill",
    "masked_fill_",
    "max_pool3d",
    "maximum",
    "minimum",
    "neg",
    "neg_",
    "nonzero",
    "not_equal",
    "not_equal_",
    "one_hot",
    "pad",
    "relu",
    "reshape",
    "round",
    "round_",
    "select",
    "sign",
    "sign_",
    "sort",
    "tile",
    "topk",
    "transpose",
    "transpose_",
    "tril",
    "tril_",
    "triu",
    "triu_",
    "type_as",
}
ABSOLUTE_APIS = {
    "mul",
    "mul_",
    "__mul__",
    "__imul__",
    "__rmul__",
    "add",
    "add_",
    "__add__",
    "__iadd__",
    "__radd__",
    "div",
    "div_",
    "__div__",
    "__idiv__",
    "divide",
    "divide_",
    "leaky_relu",
    "leaky_relu_",
    "prelu",
    "reciprocal",
    "reciprocal_",
    "rsqrt",
    "rsqrt_",
    "square",
    "square_",
    "sub",
    "sub_",
    "rsub",
    "__isub__",
    "__sub__",
}
ULP_APIS = {
    "__matmul__",
    "addbmm",
    "addbmm_",
    "addmm",
    "addmm_",
    "baddbmm",
    "baddbmm_",
    "bilinear",
    "bmm",
    "chain_matmul",
    "hspmm",
    "linear",
    "matmul",
    "mm",
    "mv",
    "smm",
    "sspaddmm",
}
THOUSANDTH_APIS = {"conv1d", "conv2d"}

# Thresholds of the new precision standard (msprobe precision_standard/standard_config.py).
SMALL_VALUE = {torch.float16: 2**-10, torch.bfloat16: 2**-10, torch.float32: 2**-20}
THRESHOLD_SMALL_VALUE_ATOL = {torch.float16: 2**-16, torch.bfloat16: 1e-16, torch.float32: 2**-30}
BENCHMARK_SMALL_VALUE_ATOL = {torch.float16: 1e-16, torch.bfloat16: 1e-16, torch.float32: 2**-30}
RTOL = {torch.float16: 2**-10, torch.bfloat16: 2**-8, torch.float32: 2**-20}
MINIMUM_ERR = {torch.float16: 2**-11, torch.bfloat16: 2**-8, torch.float32: 2**-14}
# Benchmark metrics: (warning above, error above) for the ratio device / reference device.
BENCHMARK_RATIO_RULES = {
    "small_value_err_ratio": (1, 2),
    "max_rel_err": (1, 10),
    "mean_rel_err": (1, 2),
    "rmse": (1, 2),
    "eb": (1, 2),
}
ULP_PARAMS = {torch.float16: (-14, 10), torch.bfloat16: (-126, 7), torch.float32: (-126, 23)}


class InputError(Exception):
    """Something in the dumped entry this script cannot rebuild."""


def dtype_named(name):
    """torch.<name> when that is a dtype ("torch.float16", "float16", and MindSpore's "mindspore.float16" or
    "Float16" of a mindtorch dump); nothing else is looked up."""
    short = str(name)
    if short.startswith("mindspore."):
        short = short[len("mindspore.") :]
    elif short[:1].isupper():
        short = short.lower()  # MindSpore's Float16, BFloat16, Int64, Bool
    else:
        short = short.replace("torch.", "", 1)
    dtype = getattr(torch, short, None) if short.isidentifier() and not short.startswith("_") else None
    if not isinstance(dtype, torch.dtype):
        raise InputError(f"unknown dtype {name!r}")
    return dtype


def finite_or(x, default):
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return default
    return x


def random_tensor(info):
    """Uniform in the dumped [Min, Max], with Min and Max themselves at the two ends."""
    dtype = dtype_named(info.get("dtype"))
    shape = tuple(info.get("shape") or ())
    low, high = info.get("Min"), info.get("Max")
    if dtype == torch.bool:
        lo, hi = int(bool(low)), int(bool(high) if high is not None else 1)
        return torch.randint(lo, hi + 1, shape) > 0
    if dtype.is_complex:
        raise InputError(f"random {dtype} tensors are not supported")
    if low is None or high is None:  # md5 dumps carry no statistics
        if dtype.is_floating_point:
            return torch.randn(shape, dtype=dtype)
        return torch.randint(-8, 9, shape, dtype=dtype)
    if dtype.is_floating_point:
        lo, hi = finite_or(low, -1.0), finite_or(high, 1.0)
        if hi < lo:
            lo, hi = hi, lo
        tensor = torch.rand(shape, dtype=dtype) * (hi - lo) + lo
    else:
        lo, hi = int(finite_or(low, 0)), int(finite_or(high, 0))
        tensor = torch.randint(lo, hi + 1, shape, dtype=dtype)
    if tensor.numel() > 0:
        flat = tensor.reshape(-1)
        flat[0] = float(low) if dtype.is_floating_point else int(low)
        flat[-1] = float(high) if dtype.is_floating_point else int(high)
        tensor = flat.reshape(shape)
    return tensor


def real_tensor(info):
    path = info.get("data_name")
    try:
        if path.endswith(".npy"):
            import numpy

            tensor = torch.from_numpy(numpy.load(path, allow_pickle=False))
        else:
            # weights_only: a dumped file is data; a pickle that would run code is refused.
            tensor = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        why = next((line.strip() for line in str(e).splitlines() if "WeightsUnpickler error" in line), str(e))
        raise InputError(f"{path}: refused: not plain tensor data (torch.load, weights_only=True): {why}") from e
    except (OSError, ValueError, RuntimeError) as e:
        raise InputError(f"{path}: cannot load the tensor: {e}") from e
    if not isinstance(tensor, torch.Tensor):
        raise InputError(f"{path}: holds a {type(tensor).__name__}, not a tensor")
    return tensor


def build(info, real_data):
    """The Python value of one dumped argument."""
    if info is None:
        return None
    if isinstance(info, list):
        return [build(x, real_data) for x in info]
    if not isinstance(info, dict):
        return info
    kind = info.get("type")
    if kind in TENSOR_TYPES:
        tensor = real_tensor(info) if real_data else random_tensor(info)
        if info.get("requires_grad") and (tensor.is_floating_point() or tensor.is_complex()):
            tensor.requires_grad_(True)
        return tensor
    value = info.get("value")
    if kind == "torch.dtype":
        return dtype_named(value)
    if kind == "torch.device":
        return torch.device(value)
    if kind == "torch.Size":
        return torch.Size(value)
    if kind == "slice":
        return slice(*value)
    if kind == "ellipsis":
        return Ellipsis
    if kind in ("int", "float", "bool", "str", "NoneType") or "value" in info:
        return value
    if kind is None:
        return {k: build(v, real_data) for k, v in info.items()}
    raise InputError(f"an argument of type {kind!r} cannot be rebuilt outside the original process")


def place(value, device, upcast):
    """A copy of `value` with its tensors on `device` (one precision step up for the bench)."""
    if isinstance(value, torch.Tensor):
        dtype = UPCAST.get(value.dtype, value.dtype) if upcast else value.dtype
        copy = value.detach().to(device=device, dtype=dtype)
        return copy.requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(place(v, device, upcast) for v in value)
    if isinstance(value, dict):
        return {k: place(v, device, upcast) for k, v in value.items()}
    return value


def tensors_in(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []


def fresh(value):
    """Clones of the tensors: an in-place API then writes to the clone, not to the autograd leaf."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(fresh(v) for v in value)
    if isinstance(value, dict):
        return {k: fresh(v) for k, v in value.items()}
    return value


def resolve(api):
    """The callable of `api` ("torch.nn.functional.linear"): a name of SUPPORTED_APIS only."""
    for module in sorted(API_MODULES, key=len, reverse=True):
        name = api[len(module) + 1 :] if api.startswith(module + ".") else ""
        if name in SUPPORTED_APIS.get(module, ()):
            target = API_MODULES[module]
            for part in name.split("."):  # the list's own entry: "linalg.vector_norm" at most
                target = getattr(target, part, None)
            if not callable(target):
                raise InputError(f"{api} does not exist in torch {torch.__version__}")
            return target
    raise InputError(f"{api!r} is not an API msprobe dumps (SUPPORTED_APIS): refused")


def run(fn, args, kwargs, grads):
    output = fn(*fresh(args), **fresh(kwargs))
    if grads is None:
        return output
    inputs = [t for t in tensors_in(args) + tensors_in(kwargs) if t.requires_grad]
    if not inputs:
        raise InputError("no input of the forward call requires grad: nothing to differentiate")
    outs = [t for t in tensors_in(output) if t.requires_grad]
    pairs = [(o, g) for o, g in zip(outs, tensors_in(grads))]
    if not pairs:
        raise InputError("the forward output has no differentiable tensor matching a dumped gradient")
    return torch.autograd.grad(
        outputs=[o for o, _ in pairs], inputs=inputs, grad_outputs=[g for _, g in pairs], allow_unused=True
    )


def device_under_test(requested):
    if requested:
        return torch.device(requested), "requested with --device"
    if torch.cuda.is_available():
        return torch.device("cuda"), "CUDA is available"
    try:
        import torch_npu  # noqa: F401

        if torch.npu.is_available():
            return torch.device("npu"), "torch_npu finds an NPU"
    except ImportError:
        pass
    return torch.device("cpu"), "neither CUDA nor an NPU was found"


def standard_of(short_name, dtype):
    if dtype == torch.bool or not (dtype.is_floating_point or dtype.is_complex) or short_name in BINARY_APIS:
        return "binary"
    if short_name in ABSOLUTE_APIS:
        return "absolute"
    if short_name in ULP_APIS:
        return "ulp"
    if short_name in THOUSANDTH_APIS:
        return "thousandth"
    return "benchmark"


def ratio(x, y, dtype):
    """msprobe's calc_ratio: |x| / max(|y|, the dtype's minimum error)."""
    return abs(x) / max(abs(y), MINIMUM_ERR.get(dtype, 2**-14))


def zero_rule(value):
    """(rule, status) of a metric that must be 0, in the order of a metrics row."""
    return "pass if 0, else error", ("pass" if value == 0 else "error")


def metrics_of(standard, device_out, bench_out, reference):
    """[(metric, value, rule, status)] for one output tensor."""
    dtype = device_out.dtype
    dev = device_out.detach().cpu()
    bench = bench_out.detach().cpu()
    if standard == "binary":
        rate = (dev != bench.to(dtype)).sum().item() / max(bench.numel(), 1)
        return [("binary consistency error rate", rate, *zero_rule(rate))]
    wide = dev.to(bench.dtype)
    abs_err = (wide - bench).abs()
    abs_bench = bench.abs()
    eps = torch.finfo(bench.dtype).eps
    rel_err = abs_err / (abs_bench + eps)
    both_finite = torch.isfinite(dev) & torch.isfinite(bench.to(dtype))
    inf_nan = ~both_finite
    small = SMALL_VALUE.get(dtype, 2**-20)
    small_mask = (abs_bench <= small) & both_finite
    normal_mask = both_finite & ~small_mask
    rows = []
    if standard == "absolute":
        rtol = RTOL.get(dtype, 2**-20)
        atol = THRESHOLD_SMALL_VALUE_ATOL.get(dtype, 2**-30)
        info = torch.finfo(dtype)
        clipped = (dev.clamp(info.min, info.max).to(bench.dtype) - bench.to(dtype).clamp(info.min, info.max)).abs()
        ok = (clipped / (abs_bench + eps) <= rtol) | (torch.isnan(dev) & torch.isnan(bench))
        inf_nan_ratio = ((~ok) & inf_nan).sum().item() / max(inf_nan.sum().item(), 1)
        rel_ratio = ((rel_err > rtol) & normal_mask).sum().item() / max(normal_mask.sum().item(), 1)
        abs_ratio = ((abs_err > atol) & small_mask).sum().item() / max(small_mask.sum().item(), 1)
        rows.append(("inf/nan error ratio", inf_nan_ratio, *zero_rule(inf_nan_ratio)))
        rows.append((f"relative error ratio (rel err > {rtol:g})", rel_ratio, *zero_rule(rel_ratio)))
        rows.append((f"absolute error ratio (small values, abs err > {atol:g})", abs_ratio, *zero_rule(abs_ratio)))
        return rows
    if standard == "ulp":
        min_eb, mantissa = ULP_PARAMS.get(dtype, ULP_PARAMS[torch.float32])
        work = torch.float64 if dtype == torch.float32 else torch.float32
        eb = torch.where(abs_bench == 0, torch.zeros_like(abs_bench), torch.floor(torch.log2(abs_bench)))
        eb = torch.clamp(eb, min=min_eb).to(work)
        ulp = ((dev.to(work) - bench.to(work)) * torch.exp2(-eb + mantissa)).abs()
        limit = 32 if dtype == torch.float32 else 1
        proportion = (ulp > limit).sum().item() / max(ulp.numel(), 1)
        mean_ulp = ulp.mean().item() if ulp.numel() else 0.0
        rows.append(("max ULP error", ulp.max().item() if ulp.numel() else 0.0, "reported", "-"))
        if dtype == torch.float32:
            passed = mean_ulp < 64 or proportion < 0.05
            rule = "pass if mean < 64 or proportion < 0.05"
        else:
            passed = proportion < 0.001
            rule = "pass if proportion < 0.001"
        if not passed and reference and "ulp_err_proportion" in reference:
            passed = ratio(proportion, reference["ulp_err_proportion"], dtype) < 1
        rule += " (or proportion / reference device's < 1), else error"
        status = "pass" if passed else "error"
        rows.append(("mean ULP error", mean_ulp, rule, status))
        rows.append((f"ULP error proportion (ULP > {limit})", proportion, rule, status))
        return rows
    if standard == "thousandth":
        share = (rel_err < 0.001).sum().item() / max(rel_err.numel(), 1)
        rows.append(
            (
                "double-thousandths ratio (rel err < 0.001)",
                share,
                "pass if >= 0.999, else error",
                "pass" if share >= 0.999 else "error",
            )
        )
        return rows
    atol = BENCHMARK_SMALL_VALUE_ATOL.get(dtype, 2**-30)
    small_err = ((abs_err > atol) & small_mask).sum().item() / max(small_mask.sum().item(), 1)
    rel = torch.where(small_mask | inf_nan, torch.full_like(rel_err, -1), rel_err)
    kept = rel[rel >= 0]
    max_rel = kept.max().item() if kept.numel() else 0.0
    mean_rel = kept.mean().item() if kept.numel() else 0.0
    masked = torch.where(inf_nan, torch.zeros_like(abs_err), abs_err)
    n, bad = abs_err.numel(), inf_nan.sum().item()
    rmse = math.sqrt(masked.square().mean().item() * (n / (n - bad + 0.0001) + 0.0001)) if n else 0.0
    diff = dev - bench.to(dtype)
    eb = abs((diff > 0).sum().item() - (diff < 0).sum().item()) / max(n, 1)
    values = {
        "small_value_err_ratio": small_err,
        "max_rel_err": max_rel,
        "mean_rel_err": mean_rel,
        "rmse": rmse,
        "eb": eb,
    }
    labels = {
        "small_value_err_ratio": "small-value error ratio",
        "max_rel_err": "max relative error",
        "mean_rel_err": "mean relative error",
        "rmse": "RMSE",
        "eb": "error balance",
    }
    for key, value in values.items():
        warn, err = BENCHMARK_RATIO_RULES[key]
        rule = f"value / reference device's: <= {warn} pass, <= {err} warning, else error"
        if reference and key in reference:
            r = ratio(value, reference[key], dtype)
            status = "pass" if r <= warn else "warning" if r <= err else "error"
            rows.append((labels[key], value, f"{rule} (ratio {r:.4g})", status))
        else:
            rows.append((labels[key], value, rule, "needs --against"))
    return rows


def flatten(value):
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in flatten(v)]
    return [value]


def print_table(rows):
    head = ("metric", "value", "rule", "status")
    cells = [head] + [(m, f"{v:.6g}" if isinstance(v, float) else str(v), r, s) for m, v, r, s in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    print(line)
    for i, c in enumerate(cells):
        print("| " + " | ".join(c[k].ljust(widths[k]) for k in range(4)) + " |")
        if i == 0:
            print(line.replace("-", "="))
    print(line)


def compare(short_name, device_out, bench_out, reference, records):
    worst = "pass"
    order = {"pass": 0, "-": 0, "needs --against": 0, "warning": 1, "error": 2}
    pairs = list(zip(flatten(device_out), flatten(bench_out)))
    for index, (dev, bench) in enumerate(pairs):
        print(f"output {index}:")
        if dev is None and bench is None:
            print("  None on both sides")
            continue
        if isinstance(dev, torch.Tensor) and isinstance(bench, torch.Tensor):
            if dev.shape != bench.shape:
                print(f"  error: shapes differ: device {tuple(dev.shape)}, bench {tuple(bench.shape)}")
                worst = "error"
                continue
            standard = standard_of(short_name, dev.dtype)
            print(
                f"  shape {tuple(dev.shape)}, device dtype {dev.dtype}, bench dtype {bench.dtype}, standard: {standard}"
            )
            if dev.numel() == 0:
                print("  no elements")
                continue
            rows = metrics_of(standard, dev, bench, reference.get(str(index)) if reference else None)
            print_table(rows)
            records[str(index)] = {**{m: v for m, v, _, _ in rows}, **raw_metrics(rows)}
            for _, _, _, status in rows:
                worst = max(worst, status, key=lambda s: order.get(s, 0))
        else:
            same = dev == bench
            print(f"  {'equal' if same else 'error: differ'}: device {dev!r}, bench {bench!r}")
            worst = worst if same else "error"
    return worst


def raw_metrics(rows):
    keys = {
        "small-value error ratio": "small_value_err_ratio",
        "max relative error": "max_rel_err",
        "mean relative error": "mean_rel_err",
        "RMSE": "rmse",
        "error balance": "eb",
    }
    out = {keys[m]: v for m, v, _, _ in rows if m in keys}
    for m, v, _, _ in rows:
        if m.startswith("ULP error proportion"):
            out["ulp_err_proportion"] = v
    return out


def main(spec):
    parser = argparse.ArgumentParser(description=f"Reproduce {spec['api_name']} ({spec['propagation']}).")
    parser.add_argument("--device", help="device under test (default: cuda, else npu, else cpu)")
    parser.add_argument("--save-metrics", metavar="FILE", help="write the metrics as JSON (for --against)")
    parser.add_argument(
        "--against",
        metavar="FILE",
        help="metrics JSON saved by a run on the reference device: turns ratios into statuses",
    )
    options = parser.parse_args()
    device, why = device_under_test(options.device)
    print(f"device under test: {device} ({why}); bench: cpu, one precision step up")
    reference = None
    if options.against:
        try:
            with open(options.against) as f:
                reference = json.load(f)
        except (OSError, ValueError) as e:
            print(f"error: {options.against}: {e}", file=sys.stderr)
            return 2
    short_name = spec["api"].rsplit(".", 1)[-1]
    real_data = spec["data_mode"] == "real_data"
    iterations = 1 if real_data else spec["iter_times"]
    torch.manual_seed(spec["random_seed"])
    worst, saved = "pass", {}
    order = {"pass": 0, "warning": 1, "error": 2}
    try:
        fn = resolve(spec["api"])
        for i in range(iterations):
            print(f"iteration {i}:")
            args = build(spec["forward"].get("input_args", []), real_data)
            kwargs = build(spec["forward"].get("input_kwargs", {}), real_data)
            grads = None
            if spec["propagation"] == "backward":
                backward = spec["backward"]
                grads = build(backward.get("grad_input", backward.get("input", [])), real_data)
            dev_out = run(fn, place(args, device, False), place(kwargs, device, False), place(grads, device, False))
            bench_out = run(fn, place(args, "cpu", True), place(kwargs, "cpu", True), place(grads, "cpu", True))
            records = {}
            result = compare(short_name, dev_out, bench_out, reference, records)
            saved[str(i)] = records
            worst = max(worst, result, key=lambda s: order.get(s, 0))
    except InputError as e:
        message = " ".join(str(e).splitlines())  # one line, whatever the library said
        print(f"error: {spec['api_name']}: {message}", file=sys.stderr)
        return 2
    if options.save_metrics:
        with open(options.save_metrics, "w") as f:
            json.dump(saved.get("0", {}), f, indent=4)
    print(f"result: {worst}")
    return 0
