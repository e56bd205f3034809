#!/usr/bin/env python3
"""rocmenv smoke and benchmark suites: python3 run.py --plan PLAN.json --out RESULT.json

Exit status: 0 when no test failed, 1 when one did, 2 for bad usage or an invalid plan.
See README.md for the plan and result formats.
"""
import os
import sys

# The suites may live in a read-only image directory: write no bytecode beside them.
sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from rocmenv_smoke.runner import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], os.path.abspath(__file__)))
