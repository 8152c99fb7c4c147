"""GeluApprox on the host: the TFLM interpreter built from the pinned tflite-micro sources (tflm_host.build_runner)
runs .tflite models written by make_model.py; its values, int8 table and the errors TFLM reports."""
import math
import subprocess

import numpy as np
import pytest

SPEC_X = np.array([[-2.0, -1.0, 0.0, 1.0, 2.0]], np.float32)
SPEC_Y = np.array([-0.0455, -0.1587, 0.0, 0.8413, 1.9545])       # the specified outputs (4 digits)
_erf = np.vectorize(math.erf)


def gelu_erf(x):
    return 0.5 * x * (1.0 + _erf(np.asarray(x, np.float64) / math.sqrt(2.0)))


def gelu_tanh(x):
    x = np.asarray(x, np.float64)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def test_model_writer_round_trip(make_model, schema):
    s = schema
    model = s.ModelT.InitFromObj(s.Model.GetRootAsModel(make_model("int8", (2, 3)), 0))
    code = model.operatorCodes[0]
    assert code.builtinCode == s.BuiltinOperator.CUSTOM and code.customCode == b"GeluApprox"
    graph = model.subgraphs[0]
    assert [t.type for t in graph.tensors] == [s.TensorType.INT8] * 2
    assert list(graph.tensors[0].shape) == [2, 3] and graph.operators[0].inputs.tolist() == [0]
    assert graph.tensors[1].quantization.scale[0] == pytest.approx(8 / 127)


def test_specified_values(run_model, make_model):
    rc, y, log = run_model(make_model("float32", SPEC_X.shape), SPEC_X)
    assert rc == 0, log
    assert y.dtype == np.float32 and y.shape == SPEC_X.shape
    np.testing.assert_allclose(y[0], SPEC_Y, atol=1e-3)
    # the tanh formula (the op's exp2 cubic moves it by < 3e-5, docs/tflm.md)
    np.testing.assert_allclose(y[0], gelu_tanh(SPEC_X[0]), atol=3e-5)
    assert abs(y[0, 1] - (-0.1588)) < 1e-4 and abs(y[0, 4] - 1.9546) < 1e-4


def test_float_error_vs_erf_gelu(run_model, make_model):
    x = np.linspace(-8, 8, 10000, dtype=np.float32).reshape(1, -1)
    rc, y, log = run_model(make_model("float32", x.shape), x)
    assert rc == 0, log
    err = np.abs(y[0] - gelu_erf(x[0]))
    assert err.max() < 1e-3, f"max |GeluApprox - erf GELU| = {err.max():.2e} at x = {x[0, err.argmax()]}"
    assert np.abs(y[0] - gelu_tanh(x[0])).max() < 3e-5


@pytest.mark.parametrize("in_scale,in_zp,out_scale,out_zp", [
    (8 / 127, 0, 8 / 127, 0),                 # symmetric [-8, 8]
    (6 / 255, -43, (4 + 0.17) / 255, -87),    # asymmetric: input [-3, 3], output [-0.17, 4]
])
def test_int8_within_one_lsb(run_model, make_model, in_scale, in_zp, out_scale, out_zp):
    q = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    model = make_model("int8", q.shape, in_scale=in_scale, in_zero_point=in_zp,
                       out_scale=out_scale, out_zero_point=out_zp)
    rc, y, log = run_model(model, q)
    assert rc == 0, log
    x = in_scale * (q[0].astype(np.float64) - in_zp)
    exact = np.clip(np.round(gelu_erf(x) / out_scale) + out_zp, -128, 127)
    diff = np.abs(y[0].astype(np.int32) - exact)
    assert diff.max() <= 1, f"{int(diff.max())} LSB at code {int(q[0, diff.argmax()])}"
    assert y.dtype == np.int8


def test_unknown_op_name_is_tflm_error(run_model, make_model):
    rc, y, log = run_model(make_model("float32", (1, 5), op_name="GeluAprox"), SPEC_X)
    assert rc == 1, log               # a clean error, not a signal
    assert "Failed to get registration" in log and "error: AllocateTensors() failed" in log


def test_mismatched_shape_is_prepare_error(run_model, make_model, schema):
    s = schema
    model = s.ModelT.InitFromObj(s.Model.GetRootAsModel(make_model("float32", (1, 5)), 0))
    model.subgraphs[0].tensors[1].shape = [1, 4]
    import flatbuffers
    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    rc, _, log = run_model(bytes(b.Output()), SPEC_X)
    assert rc == 1 and "GeluApprox: output shape != input shape" in log, log


def test_unregistered_op_is_tflm_error(run_model, make_model):
    rc, _, log = run_model(make_model("float32", (1, 5)), SPEC_X, register=False)
    assert rc == 1 and "Failed to get registration" in log, log


@pytest.mark.parametrize("dtype,x", [("int16", np.zeros((1, 5), np.int16)),
                                      ("float16", np.zeros((1, 5), np.float16))])
def test_wrong_type_is_prepare_error(run_model, make_model, dtype, x):
    rc, _, log = run_model(make_model(dtype, (1, 5)), x)
    assert rc == 1, log
    assert f"GeluApprox: {dtype} input not supported" in log and "failed to prepare" in log


def test_mismatched_output_type_is_prepare_error(run_model, make_model):
    rc, _, log = run_model(make_model("float32", (1, 5), out_dtype="int8"), SPEC_X)
    assert rc == 1 and "GeluApprox: output type int8 != input type float32" in log, log


def test_damaged_model_is_rejected(run_model, make_model):
    model = make_model("float32", (1, 5))
    for bad in (model[: len(model) // 2], model[:4] + b"XXXX" + model[8:]):   # cut short; wrong identifier
        rc, y, log = run_model(bad, SPEC_X)
        assert rc == 1 and y is None and "error: not a valid .tflite flatbuffer" in log, log


def test_input_of_the_wrong_size_is_refused(run_model, make_model):
    rc, y, log = run_model(make_model("float32", (1, 5)), SPEC_X[:, :4])
    assert rc == 2 and "the input file has 16 bytes, the model's input tensor 20" in log, log


def test_python_runtime_op_library_exports_only_the_registerer(tflm_sources):
    """The op library for the tflite-micro PyPI runtime builds against the pinned sources, links with no
    undefined symbol, and exports only the registerer that runtime looks up by name."""
    import tflm_host
    lib = tflm_host.build_op_library(tflm_sources)
    nm = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True)
    exported = {line.split()[-1] for line in nm.stdout.splitlines() if line.split()[1:2] == ["T"]}
    assert exported == {tflm_host.REGISTERER}, exported
