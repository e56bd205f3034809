"""suite.yaml is what rocmenv reads: every name is one run.py knows, every level resolves, requires match."""
import pytest

from rocmenv_smoke import registry
import suite_plan

yaml = pytest.importorskip("yaml")
LEVELS = suite_plan.LEVELS


@pytest.fixture(scope="module")
def suite():
    return suite_plan.load_suite()


def test_top_level(suite):
    assert suite["schema_version"] == 1
    assert suite["levels"] == ["quick", "standard", "full"]
    assert set(suite) == {"schema_version", "levels", "tests", "benchmarks"}


def test_every_test_is_known_and_every_known_test_is_listed(suite):
    names = [t["name"] for t in suite["tests"]]
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(registry.SMOKE)
    benches = [b["name"] for b in suite["benchmarks"]]
    assert sorted(benches) == sorted(registry.BENCH)


def test_test_entries(suite):
    for t in suite["tests"]:
        assert set(t) == {"name", "level", "description", "requires", "params", "criteria"}, t["name"]
        assert t["level"] in LEVELS
        assert set(t["params"]) == {"cpu", "gpu"}, t["name"]
        own = LEVELS.index(t["level"])
        for kind in ("cpu", "gpu"):
            levels = set(t["params"][kind])
            assert levels <= set(LEVELS[own:]), "%s/%s: a level below the test's own: %s" % (t["name"], kind, levels)
            assert t["level"] in levels, "%s/%s: no params at its own level" % (t["name"], kind)
        assert set(t["requires"]) >= set(registry.SMOKE[t["name"]].requires), t["name"]
        assert isinstance(t["criteria"], dict)


def test_bench_entries(suite):
    for b in suite["benchmarks"]:
        assert set(b) == {"name", "description", "requires", "params", "criteria"}, b["name"]
        assert set(b["params"]) == {"cpu", "gpu"}
        assert set(b["requires"]) >= set(registry.BENCH[b["name"]].requires), b["name"]
        for kind in ("cpu", "gpu"):
            p = b["params"][kind]
            assert {"warmup", "iters"} <= set(p), (b["name"], kind)
            if b["name"] in ("resnet50", "vit_b_16", "sd15_unet", "onnx", "tune"):
                assert "batch" in p, (b["name"], kind)


def test_levels_inherit_upwards(suite):
    gemm = [t for t in suite["tests"] if t["name"] == "gemm"][0]
    assert suite_plan.params_for(gemm, "gpu", "full") == gemm["params"]["gpu"]["standard"]
    mem = [t for t in suite["tests"] if t["name"] == "memory"][0]
    assert suite_plan.params_for(mem, "gpu", "full") == mem["params"]["gpu"]["quick"]
    models = [t for t in suite["tests"] if t["name"] == "models"][0]
    assert suite_plan.params_for(models, "cpu", "quick") is None
    for level in LEVELS:
        for vendor in ("cpu", "amd"):
            suite_plan.smoke_plan(suite, level, vendor)  # every level resolves for every kind


def test_levels_nest(suite):
    names = {}
    for level in LEVELS:
        names[level] = set(t["name"] for t in suite_plan.smoke_plan(suite, level, "cpu")["tests"])
    assert names["quick"] < names["standard"] < names["full"]
    assert names["full"] == set(registry.SMOKE)


def test_gpu_defaults_follow_the_seed_method(suite):
    b = dict((x["name"], x) for x in suite["benchmarks"])
    for name, batch in (("resnet50", 64), ("vit_b_16", 32), ("sd15_unet", 8)):
        assert b[name]["params"]["gpu"]["batch"] == batch
    for name in ("resnet50", "vit_b_16"):
        assert (b[name]["params"]["gpu"]["warmup"], b[name]["params"]["gpu"]["iters"]) == (10, 100)
    gemm = [t for t in suite["tests"] if t["name"] == "gemm"][0]
    assert gemm["params"]["gpu"]["quick"]["size"] == 8192
