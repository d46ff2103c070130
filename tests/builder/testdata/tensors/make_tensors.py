"""Writes the tensor fixtures of tensor_test.cc with numpy, ml_dtypes and torch themselves.

    samples/.venv/bin/python tests/builder/testdata/tensors/make_tensors.py

(samples/.venv from samples/generate/generate.sh has all three.) The values are spelled out in
tensor_test.cc; change both together.
"""

import os
import zipfile

import ml_dtypes
import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))


def npy(name, array, version=None):
    path = os.path.join(here, name + ".npy")
    if version is None:
        np.save(path, array, allow_pickle=False)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, array, version=version, allow_pickle=False)


def pt(name, tensor):
    torch.save(tensor, os.path.join(here, name + ".pt"))


# .npy: every dtype msprobe's MindSpore / MSAdapter dumps use.
npy("f16", np.array([1.0, -2.5, 65504.0, 2.0**-14, 2.0**-24, np.inf, np.nan], dtype=np.float16))
npy("f32", np.array([[0.5, -1.25, 3.0], [1e-3, -7.0, 1e30]], dtype=np.float32))
npy("f64", np.array([0.1, -1e-300, 1e300], dtype=np.float64))
npy("bf16", np.array([1.0, -2.0, 3.140625, -0.0078125], dtype=ml_dtypes.bfloat16))
npy("i8", np.array([-128, 0, 127], dtype=np.int8))
npy("i16", np.array([-32768, 1, 32767], dtype=np.int16))
npy("i32", np.array([-2147483648, 2, 2147483647], dtype=np.int32))
npy("i64", np.array([-(2**53), 3, 2**53], dtype=np.int64))
npy("u8", np.array([0, 200, 255], dtype=np.uint8))
npy("u64", np.array([0, 2**40], dtype=np.uint64))
npy("bool", np.array([True, False, True, True], dtype=np.bool_))
npy("f64_big_endian", np.array([1.5, -2.25], dtype=">f8"))
npy("i32_big_endian", np.array([-3, 65536], dtype=">i4"))
npy("f32_fortran", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
npy("f32_v2", np.array([4.0, 5.0], dtype=np.float32), version=(2, 0))
npy("f32_scalar", np.array(2.5, dtype=np.float32))
npy("f32_empty", np.zeros((0, 3), dtype=np.float32))
npy("c64", np.array([1 + 2j], dtype=np.complex64))

# .pt: torch.save of PyTorch tensor dumps (bfloat16 included), views with offsets and strides.
pt("pt_f32", torch.tensor([[0.5, -1.25, 3.0], [1e-3, -7.0, 1e30]], dtype=torch.float32))
pt("pt_f16", torch.tensor([1.0, -2.5, 65504.0], dtype=torch.float16))
pt("pt_bf16", torch.tensor([1.0, -2.0, 3.140625], dtype=torch.bfloat16))
pt("pt_f64", torch.tensor([0.1, -1e-300], dtype=torch.float64))
pt("pt_i64", torch.tensor([-(2**40), 7], dtype=torch.int64))
pt("pt_i32", torch.tensor([-5, 6], dtype=torch.int32))
pt("pt_u8", torch.tensor([0, 255], dtype=torch.uint8))
pt("pt_bool", torch.tensor([True, False], dtype=torch.bool))
pt("pt_transposed", torch.arange(6, dtype=torch.float32).reshape(2, 3).t())
pt("pt_offset_view", torch.arange(10, dtype=torch.float32)[4:7])
pt("pt_scalar", torch.tensor(1.5, dtype=torch.float32))


# Damaged files (what a bit flip or a broken writer could leave), for the readers' error paths:
# a .pt whose pickle asks for a (2^31-1) x (2^31-1) view of 6 floats, one with a negative size,
# and a .npy whose header shape makes shape x itemsize wrap around 2^64.
def damaged_pt(name, sizes):
    src = os.path.join(here, "pt_f32.pt")
    with zipfile.ZipFile(src) as z:
        entries = [(n, z.read(n)) for n in z.namelist()]
    with zipfile.ZipFile(os.path.join(here, name + ".pt"), "w", zipfile.ZIP_STORED) as out:
        for n, data in entries:
            if n.endswith("data.pkl"):
                assert b"K\x02K\x03\x86" in data
                data = data.replace(b"K\x02K\x03\x86", sizes)
            out.writestr(zipfile.ZipInfo(n.replace("pt_f32/", name + "/")), data)


damaged_pt("pt_bad_huge_view", b"J\xff\xff\xff\x7fJ\xff\xff\xff\x7f\x86")
damaged_pt("pt_bad_negative_size", b"J\xfe\xff\xff\xffK\x03\x86")
header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }"
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(os.path.join(here, "npy_bad_wrapping_shape.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + b"\x00" * 16)
# torch writes stored (uncompressed) archives; a deflated one is refused, not misread.
with (
    zipfile.ZipFile(os.path.join(here, "pt_f32.pt")) as z,
    zipfile.ZipFile(os.path.join(here, "pt_bad_deflated.pt"), "w", zipfile.ZIP_DEFLATED) as out,
):
    for n in z.namelist():
        info = zipfile.ZipInfo(n.replace("pt_f32/", "pt_bad_deflated/"))
        info.compress_type = zipfile.ZIP_DEFLATED
        out.writestr(info, z.read(n))


# A .pt with zip64 records: torch.save writes them for archives past 4 GiB (and Python's zipfile only then, even
# with force_zip64), too big for a fixture, so pt_f32.pt's members are written again by hand with every size and
# offset in zip64 extra fields and the directory found through the zip64 end record, as APPNOTE 4.5.3 allows.
def zip64_pt(src_name, name):
    import struct
    import zlib

    with zipfile.ZipFile(os.path.join(here, src_name + ".pt")) as z:
        entries = [(n.replace(src_name + "/", name + "/"), z.read(n)) for n in z.namelist()]
    out, central = b"", b""
    for n, data in entries:
        crc, offset, raw = zlib.crc32(data), len(out), n.encode()
        extra = struct.pack("<HHQQ", 1, 16, len(data), len(data))
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF, len(raw),
                           len(extra)) + raw + extra + data
        extra = struct.pack("<HHQQQ", 1, 24, len(data), len(data), offset)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                               len(raw), len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + raw + extra
    directory, end64 = len(out), len(out) + len(central)
    out += central
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, len(entries), len(entries), len(central),
                       directory)
    out += struct.pack("<IIQI", 0x07064B50, 0, end64, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    with open(os.path.join(here, name + ".pt"), "wb") as f:
        f.write(out)


zip64_pt("pt_f32", "pt_zip64")
