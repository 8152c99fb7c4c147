"""The QEMU test image is built with the number types of the converted folder it runs (qemu_target): weights,
word embeddings and pruned heads as the folder's manifest records them, so the image computes what the reference computes."""
from __future__ import annotations

import json

from bertl14_tools.device import qemu_target as Q


def _folder(tmp_path, **options):
    (tmp_path / "manifest.json").write_text(json.dumps({"options": options}), encoding="utf-8")
    return tmp_path


def test_the_image_takes_the_folders_number_types(tmp_path):
    f = _folder(tmp_path, quantize="int8", embedding="int4")
    assert "-DCONFIG_BERTL14_WEIGHTS_INT8=y" in Q.weight_options(f)
    assert Q.embedding_options(f) == ["-DCONFIG_BERTL14_QUANTIZE_EMBEDDING_INT4=y",
                                      "-DCONFIG_BERTL14_QUANTIZE_EMBEDDING_INT8=n", "-DCONFIG_BERTL14_PRUNE_HEADS=0"]
    assert Q.embedding_options(_folder(tmp_path, prune_heads=1))[2] == "-DCONFIG_BERTL14_PRUNE_HEADS=1"
    f = _folder(tmp_path, quantize="int16", embedding="int8")
    assert "-DCONFIG_BERTL14_WEIGHTS_INT16=y" in Q.weight_options(f)
    assert Q.embedding_options(f)[1] == "-DCONFIG_BERTL14_QUANTIZE_EMBEDDING_INT8=y"
    assert Q.embedding_options(tmp_path / "no-such-folder")[1] == "-DCONFIG_BERTL14_QUANTIZE_EMBEDDING_INT8=y"
