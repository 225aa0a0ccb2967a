"""The caller's framework, chosen from the type of the `values` input: how a
robocache Buffer (a CPU output allocated by robocache) becomes an array of
that framework (its from_dlpack), and how CUDA outputs are allocated (CuPy).
PyTorch tensors take the torch.library path in _torch_ops instead."""

import importlib
import sys

from . import _C

_CUDA_DEVICE_TYPES = (2, 13)  # DLPack kDLCUDA, kDLCUDAManaged


class _Framework:
    __slots__ = ("from_dlpack", "module_name", "cpu_only")

    def __init__(self, from_dlpack, module_name, cpu_only):
        self.from_dlpack = from_dlpack
        self.module_name = module_name
        self.cpu_only = cpu_only

    def wrap(self, obj):
        """obj itself (the caller's out=), or a Buffer converted."""
        if type(obj) is _C.Buffer and self.from_dlpack is not None:
            return self.from_dlpack(obj)
        return obj

    def out_dtype(self, dtype):
        """The out_dtype name, refused early where the framework lacks it."""
        name = dtype_name(dtype)
        if name == "bfloat16" and self.module_name == "numpy":
            raise TypeError("out_dtype: NumPy has no bfloat16; use float32 or float16, or pass "
                            "torch tensors")
        return name

    def is_cuda(self, x):
        device = None if self.cpu_only else getattr(x, "__dlpack_device__", None)
        return device is not None and device()[0] in _CUDA_DEVICE_TYPES

    def empty(self, shape, dtype, like):
        """A CUDA array for an output (CuPy); other frameworks need out=."""
        if self.module_name != "cupy":
            raise ValueError(
                f"{type(like).__name__} inputs on a CUDA device: pass out= (and valid=) "
                "allocated on that device, or use PyTorch or CuPy arrays")
        cupy = importlib.import_module("cupy")
        with cupy.cuda.Device(like.__dlpack_device__()[1]):
            return cupy.empty(shape, dtype=dtype)

    def stream(self, like):
        """The current CUDA stream of the framework (CuPy), or None."""
        if self.module_name != "cupy":
            return None
        return importlib.import_module("cupy").cuda.get_current_stream().ptr


def _make(tp):
    root = (getattr(tp, "__module__", "") or "").split(".")[0]
    if root == "numpy":
        import numpy

        return _Framework(numpy.from_dlpack, "numpy", True)
    if root == "cupy":
        return _Framework(importlib.import_module("cupy").from_dlpack, "cupy", False)
    if root in ("jax", "jaxlib"):
        return _Framework(importlib.import_module("jax.numpy").from_dlpack, "jax", False)
    if root == "torch":
        return _Framework(importlib.import_module("torch").from_dlpack, "torch", False)
    try:  # any other __dlpack__ producer: NumPy arrays out when NumPy exists
        import numpy

        return _Framework(numpy.from_dlpack, "numpy", False)
    except ImportError:
        return _Framework(None, "", False)


_cache = {}


def of(x):
    """The framework of x (cached per type)."""
    fw = _cache.get(type(x))
    if fw is None:
        fw = _cache[type(x)] = _make(type(x))
    return fw


def dtype_name(dtype):
    """'float32', 'bfloat16', ... from a str, NumPy/JAX/CuPy or torch dtype."""
    if dtype is None or isinstance(dtype, str):
        return dtype
    name = getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)
    return name[6:] if name.startswith("torch.") else name


def is_torch_tensor(x):
    """x is a torch.Tensor, checked without importing torch (a tensor exists
    only once torch is imported)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)
