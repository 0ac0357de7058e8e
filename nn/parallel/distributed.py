"""DistributedDataParallel: data parallelism over tensor.distributed, as PyTorch's.

Every rank holds a replica of the module and runs it on its share of the batch; backward
averages the gradients over the ranks, so after `loss.backward()` every rank holds the same
.grad (the gradient of the mean loss over the whole batch when each rank's loss is the mean over
an equal share) and the optimizers step identically.

How (PyTorch's reducer, in Python):

* at wrap: the ranks compare their parameters' names, shapes and dtypes (a mismatch raises the
  same error on every rank), then rank 0's parameters (frozen ones too) and buffers are
  broadcast to the others;
* the parameters are laid out, in reverse order (roughly the order backward produces their
  gradients), in flat buckets of at most bucket_cap_mb, one dtype and device per bucket;
* a hook on each parameter copies its gradient (added to the .grad it already has: gradient
  accumulation) into its slot of the bucket as soon as backward produces it; a bucket whose
  gradients are all in is all-reduced asynchronously (the backend's worker thread runs it while
  backward goes on), buckets strictly in order, so every rank issues the same collectives;
* when backward has finished (autograd.engine.queue_callback), the buckets not launched yet
  (those holding a parameter that got no gradient: its slot is its old .grad or zero) are
  launched, all are waited for, and each parameter's .grad becomes its slot divided by the world
  size (a view of the bucket with gradient_as_bucket_view=True).

no_sync() turns the reduction off for the forward/backward passes inside it (gradients
accumulate locally, as without DDP); the next synchronised backward reduces the accumulated sum.
With find_unused_parameters=True the graph of the forward's outputs is searched for the
parameters it does not reach: their slots are filled at the start of backward (so their buckets
need not wait for the end), and a parameter no rank used keeps its .grad (None) as PyTorch does;
without it, such a parameter gets a zero .grad. Results are deterministic: the same buckets and
the same collectives in the same order on every run.

    mpiexec -n 2 python train.py, where train.py does:

    import tensor.distributed as dist, nn
    from nn.parallel import DistributedDataParallel
    dist.init_process_group()
    model = DistributedDataParallel(nn.Linear(4, 2))
    model(x_shard).pow(2).mean().backward()       # every rank: .grad averaged over the ranks
"""
from __future__ import annotations

import contextlib
import json

import numpy as np

import tensor as T
import tensor.distributed as dist
from autograd.checkpoint import _tensors_in
from autograd.engine import backward_running, queue_callback
from autograd.grad_mode import is_grad_enabled, no_grad
from autograd.graph import AccumulateGrad, edge_of
from tensor import elementwise as ew
from tensor._tensor import Tensor
from tensor.distributed._group import resolve

from ..module import Module

__all__ = ["DistributedDataParallel"]


class _Bucket:
    """One flat buffer and the parameters (indices into the DDP's list) laid out in it."""

    __slots__ = ("index", "members", "buffer", "pending", "work")

    def __init__(self, index: int, members: list, buffer: Tensor):
        self.index, self.members, self.buffer = index, members, buffer
        self.pending, self.work = len(members), None


class DistributedDataParallel(Module):
    """Wrap `module` for data-parallel training (PyTorch's arguments; device_ids, output_device
    and dim are accepted for compatibility: a rank's module lives on one device already).

    bucket_cap_mb: the size of a gradient bucket in MiB; process_group: the group to average
    over (the world by default); broadcast_buffers: broadcast rank 0's buffers at each forward;
    find_unused_parameters: search the forward's graph for parameters it does not use;
    gradient_as_bucket_view: .grad is a view of the bucket (no copy); static_graph is
    accepted and changes nothing; init_sync=False skips the broadcast at wrap; overlap (ours,
    for measurements): False launches every all-reduce only once backward has finished."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb: float = 25,
                 find_unused_parameters: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, *, init_sync: bool = True,
                 overlap: bool = True) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: module must be an nn.Module, got "
                            f"{type(module).__name__}")
        if not bucket_cap_mb > 0:
            raise ValueError(f"DistributedDataParallel: bucket_cap_mb must be positive, got "
                             f"{bucket_cap_mb!r}")
        self.module = module
        g = process_group
        self.process_group = g
        resolve(g, "DistributedDataParallel")    # initialised, and this process a member
        self.world_size = dist.get_world_size(g)
        self.src = 0 if g is None else g.ranks[0]   # the global rank whose state is copied
        self.broadcast_buffers = bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.gradient_as_bucket_view = bool(gradient_as_bucket_view)
        self.overlap = bool(overlap)
        self.bucket_cap_mb = bucket_cap_mb
        self.require_backward_grad_sync = True
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        self._names = [n for n, _ in named]
        self._params = [p for _, p in named]
        # frozen parameters (requires_grad=False): no gradient to average, but compared and
        # broadcast at wrap like the buffers (as PyTorch), so the replicas start identical
        self._frozen = [(n, p) for n, p in module.named_parameters() if not p.requires_grad]
        # where the small bookkeeping collectives run (NCCL needs device tensors)
        self._device = self._params[0].device if self._params else T.get_default_device()
        self._check_replicas(module)
        self._buckets, self._slot = self._layout(bucket_cap_mb * 2.0 ** 20)
        if init_sync:
            self._sync_state()
        self._hooks = [p.register_hook(self._hook_for(i)) for i, p in enumerate(self._params)]
        self._accs = [edge_of(p)[0] for p in self._params]
        self._sync = False        # the next backward reduces (set by a forward outside no_sync)
        self._armed = False       # a backward that reduces is running
        self._ready = [False] * len(self._params)
        self._unused: list = []   # found by find_unused_parameters in the latest forward
        self._next = 0            # the next bucket to launch

    # ------------------------------------------------------------ wrap time

    def _check_replicas(self, module: Module) -> None:
        """Every rank must hold the same parameters (names, shapes, dtypes) and buffers: else
        the same DistributedError on every rank, naming the first difference."""
        what = "DistributedDataParallel"
        mine = [[n, list(p.shape), p.dtype.name] for n, p in zip(self._names, self._params)]
        mine += [["frozen parameter " + n, list(p.shape), p.dtype.name] for n, p in self._frozen]
        mine += [["buffer " + n, list(b.shape), b.dtype.name] for n, b in module.named_buffers()]
        raw = json.dumps(mine).encode()
        g, w, dev = self.process_group, self.world_size, self._device
        lens = T.zeros((w,), dtype=T.int64, device=dev)
        dist.all_gather_into_tensor(lens, T.tensor([len(raw)], dtype=T.int64, device=dev),
                                    group=g)
        width = max(lens.tolist())
        mine_t = T.zeros((width,), dtype=T.uint8, device=dev)
        if raw:
            mine_t[:len(raw)] = T.asarray(np.frombuffer(raw, np.uint8), device=dev)
        every = T.zeros((w * width,), dtype=T.uint8, device=dev)
        dist.all_gather_into_tensor(every, mine_t, group=g)
        data = bytes(every.tolist())
        sigs = [json.loads(data[r * width:r * width + n]) for r, n in enumerate(lens.tolist())]
        for r, s in enumerate(sigs[1:], 1):
            if s == sigs[0]:
                continue
            ranks = (self.process_group.ranks if self.process_group is not None
                     else list(range(w)))
            for k in range(max(len(s), len(sigs[0]))):
                a = sigs[0][k] if k < len(sigs[0]) else None
                b = s[k] if k < len(s) else None
                if a != b:
                    def say(x):
                        return "nothing" if x is None else f"{x[0]!r} {tuple(x[1])} {x[2]}"
                    raise dist.DistributedError(
                        f"{what}: the ranks' modules differ: entry {k} is {say(a)} on rank "
                        f"{ranks[0]} but {say(b)} on rank {ranks[r]}; every rank must wrap the "
                        "same model (same parameters and buffers, shapes and dtypes)")

    def _layout(self, cap: float):
        """Buckets of parameters in reverse order, one dtype and device each, closed once they
        hold cap bytes; returns (buckets, per parameter (bucket, offset))."""
        open_: dict = {}
        groups: list = []
        for i in reversed(range(len(self._params))):
            p = self._params[i]
            key = (p.dtype, p.device)
            cur = open_.get(key)
            if cur is None:
                cur = open_[key] = [key, [], 0]
                groups.append(cur)
            cur[1].append(i)
            cur[2] += p.numel() * p.dtype.itemsize
            if cur[2] >= cap:
                del open_[key]
        buckets, slot = [], [None] * len(self._params)
        for b, ((d, dev), members, _) in enumerate(groups):
            off = 0
            for i in members:
                slot[i] = (b, off)
                off += self._params[i].numel()
            buckets.append(_Bucket(b, members, T.zeros((off,), dtype=d, device=dev)))
        self._views = [self._view(i, buckets, slot) for i in range(len(self._params))]
        return buckets, slot

    def _view(self, i, buckets, slot) -> Tensor:
        b, off = slot[i]
        p = self._params[i]
        return buckets[b].buffer[off:off + p.numel()].reshape(p.shape)

    def _sync_state(self) -> None:
        """Rank 0's parameters (through the buckets: one broadcast each) and buffers."""
        if self.world_size == 1:
            return
        with no_grad():
            for b in self._buckets:
                for i in b.members:
                    ew.copy_into(self._views[i], self._params[i])
                dist.broadcast(b.buffer, self.src, group=self.process_group)
                for i in b.members:
                    ew.copy_into(self._params[i], self._views[i])
            for _, p in self._frozen:
                dist.broadcast(p.detach(), self.src, group=self.process_group)
        self._broadcast_buffers()

    def _broadcast_buffers(self) -> None:
        for b in self.module.buffers():
            dist.broadcast(b, self.src, group=self.process_group)

    # ------------------------------------------------------------ forward

    def forward(self, *args, **kwargs):
        if self._armed and backward_running():   # recomputed in backward (checkpoint)
            return self.module(*args, **kwargs)
        self._wait_all()  # a backward that raised may have left collectives in flight
        if self.broadcast_buffers and self.world_size > 1:
            self._broadcast_buffers()
        out = self.module(*args, **kwargs)
        # a reducing forward whose backward has not run yet (the module called twice, one
        # backward of the summed losses): a parameter is unused only if no such forward used it
        before = set(self._unused) if self._sync and not self._armed else None
        self._sync = self.require_backward_grad_sync and is_grad_enabled()
        if self._sync:
            self._reset()
            outs = [t for t in _tensors_in(out, []) if t.requires_grad]
            for t in outs:   # arm at the start of backward, before any parameter's gradient
                t.register_hook(self._arm_hook)
            if self.find_unused_parameters:
                self._unused = [i for i in self._unreached(outs) if before is None or i in before]
        return out

    def _unreached(self, outs) -> list:
        """Indices of the parameters whose accumulator the outputs' graph does not reach."""
        seen, stack = set(), []
        for t in outs:
            e = edge_of(t)
            if e is not None and id(e[0]) not in seen:
                seen.add(id(e[0]))
                stack.append(e[0])
        while stack:
            n = stack.pop()
            if isinstance(n, AccumulateGrad):
                continue
            for e in n.next:
                if e is not None and id(e[0]) not in seen:
                    seen.add(id(e[0]))
                    stack.append(e[0])
        return [i for i, a in enumerate(self._accs) if id(a) not in seen]

    @contextlib.contextmanager
    def no_sync(self):
        """Forward/backward passes inside accumulate gradients locally, without communication;
        the first synchronised backward after reduces the accumulated total."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # ------------------------------------------------------------ backward

    def _reset(self) -> None:
        self._armed = False
        self._next = 0
        self._ready = [False] * len(self._params)
        for b in self._buckets:
            b.pending, b.work = len(b.members), None

    def _arm_hook(self, g):
        if self._sync and not self._armed:
            self._arm()

    def _arm(self) -> None:
        """The first hook of a reducing backward: queue the finish, fill the unused slots."""
        self._armed = True
        queue_callback(self._finish)
        for i in self._unused:
            self._fill(i)
        self._launch_ready()

    def _hook_for(self, i: int):
        def ddp_grad_ready(g):
            if not self._sync:
                return None
            if not self._armed:
                self._arm()
            if self._ready[i]:
                raise RuntimeError(
                    f"DistributedDataParallel: parameter {self._names[i]!r} got a gradient but was "
                    "marked unused (find_unused_parameters found it outside the forward's graph) "
                    "or got one twice in this backward")
            self._take(i, g)
            return None
        return ddp_grad_ready

    def _take(self, i: int, g: Tensor) -> None:
        """Parameter i's gradient g (plus its current .grad) into its slot; the engine then
        writes g into .grad, which the finish replaces with the average."""
        p, view = self._params[i], self._views[i]
        with no_grad():
            g = g.detach()
            if p.grad is not None:
                ew.binary("add", p.grad.detach(), g, out=view)
            else:
                ew.copy_into(view, g)
        p.grad = None
        self._done(i)

    def _fill(self, i: int) -> None:
        """No gradient for parameter i in this backward: its slot is its .grad, or zero."""
        p, view = self._params[i], self._views[i]
        with no_grad():
            if p.grad is not None:
                ew.copy_into(view, p.grad.detach())
            else:
                view.fill_(0)
        self._done(i)

    def _done(self, i: int) -> None:
        self._ready[i] = True
        b = self._buckets[self._slot[i][0]]
        b.pending -= 1
        if b.pending == 0 and self.overlap:
            self._launch_ready()

    def _launch_ready(self) -> None:
        """Launch the buckets whose gradients are all in, in bucket order only."""
        bs = self._buckets
        while self._next < len(bs) and bs[self._next].pending == 0:
            self._launch(bs[self._next])
            self._next += 1

    def _launch(self, b: _Bucket) -> None:
        b.work = dist.all_reduce(b.buffer, group=self.process_group, async_op=True)

    def _finish(self) -> None:
        """End of backward: launch what is left, wait, average into .grad."""
        used = None
        try:
            for i, r in enumerate(self._ready):
                if not r:
                    self._fill(i)
            bs = self._buckets
            while self._next < len(bs):
                self._launch(bs[self._next])
                self._next += 1
            if self.find_unused_parameters:   # which parameters some rank used
                used = T.ones((len(self._params),), dtype=T.int32, device=self._device)
                if self._unused:
                    used[T.asarray(self._unused, dtype=T.int64, device=self._device)] = 0
                uw = dist.all_reduce(used, group=self.process_group, async_op=True)
            self._wait_all()
            if used is not None:
                uw.wait()
                used = used.tolist()
            self._write_grads(used)
        finally:
            self._reset()
            self._sync = False   # the next reducing backward needs a forward through us

    def _wait_all(self) -> None:
        for b in self._buckets:
            w, b.work = b.work, None
            if w is not None:
                w.wait()

    def _write_grads(self, used) -> None:
        n = self.world_size
        with no_grad():
            if self.gradient_as_bucket_view:
                for b in self._buckets:
                    b.buffer.__itruediv__(n)
            for i, p in enumerate(self._params):
                if used is not None and not used[i]:
                    continue    # no rank used it: .grad stays as it was
                v = self._views[i]
                p.grad = v if self.gradient_as_bucket_view else v / n

    # ------------------------------------------------------------ display

    def extra_repr(self) -> str:
        return (f"world_size={self.world_size}, buckets={len(self._buckets)}, "
                f"bucket_cap_mb={self.bucket_cap_mb}")
