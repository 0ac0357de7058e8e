"""Tests for tensor.memory: the caching allocator, driven by a fake raw allocator."""

from __future__ import annotations

import doctest
import gc
import itertools
import random
import threading

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tensor import memory
from tensor.cpu import alloc as cpu_alloc
from tensor.memory import Block, CachingAllocator, OutOfMemoryError

KiB = 1024
MiB = 1024 * 1024


class FakeRaw:
    """Hands out fake addresses, tracks live ones, optionally fails above ``capacity``."""

    def __init__(self, capacity: int | None = None, fail_with_zero: bool = False) -> None:
        self.capacity = capacity
        self.fail_with_zero = fail_with_zero
        self.live: dict[int, int] = {}
        self.next_addr = 1 << 32
        self.n_alloc = self.n_free = self.n_failed = 0

    def alloc(self, n: int) -> int:
        if self.capacity is not None and sum(self.live.values()) + n > self.capacity:
            self.n_failed += 1
            if self.fail_with_zero:
                return 0
            raise MemoryError(f"fake device full ({n} bytes)")
        ptr = self.next_addr
        self.next_addr += n + 64 * MiB  # a gap, so segments are never adjacent
        self.live[ptr] = n
        self.n_alloc += 1
        return ptr

    def free(self, ptr: int) -> None:
        assert ptr in self.live, f"raw free of unknown {ptr:#x}"
        del self.live[ptr]
        self.n_free += 1


def make(**kw) -> tuple[CachingAllocator, FakeRaw]:
    fake = FakeRaw(kw.pop("capacity", None), kw.pop("fail_with_zero", False))
    return CachingAllocator(fake.alloc, fake.free, **kw), fake


def check_invariants(a: CachingAllocator, fake: FakeRaw, live: list[Block]) -> None:
    """Blocks tile their segments, free lists match, stats match the live blocks."""
    assert set(fake.live) == set(a._segments)
    seen_live, seen_free, seen_quick = [], [], []
    for base, seg in a._segments.items():
        assert fake.live[base] == seg.size
        b, prev, addr = seg.head, None, base
        while b is not None:
            assert b.segment is seg and b.prev is prev and b.ptr == addr
            assert b.size > 0 and b.size % 512 == 0 and b.stream == seg.stream
            if not b.allocated:
                # pooled free blocks are merged; parked ones (exact-size cache) may touch
                assert b.quick or prev is None or prev.allocated or prev.quick, \
                    "two adjacent free blocks"
                (seen_quick if b.quick else seen_free).append(b)
            else:
                seen_live.append(b)
            addr += b.size
            prev, b = b, b.next
        assert addr == base + seg.size, "blocks do not tile the segment"
    assert {id(b) for b in seen_live} == {id(b) for b in live} and len(seen_live) == len(live)
    pooled = list(a._small.blocks.values()) + list(a._large.blocks.values())
    assert {id(b) for b in pooled} == {id(b) for b in seen_free} and len(pooled) == len(seen_free)
    parked = [b for q in a._quick.values() for b in q]
    assert {id(b) for b in parked} == {id(b) for b in seen_quick} and len(parked) == len(seen_quick)
    assert all(b.size == size for size, q in a._quick.items() for b in q)
    assert a._small.keys == sorted(a._small.keys) and a._large.keys == sorted(a._large.keys)
    by_ptr = sorted(live, key=lambda b: b.ptr)
    for x, y in itertools.pairwise(by_ptr):
        assert x.ptr + x.size <= y.ptr, "live blocks overlap"
    for b in live:
        assert b.size >= b.requested
    assert a.memory_allocated() == sum(b.size for b in live)
    s = a.memory_stats()
    assert s["requested_bytes.current"] == sum(b.requested for b in live)
    assert s["active_blocks"] == len(live)
    assert a.memory_reserved() == sum(fake.live.values()) == sum(s.size for s in a._segments.values())
    assert s["inactive_bytes"] == a.memory_reserved() - a.memory_allocated()
    assert s["num_raw_alloc"] - s["num_raw_free"] == len(fake.live)


def test_reuse_same_size_same_ptr_no_raw_alloc():
    a, fake = make()
    b = a.malloc(1000)
    p = b.ptr
    a.free(b)
    c = a.malloc(1000)
    assert c.ptr == p and c.size == 1024 and c.requested == 1000
    assert fake.n_alloc == 1 and a.memory_stats()["num_raw_alloc"] == 1


def test_zero_byte_request():
    a, _ = make()
    b = a.malloc(0)
    assert b.size == 512 and b.requested == 0 and a.memory_allocated() == 512
    a.free(b)
    assert a.memory_allocated() == 0 and a.memory_stats()["requested_bytes.current"] == 0
    with pytest.raises(ValueError):
        a.malloc(-1)


def test_split_two_small_from_one_segment():
    a, fake = make()
    x, y = a.malloc(100), a.malloc(600)
    assert fake.n_alloc == 1 and a.memory_reserved() == 2 * MiB
    assert x.segment is y.segment and y.ptr == x.ptr + 512 and y.size == 1024
    assert a.memory_stats()["inactive_split_bytes"] == 2 * MiB - 1536
    check_invariants(a, fake, [x, y])


@pytest.mark.parametrize("order", ["prev_first", "next_first"])
def test_merge_neighbours(order):
    a, fake = make()
    blocks = [a.malloc(512 * KiB) for _ in range(4)]  # fills one 2 MiB segment exactly
    assert fake.n_alloc == 1 and [b.ptr - blocks[0].ptr for b in blocks] == [0, 512 * KiB, MiB, 1536 * KiB]
    p1 = blocks[1].ptr
    pair = [blocks[1], blocks[2]] if order == "prev_first" else [blocks[2], blocks[1]]
    for b in pair:
        a.free(b)
    assert a.memory_stats()["inactive_blocks"] == 1  # the two holes became one
    big = a.malloc(MiB)
    assert big.ptr == p1 and big.size == MiB and fake.n_alloc == 1
    a.free(big)
    a.free(blocks[0])
    a.free(blocks[3])
    s = a.memory_stats()
    assert s["inactive_blocks"] == 1 and s["inactive_split_bytes"] == 0 and s["inactive_bytes"] == 2 * MiB
    check_invariants(a, fake, [])


def test_best_fit():
    a, fake = make()
    sizes = [100 * KiB, 300 * KiB, 200 * KiB]
    holes, seps = [], []
    for n in sizes:
        holes.append(a.malloc(n))
        seps.append(a.malloc(512))  # keeps the holes apart
    ptrs = [h.ptr for h in holes]
    for h in holes:
        a.free(h)
    assert fake.n_alloc == 1  # the tail of the segment is a free ~1.4 MiB block too
    got = a.malloc(150 * KiB)
    assert got.ptr == ptrs[2]  # 200 KiB hole, not 300 KiB nor the tail
    got2 = a.malloc(260 * KiB)
    assert got2.ptr == ptrs[1]
    got3 = a.malloc(45 * KiB)  # free now: 100 KiB, 40 KiB (rest of 300), 50 KiB (rest of 200), tail
    assert got3.ptr == ptrs[2] + 150 * KiB
    check_invariants(a, fake, seps + [got, got2, got3])


def test_per_stream_reuse():
    a, fake = make()
    b1 = a.malloc(1000, stream=1)
    p1 = b1.ptr
    a.free(b1)
    b2 = a.malloc(1000, stream=2)
    assert fake.n_alloc == 2 and b2.segment is not None and b2.segment.ptr != p1 and b2.stream == 2
    b3 = a.malloc(1000, stream=1)
    assert b3.ptr == p1 and b3.stream == 1 and fake.n_alloc == 2
    check_invariants(a, fake, [b2, b3])


def test_stats_current_and_peak_exact():
    a, _ = make()
    x = a.malloc(1000)
    y = a.malloc(3 * MiB)  # large pool: 20 MiB segment, split (remainder 17 MiB > 1 MiB)
    s = a.memory_stats()
    assert s["allocated_bytes.current"] == 1024 + 3 * MiB
    assert s["requested_bytes.current"] == 1000 + 3 * MiB
    assert s["reserved_bytes.current"] == 2 * MiB + 20 * MiB
    assert s["active_blocks"] == 2 and s["segments"] == 2 and s["num_raw_alloc"] == 2
    assert s["small_pool_segments"] == 1 and s["large_pool_segments"] == 1
    a.free(x)
    s = a.memory_stats()
    assert s["allocated_bytes.current"] == 3 * MiB and s["allocated_bytes.peak"] == 1024 + 3 * MiB
    assert s["requested_bytes.peak"] == 1000 + 3 * MiB and s["active_blocks.peak"] == 2
    assert s["num_mallocs"] == 2 and s["num_frees"] == 1
    # large request >= 10 MiB: segment = size rounded to 2 MiB; remainder 512 KiB is not split
    z = a.malloc(19 * MiB + 512 * KiB)
    assert z.size == 20 * MiB and a.memory_allocated() == 23 * MiB
    assert a.memory_reserved() == 42 * MiB and a.max_memory_reserved() == 42 * MiB
    a.free(y)
    a.free(z)
    assert a.memory_allocated() == 0 and a.max_memory_allocated() == 23 * MiB
    assert a.memory_stats()["requested_bytes.current"] == 0
    text = a.memory_summary()
    assert "Allocated memory" in text and "23.00 MiB" in text and "42.00 MiB" in text
    assert len(text.splitlines()) > 8


def test_reset_peak_memory_stats():
    a, _ = make()
    x = a.malloc(5 * MiB)
    a.free(x)
    assert a.max_memory_allocated() == 5 * MiB and a.memory_allocated() == 0
    a.reset_peak_memory_stats()
    assert a.max_memory_allocated() == 0 and a.max_memory_reserved() == 20 * MiB
    assert a.memory_stats()["active_blocks.peak"] == 0
    a.empty_cache()
    assert a.max_memory_reserved() == 20 * MiB  # a peak is not lowered by freeing
    a.reset_peak_memory_stats()
    assert a.max_memory_reserved() == 0
    a.malloc(1024)
    assert a.max_memory_allocated() == 1024 and a.max_memory_reserved() == 2 * MiB


def test_empty_cache_returns_all_segments():
    a, fake = make()
    rng = random.Random(1)
    live = [a.malloc(rng.choice([10, 5000, 800 * KiB, 3 * MiB, 15 * MiB]), stream=rng.randint(0, 2))
            for _ in range(60)]
    keep = live.pop()
    for b in live:
        a.free(b)
    a.empty_cache()
    assert list(fake.live) == [keep.segment.ptr] and a.memory_reserved() == keep.segment.size
    a.free(keep)
    a.empty_cache()
    assert fake.n_free == fake.n_alloc and not fake.live and a.memory_reserved() == 0
    s = a.memory_stats()
    assert s["num_raw_free"] == s["num_raw_alloc"] == fake.n_alloc and s["segments"] == 0


@pytest.mark.parametrize("fail_with_zero", [False, True])
def test_limit_oom_message_and_recovery(fail_with_zero):
    a, fake = make(fail_with_zero=fail_with_zero, limit=64 * MiB, total_memory=16 * 1024 * MiB)
    held = [a.malloc(12 * MiB)]  # 12 MiB segment
    tmp = a.malloc(16 * MiB)
    a.free(tmp)  # cached: reserved 28 MiB
    before = a.memory_stats()
    with pytest.raises(OutOfMemoryError) as ei:
        a.malloc(1024 * MiB)
    msg = str(ei.value)
    assert isinstance(ei.value, MemoryError)
    assert "1.00 GiB (1073741824 bytes)" in msg and "12.00 MiB allocated" in msg
    assert "12.00 MiB reserved" in msg  # the cached 16 MiB segment was released first
    assert "limit 64.00 MiB" in msg and "device total 16.00 GiB" in msg and "on cpu" in msg
    after = a.memory_stats()
    assert after["num_ooms"] == 1 and after["num_alloc_retries"] == 1
    for k in ("allocated_bytes.current", "requested_bytes.current", "active_blocks", "num_mallocs"):
        assert after[k] == before[k], k
    assert after["reserved_bytes.current"] == 12 * MiB == sum(fake.live.values())
    check_invariants(a, fake, held)
    held.append(a.malloc(40 * MiB))
    held.append(a.malloc(100))
    check_invariants(a, fake, held)
    for b in held:
        a.free(b)
    a.empty_cache()
    assert not fake.live and a.memory_allocated() == 0


@pytest.mark.parametrize("fail_with_zero", [False, True])
def test_raw_failure_retry_after_releasing_cache(fail_with_zero):
    a, fake = make(capacity=22 * MiB, fail_with_zero=fail_with_zero)
    x = a.malloc(3 * MiB)  # 20 MiB segment
    a.free(x)
    # another stream cannot use the cached block; 12 MiB segment: raw fails (32 > 22),
    # the cache is released, the retry works
    y = a.malloc(12 * MiB, stream=1)
    s = a.memory_stats()
    assert s["num_alloc_retries"] == 1 and s["num_ooms"] == 0 and s["num_raw_free"] == 1
    assert fake.n_failed == 1 and list(fake.live.values()) == [12 * MiB] and y.size == 12 * MiB
    with pytest.raises(OutOfMemoryError, match=r"16.00 MiB \(16777216 bytes\); 12.00 MiB allocated"):
        a.malloc(16 * MiB)
    check_invariants(a, fake, [y])


def test_segment_shrinks_to_fit_limit():
    a, fake = make(limit=8 * MiB)
    b = a.malloc(2 * MiB + 512 * KiB)  # a 20 MiB segment would exceed the limit; 4 MiB fits
    assert a.memory_reserved() == 4 * MiB and b.size == 2 * MiB + 512 * KiB  # split: rest 1.5 MiB
    c = a.malloc(3 * MiB)  # 4 MiB segment again; remainder 1 MiB is not > 1 MiB: no split
    assert a.memory_reserved() == 8 * MiB and c.size == 4 * MiB and c.requested == 3 * MiB
    check_invariants(a, fake, [b, c])


class Holder:
    """Frees its block in __del__; sits in a reference cycle so only gc frees it."""

    freed = 0

    def __init__(self, alloc: CachingAllocator, block: Block) -> None:
        self.alloc, self.block, self.me = alloc, block, self

    def __del__(self) -> None:
        self.alloc.free(self.block)
        Holder.freed += 1


@pytest.mark.parametrize("second", [12 * MiB, 16 * MiB])
def test_gc_path_frees_cycles_then_retries(second):
    a, fake = make(limit=20 * MiB)
    gc.collect()
    gc.disable()
    try:
        Holder.freed = 0
        h = Holder(a, a.malloc(12 * MiB))
        del h  # unreachable but alive: only the cycle collector can free it
        assert Holder.freed == 0 and a.memory_allocated() == 12 * MiB
        b = a.malloc(second)  # needs the 12 MiB back
    finally:
        gc.enable()
    assert Holder.freed == 1
    s = a.memory_stats()
    assert s["num_alloc_retries"] == 1 and s["num_ooms"] == 0 and s["active_blocks"] == 1
    assert a.memory_allocated() == second and a.memory_reserved() == second
    assert s["num_raw_alloc"] == (1 if second == 12 * MiB else 2)  # same size: reused from cache
    check_invariants(a, fake, [b])


def test_free_from_finalizer_during_allocator_call_is_deferred():
    """gc can start inside any allocator call (here: inside raw_alloc, under the lock);
    a finalizer's free() must then be queued, not deadlock nor corrupt the lists."""

    class Spy(CachingAllocator):
        deferred = 0

        def _drain(self) -> None:
            Spy.deferred += len(self._pending)
            super()._drain()

    fake = FakeRaw()

    def collecting_alloc(n: int) -> int:
        gc.collect()
        return fake.alloc(n)

    a = Spy(collecting_alloc, fake.free)
    gc.collect()
    gc.disable()
    try:
        Holder.freed = 0
        for _ in range(5):
            Holder(a, a.malloc(1000))  # cycles: only the collector frees them
        assert Holder.freed == 0 and a.memory_stats()["active_blocks"] == 5
        big = a.malloc(3 * MiB)  # new segment -> raw_alloc -> gc -> 5 deferred frees
    finally:
        gc.enable()
    assert Holder.freed == 5 and Spy.deferred == 5
    check_invariants(a, fake, [big])
    assert a.memory_stats()["inactive_blocks"] == 2  # whole small segment + large remainder


def test_no_growth_over_10000_cycles():
    a, fake = make()
    rng = random.Random(0)
    sizes = [0, 100, 513, 4096, 70_000, MiB, 3 * MiB, 12 * MiB]
    for cycle in range(10_000):
        if cycle == 500:
            reserved, n_raw = a.memory_reserved(), fake.n_alloc
        blocks = [a.malloc(n, stream=cycle % 2) for n in rng.sample(sizes, len(sizes))]
        for b in rng.sample(blocks, len(blocks)):
            a.free(b)
    assert a.memory_reserved() == reserved and fake.n_alloc == n_raw and fake.n_free == 0
    assert a.memory_allocated() == 0 and a.memory_stats()["num_mallocs"] == 80_000
    check_invariants(a, fake, [])


def test_double_and_foreign_free_raise():
    a, fake = make()
    other, _ = make()
    b = a.malloc(100)
    c = a.malloc(100)
    a.free(b)
    with pytest.raises(ValueError, match="double free"):
        a.free(b)
    with pytest.raises(ValueError, match="not allocated by this allocator"):
        other.free(c)
    with pytest.raises(ValueError):
        a.free(Block(c.ptr, 512, 0, None))
    with pytest.raises(TypeError):
        a.free(c.ptr)  # type: ignore[arg-type]
    d = a.malloc(100)  # reuses b's memory; the stale handle b still must not free it
    assert d.ptr == b.ptr
    with pytest.raises(ValueError):
        a.free(b)
    check_invariants(a, fake, [c, d])


def test_threads():
    a, fake = make()

    def work(seed: int) -> None:
        rng = random.Random(seed)
        held = []
        for _ in range(1500):
            if held and rng.random() < 0.5:
                a.free(held.pop(rng.randrange(len(held))))
            else:
                held.append(a.malloc(rng.choice([64, 4000, 300 * KiB, 2 * MiB]), stream=seed % 2))
        for b in held:
            a.free(b)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check_invariants(a, fake, [])
    a.empty_cache()
    assert not fake.live and fake.n_free == fake.n_alloc


class AllocatorMachine(RuleBasedStateMachine):
    @initialize(capacity=st.sampled_from([None, 48 * MiB]))
    def setup(self, capacity):
        self.a, self.fake = make(capacity=capacity)
        self.a._collect_garbage = lambda: 0  # a real gc.collect() costs ~30 ms per OOM here
        self.live: list[Block] = []

    @rule(n=st.one_of(st.integers(0, 5000), st.integers(0, 2 * MiB), st.integers(MiB, 30 * MiB)),
          stream=st.integers(0, 2))
    def malloc(self, n, stream):
        before = self.a.memory_stats()
        try:
            b = self.a.malloc(n, stream)
        except OutOfMemoryError:
            after = self.a.memory_stats()
            assert after["allocated_bytes.current"] == before["allocated_bytes.current"]
            assert after["num_ooms"] == before["num_ooms"] + 1
            return
        assert b.allocated and b.stream == stream and b.size >= max(n, 1) and b.size % 512 == 0
        self.live.append(b)

    @rule(data=st.data())
    def free(self, data):
        if self.live:
            b = self.live.pop(data.draw(st.integers(0, len(self.live) - 1)))
            self.a.free(b)

    @rule()
    def empty_cache(self):
        self.a.empty_cache()
        for seg in self.a._segments.values():  # only segments with live blocks remain
            assert seg.head.allocated or seg.head.next is not None

    @rule(limit=st.sampled_from([None, 24 * MiB, 64 * MiB]))
    def set_limit(self, limit):
        self.a.set_limit(limit)

    @invariant()
    def consistent(self):
        check_invariants(self.a, self.fake, self.live)


TestAllocatorMachine = AllocatorMachine.TestCase
TestAllocatorMachine.settings = settings(max_examples=60, stateful_step_count=40, deadline=None,
                                         suppress_health_check=[HealthCheck.too_slow])


def test_cpu_allocator_real_memory():
    import cffi

    ffi = cffi.FFI()
    a = cpu_alloc.cpu_allocator()
    assert a is cpu_alloc.cpu_allocator() and a.device == "cpu"
    assert a.total_memory is None or a.total_memory > 64 * MiB
    base = a.memory_allocated()
    b = a.malloc(1000)
    assert b.ptr % 64 == 0 and a.memory_allocated() == base + 1024
    buf = ffi.buffer(ffi.cast("char *", b.ptr), 1000)
    buf[:] = bytes(range(256)) * 3 + bytes(232)
    assert bytes(ffi.buffer(ffi.cast("char *", b.ptr), 256)) == bytes(range(256))
    c = a.malloc(2 * MiB)
    ffi.memmove(ffi.cast("char *", c.ptr + 2 * MiB - 4), b"end!", 4)
    assert bytes(ffi.buffer(ffi.cast("char *", c.ptr + 2 * MiB - 4), 4)) == b"end!"
    a.free(c)
    a.free(b)
    assert a.memory_allocated() == base
    p = cpu_alloc.cpu_raw_alloc(4096)
    assert p % 64 == 0
    cpu_alloc.cpu_raw_free(p)


def test_cpu_allocator_env_limit(monkeypatch):
    monkeypatch.setenv("STRIDEX_CPU_MEMORY_LIMIT", str(64 * MiB))
    from tensor.cpu import alloc
    monkeypatch.setattr(alloc, "_CPU_ALLOCATOR", None)
    a = cpu_alloc.cpu_allocator()
    assert a.memory_stats()["limit_bytes"] == 64 * MiB
    with pytest.raises(OutOfMemoryError, match="limit 64.00 MiB"):
        a.malloc(100 * MiB)
    a.empty_cache()
    monkeypatch.setenv("STRIDEX_CPU_MEMORY_LIMIT", "lots")
    with pytest.raises(ValueError):
        cpu_alloc._env_limit()
    monkeypatch.delenv("STRIDEX_CPU_MEMORY_LIMIT")
    assert cpu_alloc._env_limit() is None


def test_docstring_examples():
    result = doctest.testmod(memory)
    assert result.attempted >= 6 and result.failed == 0


def test_parked_small_blocks_merge_before_a_new_segment():
    a, fake = make()
    blocks = [a.malloc(64 * 1024) for _ in range(32)]  # fills one 2 MiB small segment
    assert fake.n_alloc == 1
    for b in blocks:
        a.free(b)  # parked in the exact-size cache, unmerged
    assert a.memory_allocated() == 0 and len(a._quick[64 * 1024]) == 32
    again = a.malloc(64 * 1024)  # exact-size reuse: the last parked block
    assert again.ptr == blocks[-1].ptr and fake.n_alloc == 1
    a.free(again)
    big = a.malloc(1024 * 1024)  # no pooled block fits: parked ones merge first, no raw alloc
    assert fake.n_alloc == 1 and not a._quick
    check_invariants(a, fake, [big])
    a.free(big)
    a.empty_cache()
    assert fake.n_free == 1 and a.memory_reserved() == 0


def test_gc_inside_the_quick_free_path_does_not_deadlock(monkeypatch):
    """A free() whose bookkeeping allocates can run gc, whose finalizers free() other blocks on
    the same thread: they must be queued, not wait on the allocator's own lock."""
    import gc
    import itertools
    import threading

    from tensor import memory

    addrs = itertools.count(1 << 20, 1 << 26)
    a = memory.CachingAllocator(lambda n: next(addrs), lambda p: None)

    class Holder:  # cyclic garbage whose finalizer frees a block
        def __init__(self, b):
            self.b, self.me = b, self

        def __del__(self):
            a.free(self.b)

    real_retire, fired = memory._retire, []

    def retire_then_collect(b):  # gc runs at this point inside free()'s locked section
        real_retire(b)
        if not fired:
            fired.append(1)
            gc.collect()

    def run():
        x, y = a.malloc(1000), a.malloc(1000)
        Holder(y)                              # unreachable: only gc frees y
        monkeypatch.setattr(memory, "_retire", retire_then_collect)
        a.free(x)

    gc.disable()
    try:
        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(30)
    finally:
        gc.enable()
    assert not t.is_alive(), "allocator deadlocked: gc ran a finalizer that freed inside free()"
    assert fired and a.memory_allocated() == 0
