#!/usr/bin/env bash
# One command for a lent GPU machine (the `device` tool's run): install the wheels carried in
# .whl/ (cffi, pycparser, and nvidia-cuda-nvrtc when the machine lacks NVRTC), run every
# CUDA test on the real GPU, then the GPU benchmark; logs go to $OUT.
#   run(command="bash benchmarks/run_on_gpu.sh", carry=[".whl"])
set -uo pipefail
OUT=${OUT:-/tmp/stridex-gpu}
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 CI=1 STRIDEX_CUDA_EMULATOR=0
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
python3 -c "import tensor as T; print(T.cuda.is_available(), T.cuda.get_device_name())" 2>&1 | tee "$OUT/device.txt"
timeout 420 python3 -m pytest -q -p no:cacheprovider -rs --durations=10 \
  tests/test_cuda_runtime.py tests/test_cuda_gemm.py tests/test_cuda_random.py tests/test_cuda_index.py \
  tests/test_cuda_nn.py tests/test_cuda_autograd.py tests/test_elementwise.py tests/test_reductions.py \
  tests/test_linalg.py tests/test_indexing.py tests/test_manipulation.py tests/test_errors.py \
  tests/test_random.py -k "cuda" 2>&1 | tee "$OUT/tests.log" | tail -40
timeout 300 python3 benchmarks/bench_cuda.py 2>&1 | tee "$OUT/bench.log"
