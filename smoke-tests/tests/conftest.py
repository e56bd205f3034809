"""Shared helpers: run run.py on a plan, resolve suite.yaml into plans, check a result document's shape."""
import json
import os
import shutil
import subprocess
import sys

import pytest

# rocmenv embeds smoke-tests/ whole (and copies it into images): write no bytecode into it.
sys.dont_write_bytecode = True
SMOKE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_PY = os.path.join(SMOKE_DIR, "run.py")
if SMOKE_DIR not in sys.path:
    sys.path.insert(0, SMOKE_DIR)


def pytest_sessionfinish(session, exitstatus):
    # This file's own bytecode was written before the flag above took effect; take it away again.
    for root, dirs, _ in os.walk(SMOKE_DIR):
        for d in dirs:
            if d in ("__pycache__", ".pytest_cache"):
                shutil.rmtree(os.path.join(root, d), ignore_errors=True)


class Run(object):
    def __init__(self, rc, doc, stdout, stderr, out_path):
        self.rc = rc
        self.doc = doc
        self.stdout = stdout
        self.stderr = stderr
        self.out_path = out_path

    def test(self, name):
        found = [t for t in self.doc["tests"] if t["name"] == name]
        assert len(found) == 1, "%s: %r" % (name, [t["name"] for t in self.doc["tests"]])
        return found[0]

    def progress(self):
        prefix = "@rocmenv-test "
        return [json.loads(line[len(prefix):]) for line in self.stdout.splitlines() if line.startswith(prefix)]


def run_py(tmp_path, plan, env=None, args=None, timeout=600):
    """Writes the plan (a dict, or raw text), runs run.py on it, returns a Run (doc None when none was written)."""
    plan_path = os.path.join(str(tmp_path), "plan.json")
    out_path = os.path.join(str(tmp_path), "result.json")
    with open(plan_path, "w") as f:
        f.write(plan if isinstance(plan, str) else json.dumps(plan))
    full_env = dict(os.environ)
    full_env.setdefault("OMP_NUM_THREADS", "2")
    full_env["PYTHONDONTWRITEBYTECODE"] = "1"
    full_env.update(env or {})
    cmd = [sys.executable, RUN_PY] + (args if args is not None else ["--plan", plan_path, "--out", out_path])
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=full_env, timeout=timeout)
    doc = None
    if os.path.exists(out_path):
        with open(out_path) as f:
            doc = json.load(f)
    return Run(proc.returncode, doc, proc.stdout, proc.stderr, out_path)


@pytest.fixture
def run(tmp_path):
    def _run(plan, **kw):
        return run_py(tmp_path, plan, **kw)
    return _run


def plan(tests, kind="smoke", level="quick", vendor="cpu"):
    return {"schema_version": 1, "kind": kind, "level": level, "vendor": vendor, "tests": tests}
