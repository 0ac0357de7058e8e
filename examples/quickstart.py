"""A short tour of tensor: NumPy-style scripting on our own kernels.

Run: python examples/quickstart.py
"""
import time

import numpy as np

import tensor as T


def section(title):
    print(f"\n== {title} ==")


section("creation and dtypes")
x = T.arange(12, dtype="float32").reshape(3, 4)
print(repr(x))
print("promotion:", (T.arange(3, dtype="int8") + 1).dtype, (T.arange(3) / 2).dtype,
      T.result_type(T.float16, T.bfloat16))

section("zero-copy views")
y = x.T[::-1]  # transpose + negative step: new strides, same memory
print("x.T[::-1] strides", y.strides, "shares memory:", T.shares_memory(x, y))
y[0, 0] = 100.0  # writes through the view reach the base
print("x after writing through the view:\n", x)
print("reshape of a transposed view copies:", not T.shares_memory(x, x.T.reshape(-1)))

section("broadcasting and elementwise ops")
col = T.linspace(0, 1, 3).reshape(3, 1).astype("float32")
print((x * col + T.exp(-x / 10)).round(3))

section("reductions (deterministic)")
r = T.random.Generator(0).randn(1000, 1000, dtype="float32")
print("sum", r.sum().item(), "mean of rows", r.mean(axis=1)[:3].tolist())
print("argmax per column", r.argmax(axis=0)[:5].tolist(), "std", float(r.std()))
print("same bits twice:", r.sum().item() == r.sum().item())

section("matmul")
a = T.random.randn(512, 256, dtype="float32")
b = T.random.randn(256, 384, dtype="float32")
t0 = time.perf_counter()
c = a @ b
dt = time.perf_counter() - t0
print(f"(512x256) @ (256x384) in {dt * 1e3:.2f} ms;",
      "max |diff| vs NumPy:", float(np.abs(c.numpy() - a.numpy() @ b.numpy()).max()))
print("batched broadcast:", (T.ones((4, 1, 2, 3)) @ T.ones((5, 3, 6))).shape)

section("indexing")
z = T.arange(10) * 10
print(z[[1, 3, 3]].tolist(), z[z > 60].tolist())
z[z > 60] = -1
print(z.tolist())

section("interop")
n = np.arange(6.0).reshape(2, 3)
t = T.asarray(n)  # zero-copy
t[0, 0] = 42
print("NumPy sees the write:", n[0, 0], "| DLPack back to NumPy:", np.from_dlpack(t).sum())
print("allocated:", T.memory_allocated(), "bytes; reserved:", T.memory_reserved(), "bytes")
