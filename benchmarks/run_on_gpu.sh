#!/usr/bin/env bash
# One command for a lent GPU machine (the `device` tool's run; see benchmarks/README.md, "On a
# GPU machine"). Installs the wheels carried in .whl/ (cffi and pycparser: the GPU image has
# neither), optionally warms the kernel cache on every core (WARM=1), runs the CUDA tests (on
# xdist workers, a file per worker, where pytest-xdist is installed; else each file in its own
# process: a device fault is sticky for its process), re-runs what failed alone with
# CUDA_LAUNCH_BLOCKING=1 and under compute-sanitizer to name the kernel, then the benchmarks.
# Logs go to $OUT (at most 8 files come back from there).
#
#   run(command="bash benchmarks/run_on_gpu.sh", carry=[".whl"])            # tests + benchmarks
#   run(command="STEPS=tests bash benchmarks/run_on_gpu.sh", carry=[".whl"]) # or: bench, sanitize,
#   profile (profile_step.py's cProfile and Nsight Compute on the bandwidth rows' kernels)
#   STEPS=bench: bench_cuda (+ training steps), bench_speedup, mlp_speedup, bench_compile, bench_amp,
#   bench_fft, bench_linalg, bench_distributed, bench_ddp(_nccl) (BENCH=
#   "bench_cuda bench_speedup" runs only those); plots and markdown tables in $OUT/plots.tgz
set -uo pipefail
OUT=${OUT:-/tmp/stridex-gpu}
STEPS=${STEPS:-tests bench}
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
say() { echo "$*" | tee -a "$SUMMARY"; }
# DEADLINE=N: every step's time limit is cut so that the whole script ends within N seconds
# (a device call has a hard limit: what ran by then is logged, the rest is skipped)
cap() { local c=$1; if [[ ${DEADLINE:-0} -gt 0 ]]; then local l=$((DEADLINE - SECONDS - 5));
  (( l < c )) && c=$l; (( c < 1 )) && c=1; fi; echo "$c"; }

if ! python3 -c "import cffi, pycparser" 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site $(ls .whl/*.whl | grep -v /mpich-) || { say "FAILED: installing the carried wheels"; exit 1; }
  export PYTHONPATH=/tmp/site
  # the mpich wheel with --prefix (--target drops its lib/), and MPI4PY_LIBMPI naming its
  # libmpi: the image has Open MPI, which mpi4py loads otherwise (under mpich's mpiexec, N
  # worlds of one rank: seen on the H200 machine, 2026-11-28)
  if ls .whl/mpich-*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --prefix /tmp/mp \
      .whl/mpich-*.whl && export PATH="/tmp/mp/bin:$PATH" MPI4PY_LIBMPI=/tmp/mp/lib/libmpi.so.12
  fi
fi
# STRIDEX_CUDA_EMULATOR=1 and TESTS="tests/test_x.py ..." make a local dry run without a GPU
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 CI=1
export STRIDEX_CUDA_EMULATOR=${STRIDEX_CUDA_EMULATOR:-0}
export STRIDEX_CACHE_DIR=${STRIDEX_CACHE_DIR:-/tmp/stridex-cache}
if ! python3 -c "import cffi, pycparser" 2>/dev/null; then
  say "FAILED: python3 lacks cffi/pycparser: carry their cp312 wheels in .whl/ (benchmarks/README.md)"
  exit 1
fi
{ date -u; nvidia-smi; python3 -c "import cuda.bindings, numpy; print('cuda-bindings', \
cuda.bindings.__version__, 'numpy', numpy.__version__)"; } > "$OUT/env.txt" 2>&1
python3 -c "import tensor as T; from tensor.cuda import nvrtc; print(T.cuda.get_device_name(), \
T.cuda.get_device_capability(), 'NVRTC', nvrtc.version())" 2>&1 | tee -a "$SUMMARY" || exit 1

# WARM=1: build every kernel first, in parallel (57-60 s for 1277 on the H200 machine's 16
# cores: a check that all compile with the device's NVRTC). Without it each kernel compiles
# at its first launch (~0.06 s there), once across the test workers (the cache's file lock).
if [[ "${WARM:-0}" == 1 ]]; then
  if ! timeout "$(cap 200)" python3 -m tensor.cuda.warm -j "$(nproc)" > "$OUT/compile.log" 2>&1; then
    say "FAILED: precompile (see compile.log)"; tail -20 "$OUT/compile.log"
  fi
  tail -1 "$OUT/compile.log" | tee -a "$SUMMARY"
fi

if [[ " $STEPS " == *" tests "* ]]; then
  : > "$OUT/tests.log"; : > /tmp/failed.txt
  # test_cuda_compile (NVRTC builds for three archs) and test_cuda_emulator need no GPU: CI runs them
  FILES=${TESTS:-$(ls tests/test_*.py | grep -v -e test_cuda_compile.py -e test_cuda_emulator.py)}
  TO=(); python3 -c "import pytest_timeout" 2>/dev/null && TO=(--timeout 120)
  # the -rfE summary's lines, and -v's per-test lines of an xdist run (written as each test ends:
  # they name a failure even when the run is killed at its limit before the summary)
  failures() { grep -oE "^(FAILED|ERROR) [^ ]+|(FAILED|ERROR) tests/[^ ]+" "$OUT/tests.log" |
    sed -E 's/^(FAILED|ERROR) //' | sort -u; }
  if [[ ${WORKERS:-$(nproc)} -gt 1 ]] && python3 -c "import xdist" 2>/dev/null; then
    # one pytest over every file, a file per worker process (--dist loadfile): a device fault
    # is sticky for its process, so the failures are re-run one by one below
    W=${WORKERS:-$(( $(nproc) > 12 ? 12 : $(nproc) ))}
    timeout "$(cap 300)" python3 -m pytest -v -p no:cacheprovider -rfE -n "$W" --dist loadfile \
      "${TO[@]}" -k "cuda or nccl" $FILES > "$OUT/tests.log" 2>&1
    rc=$?
    say "tests ($W workers): $(grep -E '[0-9]+ (passed|failed)' "$OUT/tests.log" | tail -1) (rc $rc)"
    failures >> /tmp/failed.txt
  else
    for f in $FILES; do
      echo "=== $f" >> "$OUT/tests.log"
      timeout "$(cap 300)" python3 -m pytest -q -p no:cacheprovider -rfE --maxfail=10 \
        "${TO[@]}" -k "cuda or nccl" "$f" >> "$OUT/tests.log" 2>&1
      rc=$?
      [[ $rc == 5 ]] && continue                      # no CUDA test in this file
      [[ $rc != 0 ]] && failures | grep "^$f" >> /tmp/failed.txt
      say "$f: $(grep -E '[0-9]+ (passed|failed)' "$OUT/tests.log" | tail -1) (rc $rc)"
    done
  fi
  sort -u /tmp/failed.txt -o /tmp/failed.txt
  say "failed tests: $(wc -l < /tmp/failed.txt)"
  if [[ -s /tmp/failed.txt ]]; then
    # each alone, synchronous launches: a test failing only after another's fault passes here
    : > "$OUT/rerun.log"
    head -${RERUNS:-25} /tmp/failed.txt | while read -r t; do
      echo "=== CUDA_LAUNCH_BLOCKING=1 $t" >> "$OUT/rerun.log"
      CUDA_LAUNCH_BLOCKING=1 timeout "$(cap 60)" python3 -m pytest -q -p no:cacheprovider -x \
        "${TO[@]}" "$t" >> "$OUT/rerun.log" 2>&1
      echo "rerun alone: rc $? $t" | tee -a "$SUMMARY" >> "$OUT/rerun.log"
    done
    if command -v compute-sanitizer >/dev/null && [[ "${SANITIZE_FAILED:-1}" == 1 ]]; then
      head -3 /tmp/failed.txt | while read -r t; do
        echo "=== compute-sanitizer memcheck $t" >> "$OUT/rerun.log"
        timeout "$(cap 100)" compute-sanitizer --tool memcheck --print-limit 20 \
          python3 -m pytest -q -p no:cacheprovider -x "$t" >> "$OUT/rerun.log" 2>&1
      done
    fi
  fi
fi

if [[ " $STEPS " == *" sanitize "* ]] && command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    echo "=== compute-sanitizer $tool" >> "$OUT/sanitize.log"
    timeout "$(cap 280)" compute-sanitizer --tool $tool --print-limit 50 python3 -m pytest -q \
      -p no:cacheprovider -k cuda tests/test_cuda_runtime.py tests/test_cuda_index.py \
      tests/test_cuda_nn.py tests/test_cuda_gemm.py tests/test_cuda_sort.py >> "$OUT/sanitize.log" 2>&1
    say "compute-sanitizer $tool: $(grep -E 'ERROR SUMMARY|passed|failed' "$OUT/sanitize.log" | tail -2 | tr '\n' ' ')"
  done
fi

if [[ " $STEPS " == *" bench "* ]]; then
  # About 3-5 minutes on a 16-core H100 host; the timeouts bound it at 9. Plots and markdown
  # tables go into one archive, $OUT/plots.tgz (few files come back from $OUT), packed after
  # every step so a step that times out keeps what came before. SMOKE=1: tiny sizes (a dry run
  # on the emulator).
  PLOTS=$(mktemp -d)
  if [[ "${SMOKE:-0}" == 1 ]]; then
    SM=(--smoke) SPEEDUP=(--smoke) MLP=(--quick) COMPILE=(--sample 2 -j 2) AMP=(--smoke)
  else
    SM=() SPEEDUP=(--time-limit "${SPEEDUP_LIMIT:-120}") MLP=(--budget 0.5) COMPILE=(--sample 40 -j "$(nproc)")
    AMP=()
  fi
  : > "$OUT/bench.log"
  bench() {  # bench NAME SECONDS COMMAND...: runs it, logs to bench.log, packs the plots
    local name=$1 limit=$2 t0=$SECONDS rc; shift 2
    [[ " ${BENCH:-$name} " == *" $name "* ]] || return 0   # BENCH="bench_cuda ...": only those
    echo "=== $name" >> "$OUT/bench.log"
    limit=$(cap "$limit")
    (( limit < 15 )) && { say "$name: skipped (DEADLINE)"; return; }
    timeout "$limit" "$@" >> "$OUT/bench.log" 2>&1
    rc=$?
    tar -czf "$OUT/plots.tgz" -C "$PLOTS" .
    say "$name: rc $rc$([[ $rc == 124 ]] && echo " (timed out after $limit s)"), $((SECONDS - t0)) s"
  }
  bench bench_cuda 180 python3 benchmarks/bench_cuda.py "${SM[@]}" --md "$PLOTS/bench_cuda.md"
  # the issue's table (and the training steps) into the summary
  sed -n '/^device: /p; /^benchmark /,/^torch\/ours, cupy/p' "$OUT/bench.log" | tee -a "$SUMMARY"
  bench bench_speedup 200 python3 benchmarks/bench_speedup.py "${SPEEDUP[@]}" --out-dir "$PLOTS"
  grep -A16 "^speedup of cuda over" "$OUT/bench.log" | tee -a "$SUMMARY"
  bench mlp_speedup 60 python3 examples/mlp_speedup.py "${MLP[@]}" --out "$PLOTS/mlp_speedup.png"
  sed -n '/^3-layer MLP/,/^plot saved/p' "$OUT/bench.log" | tee -a "$SUMMARY"
  bench bench_compile 90 python3 benchmarks/bench_compile.py "${COMPILE[@]}"
  tail -6 "$OUT/bench.log" | tee -a "$SUMMARY"
  # mixed precision (fp32 / bf16 / fp16 steps against PyTorch's CUDA autocast)
  bench bench_amp 90 python3 benchmarks/bench_amp.py --device cuda "${AMP[@]}"
  sed -n '/^mixed precision on/,/^(.* s; peak/p' "$OUT/bench.log" | tee -a "$SUMMARY"
  # FFT against cuFFT
  bench bench_fft 60 python3 benchmarks/bench_fft.py --device cuda "${AMP[@]}"
  sed -n '/^FFT on/,/^fft2 /p' "$OUT/bench.log" | tee -a "$SUMMARY"
  # linear algebra against cuSOLVER
  bench bench_linalg 90 python3 benchmarks/bench_linalg.py --device cuda "${AMP[@]}"
  sed -n '/^linalg on/,/^eigh [0-9]* of/p' "$OUT/bench.log" | tee -a "$SUMMARY"
  # distributed (where the mpi4py and mpich wheels came along): all-reduce overhead against raw
  # mpi4py and DDP's overlap on the host's spare cores, then DDP on the GPU over NCCL
  if python3 -c "import mpi4py" 2>/dev/null; then
    bench bench_distributed 60 python3 benchmarks/bench_distributed.py "${SM[@]}"
    sed -n '/^all_reduce float32 on/,/^ *64 MiB/p' "$OUT/bench.log" | tee -a "$SUMMARY"
    bench bench_ddp 90 python3 benchmarks/bench_ddp.py "${SM[@]}"
    bench bench_ddp_nccl 90 python3 benchmarks/bench_ddp.py --device cuda "${SM[@]}"
    grep -E "^(DDP on|DDP [12] ranks| +bare)" "$OUT/bench.log" | tee -a "$SUMMARY"
  fi
  say "plots.tgz: $(tar -tzf "$OUT/plots.tgz" | grep -v '/$' | tr '\n' ' ')"
fi

if [[ " $STEPS " == *" profile "* ]]; then
  # the host's share of a small training step (cProfile), and Nsight Compute's speed-of-light
  # and memory sections for the kernels of bench_cuda's bandwidth rows, into profile.txt
  timeout "$(cap 60)" python3 benchmarks/profile_step.py --top 40 > "$OUT/profile.txt" 2>&1
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  if [[ -n "$NCU" ]]; then
    timeout "$(cap 120)" "$NCU" --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section LaunchStats --section Occupancy -k regex:"${NCU_KERNELS:-^(cast_f32_f32|sum_f32|exp_f32|add_f32|softmax_fwd_f32|cumsum_f32)$}" \
      -c "${NCU_COUNT:-14}" python3 -c "
import tensor as T, nn.functional as F
x = T.randn(8192, 8192, dtype='float32', device='cuda'); y = x.T.contiguous(); a = x + x
e = T.exp(x.T); s = x.sum(); s0 = x.sum(axis=0); s1 = x.sum(axis=1); c = T.cumsum(x.reshape(-1), 0)
F.softmax(T.randn(8192, 4096, dtype='float32', device='cuda'), -1); T.cuda.synchronize()
" >> "$OUT/profile.txt" 2>&1
    say "ncu: rc $? ($(grep -c '^  [a-z_0-9]*_f32' "$OUT/profile.txt") kernel reports in profile.txt)"
  else
    say "ncu: not found"
  fi
fi
