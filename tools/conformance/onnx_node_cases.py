# Writes the ONNX node conformance cases of the installed onnx package (its generators under
# onnx/backend/test/case/node; the wheel ships no data) in the libonnx-testdata layout:
# DIR/test_NAME/model.onnx and test_data_set_0/{input,output}_N.pb. Debian's libonnx-testdata
# stops at opset 17; these cases cover the opsets above it.
#
#   .venv/bin/python tools/conformance/onnx_node_cases.py --out DIR --min-opset 18 --max-opset 22
#
# A case is kept when its default-domain opset is in [min, max]. A case made at a later opset
# is kept too, re-stamped with --max-opset, when every op it uses exists at --max-opset and
# onnx's full checker (types and shapes against the schemas of --max-opset) accepts it: most
# later versions of an op only add element types, so the data holds at the older opset. A
# case that fails there is read as a real difference only after checking the op's changelog.
import argparse
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
import onnx.backend.test.case.node as node_cases
from onnx import defs, numpy_helper


def default_opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


def restamp(model, opset):
    """The model at `opset` when every node (subgraphs included) is an ONNX op that exists
    there and the full checker accepts it; else None."""
    def nodes(graph):
        for n in graph.node:
            yield n
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    yield from nodes(a.g)
                for g in a.graphs:
                    yield from nodes(g)
    for n in nodes(model.graph):
        if n.domain not in ("", "ai.onnx") or not defs.has(n.op_type, opset, ""):
            return None
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = opset
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception:  # noqa: BLE001 - any checker or inference error rules the case out
        return None
    return m


def proto_of(value, value_info):
    t = value_info.type
    if t.HasField("sequence_type"):
        return numpy_helper.from_list(value, value_info.name)
    if t.HasField("optional_type"):
        return numpy_helper.from_optional(value, value_info.name)
    if isinstance(value, onnx.TensorProto):
        return value
    return numpy_helper.from_array(np.asarray(value), value_info.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--min-opset", type=int, default=18)
    ap.add_argument("--max-opset", type=int, default=22)
    args = ap.parse_args()
    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    kept = restamped = 0
    with np.errstate(all="ignore"), warnings.catch_warnings():  # the generators divide by zero on purpose
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases()
    for case in cases:
        model = case.model
        v = default_opset(model)
        if v is None or v < args.min_opset:
            continue
        if v > args.max_opset:
            model = restamp(model, args.max_opset)
            if model is None:
                continue
            restamped += 1
        d = os.path.join(args.out, case.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(model.SerializeToString())
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{i}")
            os.makedirs(ds)
            for kind, values, infos in (("input", inputs, model.graph.input), ("output", outputs, model.graph.output)):
                for j, value in enumerate(values):
                    with open(os.path.join(ds, f"{kind}_{j}.pb"), "wb") as f:
                        f.write(proto_of(value, infos[j]).SerializeToString())
        kept += 1
    print(f"onnx_node_cases: {kept} cases of onnx {onnx.__version__} at opsets {args.min_opset}-{args.max_opset} "
          f"({restamped} re-stamped from later opsets) in {args.out}")
    return 0 if kept else 1


if __name__ == "__main__":
    sys.exit(main())
