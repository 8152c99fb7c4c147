#!/usr/bin/env python3
"""Run a .tflite model through the tflite-micro Python runtime with the GeluApprox op library loaded.

    run_tflm.py --op-lib libbertl14_gelu_tflm.so --model gelu.tflite --input x.npy --output y.npy

Exit 0 and y.npy on success; exit 1 with the runtime's error (TFLM prints its own diagnostics to stdout)
otherwise. Runs under the Python that has the pinned tflite-micro build (tflm_host.py python).
"""
import argparse
import ctypes
import sys

import numpy as np


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--op-lib", help="shared library defining bertl14_register_gelu_approx")
    p.add_argument("--registerer", default="bertl14_register_gelu_approx")
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    a = p.parse_args()
    registerers = []
    if a.op_lib:
        # RTLD_GLOBAL: the runtime finds the registerer with dlsym(RTLD_DEFAULT, name)
        ctypes.CDLL(a.op_lib, mode=ctypes.RTLD_GLOBAL)
        registerers = [a.registerer]
    from tflite_micro import runtime

    x = np.load(a.input)
    try:
        # arena: input + output tensors + the op's table + interpreter bookkeeping
        interpreter = runtime.Interpreter.from_file(a.model, custom_op_registerers=registerers,
                                                    arena_size=16384 + 2 * x.nbytes + 64)
        interpreter.set_input(x, 0)
        interpreter.invoke()
    except (RuntimeError, ValueError) as exc:
        sys.stdout.flush()
        print(f"tflite-micro error: {exc}", file=sys.stderr)
        return 1
    np.save(a.output, interpreter.get_output(0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
