"""The plan rocmenv writes for run.py: parsed and validated before anything touches the GPU."""
import json

SCHEMA_VERSION = 1
KINDS = ("smoke", "bench")
LEVELS = ("quick", "standard", "full")
VENDORS = ("amd", "nvidia", "cpu")
PLAN_KEYS = ("schema_version", "kind", "level", "vendor", "tests")
TEST_KEYS = ("name", "params", "criteria", "requires")


class PlanError(Exception):
    """The plan cannot be used; the message names what is wrong."""


class TestSpec(object):
    """One test the plan asks for."""

    def __init__(self, name, params, criteria, requires):
        self.name = name
        self.params = params
        self.criteria = criteria
        self.requires = requires


class Plan(object):
    def __init__(self, kind, level, vendor, tests):
        self.kind = kind
        self.level = level
        self.vendor = vendor
        self.tests = tests


def _unknown(obj, allowed, where):
    extra = sorted(k for k in obj if k not in allowed)
    if extra:
        raise PlanError("%s: unknown key%s %s" % (where, "s" if len(extra) > 1 else "", ", ".join(map(repr, extra))))


def parse_plan(text):
    """PLAN.json text -> Plan; raises PlanError with one line naming the first problem."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise PlanError("not JSON: %s" % e)
    if not isinstance(doc, dict):
        raise PlanError("the plan must be a JSON object")
    _unknown(doc, PLAN_KEYS, "plan")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise PlanError("schema_version must be %d, got %r" % (SCHEMA_VERSION, doc.get("schema_version")))
    for key, allowed in (("kind", KINDS), ("level", LEVELS), ("vendor", VENDORS)):
        if doc.get(key) not in allowed:
            raise PlanError("%s must be one of %s, got %r" % (key, "|".join(allowed), doc.get(key)))
    tests = doc.get("tests")
    if not isinstance(tests, list) or not tests:
        raise PlanError("tests must be a non-empty list")
    specs = []
    seen = set()
    for i, t in enumerate(tests):
        where = "tests[%d]" % i
        if not isinstance(t, dict):
            raise PlanError("%s must be an object" % where)
        _unknown(t, TEST_KEYS, where)
        name = t.get("name")
        if not isinstance(name, str) or not name:
            raise PlanError("%s.name must be a non-empty string" % where)
        if name in seen:
            raise PlanError("%s: test %r is listed twice" % (where, name))
        seen.add(name)
        for key in ("params", "criteria"):
            if not isinstance(t.get(key, {}), dict):
                raise PlanError("%s.%s must be an object" % (where, key))
        requires = t.get("requires", [])
        if not isinstance(requires, list) or not all(isinstance(r, str) and r for r in requires):
            raise PlanError("%s.requires must be a list of module names" % where)
        specs.append(TestSpec(name, dict(t.get("params", {})), dict(t.get("criteria", {})), list(requires)))
    return Plan(doc["kind"], doc["level"], doc["vendor"], specs)


def load_plan(path):
    try:
        with open(path) as f:
            text = f.read()
    except (IOError, OSError) as e:
        raise PlanError("cannot read %s: %s" % (path, e.strerror or e))
    return parse_plan(text)
