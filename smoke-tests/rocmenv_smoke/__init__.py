"""rocmenv's smoke and benchmark suites: run.py reads a plan, runs the tests it names, writes one result document.

Only the standard library and torch are imported up front; a test's other modules (torchvision,
onnxruntime, diffusers) are imported inside that test.
"""
