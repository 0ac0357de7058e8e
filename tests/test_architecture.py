"""The shape of the code (DESIGN.md, "Layers and folders" and decision 11), checked so it lasts:

- every backend module defines every function of tensor.backend.INTERFACE, with the same
  parameters;
- the kernel families generated for both devices expose the same kernels;
- imports point one way: no import circle (function-level imports included) but the
  tensor -> autograd hook; the backends never import op modules; the core Tensor, the op
  layer and nn import neither tensor.cpu nor tensor.cuda;
- no op module branches on the device type (the backends do).
"""
from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import tensor  # noqa: F401  (registers the op-layer families)
from tensor import backend
from tensor import dtypes as dt

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tensor", "autograd", "nn")


KINDS = sorted(backend._MODULES)


@pytest.mark.parametrize("kind", KINDS)
def test_backend_defines_the_interface(kind):
    be = backend.backend_for(kind)
    missing = [n for n in backend.INTERFACE if not hasattr(be, n)]
    assert not missing, f"backend {kind} lacks {missing}"
    for n in backend.INTERFACE:
        f = getattr(be, n)
        assert callable(f) or (f is None and n in backend.OPTIONAL), f"{kind}.{n} is {f!r}"


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "cpu"])
def test_backends_agree_on_parameters(kind):
    """Every backend's functions take the CPU backend's arguments (the reference device)."""
    cpu, other = backend.backend_for("cpu"), backend.backend_for(kind)
    for n in backend.INTERFACE:
        a, b = getattr(cpu, n), getattr(other, n)
        if a is None or b is None:
            continue
        pa = list(inspect.signature(a).parameters)
        pb = list(inspect.signature(b).parameters)
        assert pa == pb, f"{n}: cpu {pa} vs {kind} {pb}"


def test_unknown_device_type_is_refused():
    with pytest.raises(ValueError, match="no backend for device type 'tpu'"):
        backend.backend_for("tpu")


def _cpu_names(family: str, d) -> set:
    from tensor.cpu import kernels as K
    return set(re.findall(r"(\w+)\s*\(", K._SOURCES[family](d)[1]))


# CPU kernels with no CUDA kernel of the same name, and why
_CPU_ONLY = {
    # the CUDA backend counts, fills and repeats through tiled scans (sx_nz_tiles, sx_scan_*,
    # sx_repeat_*) and has no fused put: x[idx] = v scatters there (deterministic, sorted)
    "index": {"sx_count_nonzero", "sx_nonzero_fill", "sx_repeat_index", "sx_put_1", "sx_put_2",
              "sx_put_4", "sx_put_8", "sx_put_16"},
    # the CUDA randperm runs the same Fisher-Yates swaps in rounds (randperm_small/_round/...)
    "random": {"randperm"},
    # the CUDA row sort runs in passes (sx_sort_keys, the index family's radix passes,
    # sx_sort_rowkey, sx_sort_out): tensor/cuda/sort.py
    "sort": {f"sx_sort_rows_{d.sfx}" for d in dt.REAL},
}


@pytest.mark.parametrize("family", ["ew", "red", "misc", "nn_rows", "nn_attn", "nn_pool", "optim", "index",
                                    "random", "gemm", "sort", "amp", "optim_master", "fft"])
def test_kernel_families_match(family):
    """Every CPU kernel of a family has a CUDA kernel of the same name (for the dtypes CUDA
    builds it for): the CUDA side may add variants (warp-per-row rows, scan passes)."""
    from tensor.cuda import kernels as CK
    CK.load_families()
    dtypes = CK._DTYPES[family]
    if family == "gemm":   # one CPU module holds every dtype; CUDA builds one per dtype, in
        cuda = set().union(*(CK.kernel_names("gemm", d) for d in dtypes))   # tile variants
        # gemm_epi_<dtype>: the CPU gemm with an epilogue; CUDA generates each captured run's
        # epilogue kernel from the gemm templates (tensor/cuda/fused.py gemm_source)
        # gemm_bf16_amx: whether the CPU's bfloat16 products run on AMX tiles (a CPU query)
        lack = [n for n in _cpu_names("gemm", None) if not n.startswith("gemm_epi_")
                and n != "gemm_bf16_amx" and not any(k == n or k.startswith(n + "_") for k in cuda)]
        assert lack == []
        return
    for d in dtypes:
        cpu = _cpu_names(family, d) - _CPU_ONLY.get(family, set())
        cuda = set(CK.kernel_names(family, d))
        assert cpu <= cuda, f"{family} {d}: CPU kernels without a CUDA twin: {sorted(cpu - cuda)}"
    assert {d for d in dt.ALL if family == "ew"} <= set(dtypes)


# ---------------------------------------------------------------- imports

def _modules() -> dict:
    out = {}
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            rel = p.relative_to(ROOT).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out[".".join(parts)] = p
    return out


def _imports(mods: dict) -> tuple[dict, dict]:
    """(module-level imports, function-level imports) of each module, as module names."""
    top = {m: set() for m in mods}
    lazy = {m: set() for m in mods}
    for m, p in mods.items():
        is_pkg = p.name == "__init__.py"

        def visit(node, in_fn, m=m, is_pkg=is_pkg):
            for ch in ast.iter_child_nodes(node):
                fn = in_fn or isinstance(ch, ast.FunctionDef | ast.AsyncFunctionDef)
                if isinstance(ch, ast.Import):
                    names = [a.name for a in ch.names]
                elif isinstance(ch, ast.ImportFrom):
                    base = m.split(".") if is_pkg else m.split(".")[:-1]
                    if ch.level:
                        base = base[:len(base) - ch.level + 1]
                        b = ".".join(base + ([ch.module] if ch.module else []))
                    else:
                        b = ch.module
                    names = [f"{b}.{a.name}" if f"{b}.{a.name}" in mods else b for a in ch.names]
                else:
                    visit(ch, fn)
                    continue
                for t in names:
                    while t and t not in mods:
                        t = t.rpartition(".")[0]
                    if t and t != m:
                        (lazy if fn else top)[m].add(t)
        visit(ast.parse(p.read_text()), False)
    return top, lazy


def _cycles(graph: dict) -> list:
    index, low, stack, on, out = {}, {}, [], set(), []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in graph:
        if v not in index:
            strong(v)
    return out


MODS = _modules()
TOP, LAZY = _imports(MODS)
_OP_LAYER = {m for m in MODS if m.startswith("tensor.") and not m.startswith(
    ("tensor.cpu", "tensor.cuda", "tensor.backend"))}


def test_no_module_level_import_circle():
    assert _cycles(TOP) == []


def test_no_import_circle_but_the_autograd_hook():
    """Function-level imports count too (a lazy import that dodges a circle is still one);
    the one allowed link back up is tensor/_hook.py's import of autograd."""
    graph = {m: (TOP[m] | LAZY[m]) - ({t for t in MODS if t.startswith("autograd")}
                                      if m == "tensor._hook" else set()) for m in MODS}
    assert _cycles(graph) == []


def test_backends_never_import_the_op_layer():
    """tensor/backend, tensor/cpu and tensor/cuda use the data model (_tensor, dtypes, views,
    device, memory) and each other, never an op module, not even inside a function."""
    allowed = {"tensor._tensor", "tensor.dtypes", "tensor.views", "tensor.device", "tensor.memory",
               "tensor.memstats", "tensor.optable", "tensor.redtable", "tensor._dlpack",
               "tensor.kernel_cache"}
    bad = []
    for m in MODS:
        if m.startswith(("tensor.cpu", "tensor.cuda", "tensor.backend")):
            for t in TOP[m] | LAZY[m]:
                if t in _OP_LAYER and t not in allowed:
                    bad.append((m, t))
    # tensor/cuda/__init__.py is the public torch.cuda-like namespace (memory stats, streams)
    assert [b for b in bad if b[0] != "tensor.cuda"] == []


def test_core_op_layer_and_nn_use_only_the_backend_interface():
    # tensor.distributed._nccl is an engine of its own: it drives CUDA streams and events;
    # tensor._dlpack builds its capsule destructor's guard (host C, tensor/cpu/csrc/capsule.c)
    bad = [(m, t) for m in MODS if m in _OP_LAYER | {m for m in MODS if m.startswith(("nn", "autograd"))}
           and m not in ("tensor", "tensor.distributed._nccl", "tensor._dlpack")
           for t in TOP[m] | LAZY[m] if t.startswith(("tensor.cpu", "tensor.cuda"))]
    assert bad == []


def test_tensor_reaches_autograd_only_through_the_hook():
    edges = sorted((m, t) for m in MODS for t in TOP[m] | LAZY[m]
                   if m.startswith("tensor") and t.startswith("autograd"))
    assert {m for m, _ in edges} <= {"tensor._hook"}, edges


_DEVICE_BRANCH = re.compile(r"""\.type\s*[!=]=\s*["'](cpu|cuda)["']""")
# device-type tests that stay outside the backends, and why
_BRANCH_OK = {
    "tensor/device.py",      # parsing device strings
    "tensor/_methods.py",    # Tensor.to's argument parsing; record_stream is a CUDA-stream API
    "tensor/_tensor.py",     # Tensor.is_cuda (PyTorch's property)
    "tensor/interop.py",     # NumPy views need host memory; DLPack's device codes
    "tensor/indexing.py",    # an index on the host may move to the device, never back
    "tensor/scatter.py",     # a value on the host may move to the device, never back
    "tensor/distributed/_group.py",  # backend=None picks NCCL for CUDA, as PyTorch
}


def test_no_device_branches_outside_the_backends():
    stale = [f for f in _BRANCH_OK if not _DEVICE_BRANCH.search((ROOT / f).read_text())]
    assert stale == [], "listed as branching on the device but no longer do"
    bad = []
    for m, p in MODS.items():
        rel = str(p.relative_to(ROOT))
        if m.startswith(("tensor.cpu", "tensor.cuda", "tensor.backend")) or rel in _BRANCH_OK:
            continue
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if _DEVICE_BRANCH.search(line):
                bad.append(f"{rel}:{i}: {line.strip()}")
    assert bad == []
