"""A field report rocmenv grew from invents PyTorch/ROCm APIs; none may appear anywhere in the suites (code, manifest, docs)."""
import os

from conftest import SMOKE_DIR

# Spelled in pieces so this file does not match itself.
INVENTED = (
    "torch.backends." + "roc",
    "torch.utils." + "roc",
    "ROCm" + "DataLoader",
    "HCC_" + "OPT_LEVEL",
)


def offenders(root):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", ".pytest_cache")]
        for name in filenames:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            for api in INVENTED:
                if api in text:
                    found.append("%s: %s" % (os.path.relpath(path, root), api))
    return found


def test_no_invented_api_in_the_tree():
    assert offenders(SMOKE_DIR) == []


def test_the_grep_finds_one(tmp_path):
    (tmp_path / "bad.py").write_text("import torch\ntorch.backends." + "roc.enable_auto_tuning(True)\n")
    (tmp_path / "Dockerfile").write_text("ENV HCC_" + "OPT_LEVEL=3\n")
    assert sorted(offenders(str(tmp_path))) == ["Dockerfile: HCC_" + "OPT_LEVEL", "bad.py: torch.backends." + "roc"]


def test_nothing_points_outside_the_repository():
    outside = "/work" + "/shared"
    hits = []
    for dirpath, dirnames, filenames in os.walk(SMOKE_DIR):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", ".pytest_cache")]
        for name in filenames:
            with open(os.path.join(dirpath, name), "rb") as f:
                if outside.encode() in f.read():
                    hits.append(name)
    assert hits == []
