// A stable text form of a graph, for golden dumps, pass debugging and `osprey inspect`.
//
//   graph 'g': 3 nodes, 2 initializers (15 elements)
//     input x: float32[N,4]
//     initializer W: float32[4,3]
//     MatMul 'mm': x, W -> xw
//     Gemm 'fc': a, b, "" -> y  alpha=1 transB=1
//     If 'branch': cond -> out  else_branch=<graph> then_branch=<graph>
//       graph 'then': ...           (subgraphs follow their node, indented)
//     output y: float32[N,3]
//
// One line per node: op (with domain), name, inputs -> outputs ("" = omitted), then the
// attributes in name order (lists longer than 8 are abbreviated, tensors show dtype and shape).
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

namespace osprey::passes {

std::string dump_graph(const ir::Graph& g);

// Node count per op type ("Conv" -> 53; domain-qualified for other domains), main graph only.
std::map<std::string, int> op_counts(const ir::Graph& g);

}  // namespace osprey::passes
