#!/usr/bin/env bash
# The Python array API standard's official conformance suite (data-apis/array-api-tests, with
# its array-api submodule) against the `tensor` namespace, version 2024.12: prints pytest's
# count. The suite is cloned into a cache directory (never into this repository).
#
#   benchmarks/array_api_conformance.sh [SUITE_DIR] [extra pytest arguments...]
#
# PYTHON picks the interpreter (default: .venv/bin/python, where `pip install -e .` put us);
# MAX_EXAMPLES the hypothesis examples per test (default 20, as the README's count).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-$root/.venv/bin/python}
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/stridex/array-api-tests}
[ $# -gt 0 ] && shift
if [ ! -d "$dir/array_api_tests" ]; then
  git clone --recursive https://github.com/data-apis/array-api-tests "$dir"
fi
"$py" -m pip install -q pytest-json-report "hypothesis>=6.151" "ndindex>=1.8"
export ARRAY_API_TESTS_MODULE=tensor ARRAY_API_TESTS_VERSION=2024.12
xfails=()
[ -f "$root/benchmarks/array_api_xfails.txt" ] && xfails=(--xfails-file "$root/benchmarks/array_api_xfails.txt")
cd "$dir"
set +e
"$py" -m pytest array_api_tests -q -p no:cacheprovider --max-examples="${MAX_EXAMPLES:-20}" \
  --continue-on-collection-errors --disable-warnings -rN "${xfails[@]}" "$@" | tail -n 3
exit "${PIPESTATUS[0]}"
