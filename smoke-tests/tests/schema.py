"""A hand-written checker for the result document's shape (README.md: "The result"); used by the tests."""
NUM = (int, float)
STR_OR_NULL = (str, type(None))


def _type(errors, where, value, types, nullable=False):
    if nullable and value is None:
        return True
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        errors.append("%s: expected %s, got bool" % (where, types))
        return False
    if not isinstance(value, types):
        errors.append("%s: expected %s, got %r" % (where, types, value))
        return False
    return True


def _keys(errors, where, obj, keys):
    if not isinstance(obj, dict):
        errors.append("%s: expected an object" % where)
        return False
    missing = [k for k in keys if k not in obj]
    extra = [k for k in obj if k not in keys]
    if missing:
        errors.append("%s: missing %s" % (where, missing))
    if extra:
        errors.append("%s: unexpected %s" % (where, extra))
    return not missing


DOC_KEYS = ("schema_version", "kind", "level", "vendor", "device", "versions", "env", "tests", "started_at",
            "finished_at")
DEVICE_KEYS = ("kind", "name", "gfx", "compute_capability", "count", "devices")
DEVICE_ENTRY_KEYS = ("index", "name", "gfx", "compute_capability", "total_memory_bytes", "pci_domain_id",
                     "pci_bus_id", "pci_device_id", "uuid")
VERSION_KEYS = ("python", "torch", "hip", "cuda", "miopen", "cudnn", "onnxruntime", "torchvision")
TEST_KEYS = ("name", "status", "reason", "fix", "metrics", "params", "duration_s", "device")
METRIC_KEYS = ("name", "value", "unit")
METRIC_OPTIONAL = ("better",)
CHECKED_KEYS = ("products", "bytes")


def check_entry(errors, where, t):
    if "checked" in t:
        c = t["checked"]
        if _type(errors, where + ".checked", c, dict) and _keys(errors, where + ".checked", c, CHECKED_KEYS):
            for k in CHECKED_KEYS:
                if _type(errors, "%s.checked.%s" % (where, k), c[k], int) and c[k] < 0:
                    errors.append("%s.checked.%s: %r is negative" % (where, k, c[k]))
        t = dict((k, v) for k, v in t.items() if k != "checked")
    if not _keys(errors, where, t, TEST_KEYS):
        return
    _type(errors, where + ".name", t["name"], str)
    if t["status"] not in ("pass", "fail", "skip"):
        errors.append("%s.status: %r" % (where, t["status"]))
    _type(errors, where + ".reason", t["reason"], str, nullable=True)
    _type(errors, where + ".fix", t["fix"], str, nullable=True)
    if t["status"] in ("fail", "skip") and not t["reason"]:
        errors.append("%s: a %s needs a reason" % (where, t["status"]))
    _type(errors, where + ".params", t["params"], dict)
    _type(errors, where + ".duration_s", t["duration_s"], NUM)
    _type(errors, where + ".device", t["device"], int, nullable=True)
    if _type(errors, where + ".metrics", t["metrics"], list):
        for j, m in enumerate(t["metrics"]):
            w = "%s.metrics[%d]" % (where, j)
            if "better" in m and m["better"] not in ("higher", "lower"):
                errors.append("%s.better: %r" % (w, m["better"]))
            if m.get("unit") == "ms" and m.get("better") != "lower":
                errors.append("%s: a time (ms) must be better lower" % w)
            if _keys(errors, w, dict((k, v) for k, v in m.items() if k not in METRIC_OPTIONAL), METRIC_KEYS):
                _type(errors, w + ".name", m["name"], str)
                _type(errors, w + ".value", m["value"], NUM, nullable=True)
                _type(errors, w + ".unit", m["unit"], str)


def check_document(doc):
    """Every problem with the document's shape, as a list of strings (empty when it matches)."""
    errors = []
    if not _keys(errors, "document", doc, DOC_KEYS):
        return errors
    if doc["schema_version"] != 2:
        errors.append("schema_version: %r" % doc["schema_version"])
    if doc["kind"] not in ("smoke", "bench"):
        errors.append("kind: %r" % doc["kind"])
    if doc["level"] not in ("quick", "standard", "full"):
        errors.append("level: %r" % doc["level"])
    if doc["vendor"] not in ("amd", "nvidia", "cpu"):
        errors.append("vendor: %r" % doc["vendor"])
    d = doc["device"]
    if _keys(errors, "device", d, DEVICE_KEYS):
        if d["kind"] not in ("cpu", "rocm", "cuda"):
            errors.append("device.kind: %r" % d["kind"])
        _type(errors, "device.name", d["name"], str, nullable=True)
        _type(errors, "device.gfx", d["gfx"], str, nullable=True)
        _type(errors, "device.compute_capability", d["compute_capability"], str, nullable=True)
        _type(errors, "device.count", d["count"], int)
        if _type(errors, "device.devices", d["devices"], list):
            if len(d["devices"]) != d["count"]:
                errors.append("device.count %r != len(devices) %d" % (d["count"], len(d["devices"])))
            for i, e in enumerate(d["devices"]):
                w = "device.devices[%d]" % i
                if _keys(errors, w, e, DEVICE_ENTRY_KEYS):
                    _type(errors, w + ".index", e["index"], int)
                    _type(errors, w + ".name", e["name"], str)
                    _type(errors, w + ".gfx", e["gfx"], str, nullable=True)
                    _type(errors, w + ".compute_capability", e["compute_capability"], str, nullable=True)
                    _type(errors, w + ".total_memory_bytes", e["total_memory_bytes"], int, nullable=True)
                    for k in ("pci_domain_id", "pci_bus_id", "pci_device_id"):
                        _type(errors, w + "." + k, e[k], int, nullable=True)
                    _type(errors, w + ".uuid", e["uuid"], str, nullable=True)
    v = doc["versions"]
    if _keys(errors, "versions", v, VERSION_KEYS):
        for k in VERSION_KEYS:
            _type(errors, "versions." + k, v[k], str, nullable=(k != "python"))
    if _type(errors, "env", doc["env"], dict):
        for k, val in doc["env"].items():
            _type(errors, "env." + k, val, str, nullable=True)
    for k in ("started_at", "finished_at"):
        if _type(errors, k, doc[k], str) and not (len(doc[k]) >= 20 and doc[k].endswith("Z") and "T" in doc[k]):
            errors.append("%s: not an ISO 8601 UTC time: %r" % (k, doc[k]))
    if _type(errors, "tests", doc["tests"], list):
        for i, t in enumerate(doc["tests"]):
            check_entry(errors, "tests[%d]" % i, t)
    return errors
