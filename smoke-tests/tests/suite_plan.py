"""suite.yaml -> plans, by the rule rocmenv follows (README.md: "suite.yaml"); used by the tests only."""
import os

LEVELS = ("quick", "standard", "full")
SUITE_YAML = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "suite.yaml")


def load_suite():
    import yaml
    with open(SUITE_YAML) as f:
        return yaml.safe_load(f)


def device_kind(vendor):
    return "cpu" if vendor == "cpu" else "gpu"


def params_for(test, kind, level):
    """The params a smoke test runs with at `level` on device kind `kind`, or None when the level is below its own."""
    own, want = LEVELS.index(test["level"]), LEVELS.index(level)
    if want < own:
        return None
    per_level = test["params"][kind]
    for lvl in reversed(LEVELS[own:want + 1]):
        if lvl in per_level:
            return per_level[lvl]
    raise KeyError("%s: no params for %s at %s or below (down to %s)" % (test["name"], kind, level, test["level"]))


def smoke_plan(suite, level, vendor):
    tests = []
    for t in suite["tests"]:
        params = params_for(t, device_kind(vendor), level)
        if params is not None:
            tests.append({"name": t["name"], "params": params, "criteria": t.get("criteria") or {},
                          "requires": t.get("requires") or []})
    return {"schema_version": 1, "kind": "smoke", "level": level, "vendor": vendor, "tests": tests}


def bench_plan(suite, name, vendor, level="standard"):
    b = [x for x in suite["benchmarks"] if x["name"] == name][0]
    return {"schema_version": 1, "kind": "bench", "level": level, "vendor": vendor,
            "tests": [{"name": name, "params": b["params"][device_kind(vendor)], "criteria": b.get("criteria") or {},
                       "requires": b.get("requires") or []}]}
