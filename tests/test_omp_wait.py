"""OpenMP's idle threads wait passively unless the user says otherwise (tensor/cpu/build.py):
spinning workers made a 1M-element add 240x slower on a busy 2-core machine."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODE = ("import os, tensor as T; T.ones(4).sum(); "
        "print(os.environ.get('OMP_WAIT_POLICY'))")


def _child(env_extra: dict) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(env_extra, STRIDEX_CUDA_EMULATOR="0", PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.strip()


def test_passive_by_default_and_the_users_setting_wins():
    assert _child({}) == "PASSIVE"
    assert _child({"OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE"
