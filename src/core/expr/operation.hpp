// One element-wise operation compiled without its text (numfuse.jit's verdict, src/python/
// jit_verdict.cpp, compiles one per new operation type; plan_cache.cpp defines it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "expr/expr.hpp"

namespace numfuse::expr {

// The plan compile_plan gives for the text `text` that applies one operator or element-wise
// function to the inputs, in their order ("(v0 + v1)", "(-v0)", "(v0 < v1)", "where(v0, v1, v2)"),
// made without reading the text: the AST its parse gives is built here from `form` and `op`
// (the operator, "+", "<", "~", or the function's name), then lowered (the same type rules)
// and generated as compile_plan does; `text` is the plan's Plan::text, never parsed. Null
// for an operator or function the form does not have (a reduction among them: its
// keywords are the parser's): the caller compiles the text.
enum class OperationForm : std::uint8_t { unary, binary, compare, call };
std::shared_ptr<const Plan> compile_operation(OperationForm form, const std::string& op,
                                              const std::string& text,
                                              const std::vector<InputSpec>& inputs);

}  // namespace numfuse::expr
