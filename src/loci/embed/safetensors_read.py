"""Reading a `.safetensors` file with NumPy alone: an 8-byte little-endian header length, a
JSON header naming each tensor's dtype, shape and byte range, then the raw data. Only the
float types encoders ship in are read (F32, F16, BF16), each returned as float32."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import numpy.typing as npt

from loci.errors import EmbeddingError

_MAX_HEADER = 100 * 1024 * 1024


def read_safetensors(path: Path) -> dict[str, npt.NDArray[np.float32]]:
    data = path.read_bytes()
    if len(data) < 8:
        raise EmbeddingError(f"{path.name} is not a safetensors file (too short)")
    (length,) = struct.unpack_from("<Q", data, 0)
    if length > min(_MAX_HEADER, len(data) - 8):
        raise EmbeddingError(f"{path.name} is not a safetensors file (bad header length)")
    try:
        header = json.loads(data[8 : 8 + length])
    except ValueError:
        raise EmbeddingError(
            f"{path.name} is not a safetensors file (header is not JSON)"
        ) from None
    body = memoryview(data)[8 + length :]
    tensors: dict[str, npt.NDArray[np.float32]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        shape = tuple(int(n) for n in spec["shape"])
        if not 0 <= start <= end <= len(body):
            raise EmbeddingError(f"{path.name}: tensor {name} lies outside the file")
        raw = body[start:end]
        dtype = spec["dtype"]
        if dtype == "F32":
            array = np.frombuffer(raw, "<f4")
        elif dtype == "F16":
            array = np.frombuffer(raw, "<f2").astype(np.float32)
        elif dtype == "BF16":
            # bfloat16 is the top half of a float32.
            array = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            continue  # integer buffers (position ids) are not weights
        if array.size != int(np.prod(shape)):
            raise EmbeddingError(f"{path.name}: tensor {name} does not match its shape")
        tensors[name] = array.reshape(shape).astype(np.float32, copy=False)
    return tensors
