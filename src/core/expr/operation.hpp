// Plans compiled from an AST their caller built instead of the text's parse: one
// element-wise operation (numfuse.jit's verdict, src/python/jit_verdict.cpp, compiles one
// per new operation type) and a whole formula (numfuse.jit's fused segments, built from
// the trace: src/python/jit_formula.cpp). The compiler is the text's own (detail::Compiler
// given the AST): the same lowering, type rules and code generation; only the lexer and
// parser are skipped. operation.cpp defines the operation's; plan_cache.cpp the formula's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "expr/expr.hpp"
#include "expr/parser.hpp"

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

// cached_plan(text, inputs) compiled from `ast` where the cache lacks the plan: `ast` must
// be what the parse of `text` gives (the same nodes, operators, literals and keywords; a
// shared subexpression may be one node or several, and columns may differ: a caller
// whose compile fails compiles the text instead, for the error's column). Null `ast`:
// the text's parse, as cached_plan.
std::shared_ptr<const Plan> cached_plan_of_tree(const std::string& text, const detail::Ast* ast,
                                                const std::vector<InputSpec>& inputs);

// compile_plan(text, inputs) from `ast` (cached_plan_of_tree's contract), without the cache.
std::shared_ptr<const Plan> compile_plan_of_tree(const std::string& text, const detail::Ast& ast,
                                                 const std::vector<InputSpec>& inputs);

// The names an expression uses, in order of first appearance, from its AST.
std::vector<std::string> expression_names(const detail::Ast& ast);

namespace detail {

// Whether the parser has operator or element-wise function `op` in `form` for `n`
// operands (a reduction is not one: its keywords are the parser's).
bool operation_known(OperationForm form, const std::string& op, std::size_t n);

// Appends to `ast` the node applying `op` (operation_known) to the nodes `args`, in order,
// as the parser makes it, at `column`; its index.
int add_operation(Ast& ast, OperationForm form, const std::string& op, std::vector<int> args,
                  int column);

}  // namespace detail
}  // namespace numfuse::expr
