"""Writes the crafted .pt files of pt_reader's robustness tests (run once; the outputs are committed).

Each file is a torch.save archive laid out as torch 2.8 lays it out (the entries of a real msprobe dump,
samples/gpt_tensor/.../Tensor.mean.0.forward.output.0.pt, are copied), with data.pkl rewritten to the
pickle torch writes for a tensor (_rebuild_tensor_v2 over a persistent storage) but with the storage
type, offset, size and stride of the case. torch itself is not needed (nor installed in CI).

    python3 tests/builder/testdata/pt/make_pt.py
"""

import pathlib
import struct
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[3]
TEMPLATE = ROOT / "samples/gpt_tensor/npu/step0/rank0/dump_tensor_data/Tensor.mean.0.forward.output.0.pt"


def unicode(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def integer(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if 0 <= v < 65536:
        return b"M" + struct.pack("<H", v)
    if -(2**31) <= v < 2**31:
        return b"J" + struct.pack("<i", v)
    return b"\x8a\x08" + struct.pack("<q", v)


def int_tuple(values):
    return b"(" + b"".join(integer(v) for v in values) + b"t"


def tensor_pickle(storage_type, numel, offset, size, stride):
    return (
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n"
        + b"(("
        + unicode("storage")
        + b"ctorch\n"
        + storage_type.encode()
        + b"\n"
        + unicode("0")
        + unicode("cpu")
        + integer(numel)
        + b"tQ"
        + integer(offset)
        + int_tuple(size)
        + int_tuple(stride)
        + b"\x89ccollections\nOrderedDict\n)RtR."
    )


def write(name, storage_type, width, numel, offset, size, stride):
    archive = name[: -len(".pt")]
    with zipfile.ZipFile(TEMPLATE) as src, zipfile.ZipFile(HERE / name, "w", zipfile.ZIP_STORED) as out:
        for info in src.infolist():
            tail = info.filename.split("/", 1)[1]
            if tail == "data.pkl":
                data = tensor_pickle(storage_type, numel, offset, size, stride)
            elif tail == "data/0":
                data = b"".join(struct.pack("<f", float(i)) for i in range(numel))[: numel * width]
                data = data.ljust(numel * width, b"\0")
            else:
                data = src.read(info)
            out.writestr(archive + "/" + tail, data)


CASES = [
    # name, storage type, element width, storage elements, offset, size, stride
    ("transposed.pt", "FloatStorage", 4, 6, 0, (3, 2), (1, 3)),  # a valid non-contiguous view
    ("expand_huge.pt", "FloatStorage", 4, 1000, 0, (1000, 16777216), (1, 0)),
    ("stride0_long.pt", "FloatStorage", 4, 1000, 0, (268435456,), (0,)),
    ("negative_stride.pt", "FloatStorage", 4, 4, 3, (4,), (-1,)),
    ("offset_past_end.pt", "FloatStorage", 4, 4, 4, (1,), (1,)),
    ("extent_past_end.pt", "FloatStorage", 4, 1000, 0, (10,), (200,)),
    ("extent_overflow.pt", "FloatStorage", 4, 4, 0, (3,), (2**62,)),
    ("complex_storage.pt", "ComplexFloatStorage", 8, 4, 0, (4,), (1,)),
]

if __name__ == "__main__":
    for case in CASES:
        write(*case)
        print(HERE / case[0])
