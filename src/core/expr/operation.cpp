// One operation's AST node as the parser makes it, and compile_operation (operation.hpp).
#include "expr/operation.hpp"

#include <initializer_list>
#include <utility>

#include "expr/compiler_internal.hpp"

namespace numfuse::expr {
namespace detail {
namespace {

bool is_one_of(const std::string& op, std::initializer_list<const char*> names) {
    for (const char* name : names) {
        if (op == name) return true;
    }
    return false;
}

NodeKind kind_of(OperationForm form) {
    switch (form) {
        case OperationForm::unary: return NodeKind::unary;
        case OperationForm::binary: return NodeKind::binary;
        case OperationForm::compare: return NodeKind::compare;
        case OperationForm::call: break;
    }
    return NodeKind::call;
}

}  // namespace

bool operation_known(OperationForm form, const std::string& op, std::size_t n) {
    // What the parser accepts for each form (its operators, and the element-wise functions
    // it knows: a reduction's call carries the keywords only the parser reads).
    switch (form) {
        case OperationForm::unary: return n == 1 && is_one_of(op, {"-", "+", "~"});
        case OperationForm::binary:
            return n == 2 &&
                   is_one_of(op, {"+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>"});
        case OperationForm::compare:
            return n == 2 && is_one_of(op, {"<", "<=", ">", ">=", "==", "!="});
        case OperationForm::call: return is_function_name(op) && !is_reduction_name(op);
    }
    return false;
}

int add_operation(Ast& ast, OperationForm form, const std::string& op, std::vector<int> args,
                  int column) {
    AstNode node;
    node.kind = kind_of(form);
    node.column = column;
    node.text = op;
    node.args = std::move(args);
    ast.nodes.push_back(std::move(node));
    return static_cast<int>(ast.nodes.size() - 1);
}

}  // namespace detail

std::shared_ptr<const Plan> compile_operation(OperationForm form, const std::string& op,
                                              const std::string& text,
                                              const std::vector<InputSpec>& inputs) {
    const std::size_t n = inputs.size();
    if (!detail::operation_known(form, op, n)) return nullptr;
    detail::Ast ast;
    ast.nodes.reserve(n + 1);
    ast.nodes.resize(n);
    std::vector<int> args;
    args.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
        ast.nodes[k].kind = detail::NodeKind::name;
        ast.nodes[k].text = inputs[k].name;
        args.push_back(static_cast<int>(k));
    }
    ast.root = detail::add_operation(ast, form, op, std::move(args), 0);
    detail::Compiler compiler(text, ast, inputs, core::active_level());
    return compiler.compile();
}

}  // namespace numfuse::expr
