// numfuse.jit's fused formulas, from the trace to the engine without a parse.
//
// numfuse._core._jit_formula(steps) -> numfuse.CompiledExpression: the formula that
// _trace.py's pending nodes make, as numfuse.compile(text) would compile its text, but
// with the AST built here from the nodes (the tracer used to print the formula as text
// for the engine to tokenise and parse back: ~0.22M instructions of a 20-operation
// function's first call, AMD EPYC Zen 3). `steps` lists the formula's nodes, each after
// its operands (the last one is the formula):
//   - a str: an input's name ("v3", "c0") or a Python number's literal as the tracer
//     writes it ("2", "0.5", "1e-05", "(-1)", "(-0.5)", "True");
//   - a tuple (template, a[, b[, c]]): the tracer's engine template ("({0} + {1})",
//     "exp({0})", "sum({0}, axis=(1,), keepdims=False)", softmax's formula) applied to the
//     steps at indices a, b, c.
// The text is written here too (each {k} replaced by operand k's text, as str.format did),
// for the plan cache's key, .explain() and errors. A template that is one operation
// (operation_of) becomes its node directly (expr::detail::add_operation, the parser's
// node); any other (reductions with their keywords, softmax, x ** 2) is parsed once as a
// template (parse_cached of its text over v0, v1, v2) and its nodes copied with the
// operands in place of those names. Literals become the parser's number nodes
// (expr::detail::number_node). The compiler, lowering and code generation are the text's
// own (CompiledExpression of the tree: expr::cached_plan_of_tree); columns are left at 0
// (a compile error makes the compiled object compile the text, whose parse reports it).
//
// numfuse._core._jit_steps(node, no_const, tracer) -> (steps, inputs): the steps of the
// pending node `node` (a _tracer.Tracer) as _jit_formula reads them, and the formula's
// inputs, name -> (is_slot, slot or value), in one C++ walk of the nodes (the Python
// recursion over them cost a 20-operation function's first call ~0.1M instructions, AMD
// EPYC Zen 3; it ran once per fused formula, mostly before the interpreter specialized
// it). Each node once (by identity), after its operands: a node holding a slot of the
// trace's env is the input "v<slot>"; a constant (its `const` is not `no_const`) the
// input "c<k>", k the count of inputs named before it; a pending node (template, operand
// step indices...), its operands being nodes or Python numbers. A Python number is a
// literal step ("2", "(-1)", "0.5", "(-0.0)", "True"), or where it has none (a complex,
// a non-finite float) the input "c<k>".
//
// numfuse._core._jit_formula_plans(steps, samples) -> (tree plan, text plan): the plans
// compiled from this AST and from the text's parse for `samples` (the inputs in the
// compiled object's input_names order), each described (describe_plan) or
// ("error", kind, message): tests check they are one.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "expr_conversion.hpp"
#include "expr_internal.hpp"
#include "jit_internal.hpp"
#include "expr/expr.hpp"
#include "expr/operation.hpp"
#include "expr/parser.hpp"

namespace py = pybind11;

namespace numfuse::python {

std::string formula_of(const std::string& text) {
    std::string formula;
    formula.reserve(text.size());
    for (std::size_t k = 0; k < text.size(); ++k) {
        if (text[k] == '{' && k + 2 < text.size() && text[k + 1] >= '0' && text[k + 1] <= '9' &&
            text[k + 2] == '}') {
            formula += 'v';
            formula += text[k + 1];
            k += 2;
        } else {
            formula += text[k];
        }
    }
    return formula;
}

bool operation_of(const std::string& text, Operation* operation) {
    const std::size_t size = text.size();
    if (size == 6 && text[0] == '(' && text.compare(2, 4, "{0})") == 0) {
        operation->form = expr::OperationForm::unary;
        operation->op.assign(1, text[1]);
        return true;
    }
    if (size > 10 && text.compare(0, 5, "({0} ") == 0 && text.compare(size - 5, 5, " {1})") == 0) {
        operation->op = text.substr(5, size - 10);
        const std::string& op = operation->op;
        const bool compare =
            op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=";
        operation->form = compare ? expr::OperationForm::compare : expr::OperationForm::binary;
        return op.find_first_of("{} ") == std::string::npos;
    }
    static const char* const operands[] = {"({0})", "({0}, {1})", "({0}, {1}, {2})"};
    const std::size_t open = text.find('(');
    if (open == 0 || open == std::string::npos) return false;
    for (std::size_t k = 0; k < open; ++k) {
        const char c = text[k];
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9'))) {
            return false;
        }
    }
    for (const char* list : operands) {
        if (text.compare(open, std::string::npos, list) == 0) {
            operation->form = expr::OperationForm::call;
            operation->op = text.substr(0, open);
            return true;
        }
    }
    return false;
}

namespace {

using expr::detail::Ast;
using expr::detail::AstNode;
using expr::detail::NodeKind;

// An input's name as the tracer writes it: v or c, then digits.
bool is_input_name(const std::string& s) {
    return s.size() > 1 && (s[0] == 'v' || s[0] == 'c') &&
           s.find_first_not_of("0123456789", 1) == std::string::npos;
}

// The formula's text and AST, built step by step.
struct Formula {
    std::string text;  // the whole formula's, once built
    Ast ast;
    std::vector<std::string> texts;  // per step
    std::vector<int> nodes;          // per step, its AST node
    std::vector<int> depths;         // per AST node, its depth (the compiler recurses)

    int add(AstNode node) {
        int depth = 1;
        for (const int arg : node.args)
            depth = std::max(depth, depths[static_cast<std::size_t>(arg)] + 1);
        depths.push_back(depth);
        ast.nodes.push_back(std::move(node));
        return static_cast<int>(ast.nodes.size() - 1);
    }

    // A leaf: an input's name, or a Python number's literal (_trace._literal's forms).
    int leaf(const std::string& s) {
        AstNode node;
        if (is_input_name(s)) {
            node.kind = NodeKind::name;
            node.text = s;
            return add(std::move(node));
        }
        if (s == "True" || s == "False") {
            node.kind = NodeKind::number;
            node.number_type = expr::Type::b;
            node.int_value = s == "True" ? 1 : 0;
            return add(std::move(node));
        }
        if (s.size() > 3 && s.compare(0, 2, "(-") == 0 && s.back() == ')') {
            const int number = add(expr::detail::number_node(s.substr(2, s.size() - 3), 0));
            node.kind = NodeKind::unary;
            node.text = "-";
            node.args = {number};
            return add(std::move(node));
        }
        return add(expr::detail::number_node(s, 0));
    }

    // `templ` applied to the nodes `args`.
    int apply(const std::string& templ, const std::vector<int>& args) {
        Operation operation;
        if (operation_of(templ, &operation) &&
            expr::detail::operation_known(operation.form, operation.op, args.size())) {
            const int index =
                expr::detail::add_operation(ast, operation.form, operation.op, args, 0);
            int depth = 1;
            for (const int arg : args)
                depth = std::max(depth, depths[static_cast<std::size_t>(arg)] + 1);
            depths.push_back(depth);
            return index;
        }
        // The template's own parse (a few recent ones are kept: parse_cached), copied with
        // operand k's node for each name vk. The parse lists every node after its operands.
        const std::shared_ptr<const Ast> fragment = expr::detail::parse_cached(formula_of(templ));
        std::vector<int> placed(fragment->nodes.size(), -1);
        for (std::size_t k = 0; k < fragment->nodes.size(); ++k) {
            const AstNode& from = fragment->nodes[k];
            if (from.kind == NodeKind::name && from.text.size() == 2 && from.text[0] == 'v' &&
                from.text[1] >= '0' && static_cast<std::size_t>(from.text[1] - '0') < args.size()) {
                placed[k] = args[static_cast<std::size_t>(from.text[1] - '0')];
                continue;
            }
            AstNode node = from;
            node.column = 0;
            for (int& arg : node.args) arg = placed[static_cast<std::size_t>(arg)];
            placed[k] = add(std::move(node));
        }
        return placed[static_cast<std::size_t>(fragment->root)];
    }

    // `templ` with each {k} replaced by the text of step `args[k]`.
    std::string substitute(const std::string& templ, const std::vector<int>& steps) const {
        std::size_t size = templ.size();
        for (const int step : steps) size += texts[static_cast<std::size_t>(step)].size();
        std::string out;
        out.reserve(size);
        for (std::size_t k = 0; k < templ.size(); ++k) {
            const char c = templ[k];
            if (c == '{' && k + 2 < templ.size() && templ[k + 2] == '}' && templ[k + 1] >= '0' &&
                static_cast<std::size_t>(templ[k + 1] - '0') < steps.size()) {
                out += texts[static_cast<std::size_t>(
                    steps[static_cast<std::size_t>(templ[k + 1] - '0')])];
                k += 2;
            } else {
                out += c;
            }
        }
        return out;
    }
};

// The formula of `steps`; its AST is null where the text's parse must decide (a formula
// deeper or longer than the parser takes: the parse reports it).
Formula build(const py::list& steps) {
    Formula f;
    const auto count = static_cast<std::size_t>(PyList_GET_SIZE(steps.ptr()));
    if (count == 0) throw py::value_error("_jit_formula: no steps");
    f.texts.reserve(count);
    f.nodes.reserve(count);
    f.ast.nodes.reserve(2 * count);
    f.depths.reserve(2 * count);
    std::vector<int> operand_steps, operand_nodes;
    for (std::size_t k = 0; k < count; ++k) {
        PyObject* step = PyList_GET_ITEM(steps.ptr(), static_cast<Py_ssize_t>(k));
        if (PyUnicode_Check(step)) {
            std::string s = py::reinterpret_borrow<py::str>(step).cast<std::string>();
            f.nodes.push_back(f.leaf(s));
            f.texts.push_back(std::move(s));
            continue;
        }
        const auto item = py::reinterpret_borrow<py::tuple>(step);
        const std::size_t n = item.size();
        if (n < 2 || n > 4)
            throw py::value_error("_jit_formula: a step is (template, a[, b[, c]])");
        const std::string templ = item[0].cast<std::string>();
        operand_steps.clear();
        operand_nodes.clear();
        for (std::size_t j = 1; j < n; ++j) {
            const auto at = item[j].cast<std::size_t>();
            if (at >= k) throw py::value_error("_jit_formula: an operand after its step");
            operand_steps.push_back(static_cast<int>(at));
            operand_nodes.push_back(f.nodes[at]);
        }
        f.nodes.push_back(f.apply(templ, operand_nodes));
        f.texts.push_back(f.substitute(templ, operand_steps));
    }
    f.text = std::move(f.texts.back());
    f.ast.root = f.nodes.back();
    return f;
}

bool parse_decides(const Formula& f) {
    return f.text.size() > expr::max_expression_length ||
           f.depths[static_cast<std::size_t>(f.ast.root)] > expr::max_nesting_depth;
}

py::object jit_formula(const py::list& steps) {
    Formula f = build(steps);
    if (parse_decides(f)) return compiled_expression_of_tree(f.text, nullptr);
    return compiled_expression_of_tree(std::move(f.text),
                                       std::make_shared<const Ast>(std::move(f.ast)));
}

// _jit_steps' walk (see the top of this file).
struct StepWalk {
    PyObject* no_const;
    PyObject* tracer;
    py::list steps;
    py::dict inputs;
    std::unordered_map<PyObject*, Py_ssize_t> memo;

    Py_ssize_t append(py::object step) {
        steps.append(std::move(step));
        return PyList_GET_SIZE(steps.ptr()) - 1;
    }

    // the name of a new constant input holding `value`
    py::str constant(py::handle value) {
        py::str name("c" + std::to_string(PyDict_GET_SIZE(inputs.ptr())));
        inputs[name] = py::make_tuple(false, value);
        return name;
    }

    // A Python number's literal as the parser reads it back: negative numbers in
    // parentheses, a float by its repr (the shortest that round-trips); empty where it
    // has none (a complex, a non-finite float: the caller passes it as an input).
    static std::string literal(PyObject* value) {
        if (PyBool_Check(value)) return value == Py_True ? "True" : "False";
        if (PyLong_CheckExact(value)) {
            const std::string text = py::str(value).cast<std::string>();
            return text[0] == '-' ? "(" + text + ")" : text;
        }
        if (PyFloat_CheckExact(value)) {
            const double d = PyFloat_AS_DOUBLE(value);
            if (!std::isfinite(d)) return {};
            const std::string text = py::repr(value).cast<std::string>();
            return std::signbit(d) ? "(" + text + ")" : text;
        }
        return {};
    }

    // A Tracer's field, by a name made (and hashed) once per process.
    static py::object field(PyObject* node, const char* name, PyObject** interned) {
        if (*interned == nullptr) {
            *interned = PyUnicode_InternFromString(name);
            if (*interned == nullptr) throw py::error_already_set();
        }
        PyObject* value = PyObject_GetAttr(node, *interned);
        if (value == nullptr) throw py::error_already_set();
        return py::reinterpret_steal<py::object>(value);
    }

    Py_ssize_t walk(PyObject* node) {
        static PyObject* slot_name = nullptr;
        static PyObject* const_name = nullptr;
        static PyObject* args_name = nullptr;
        static PyObject* template_name = nullptr;
        const auto found = memo.find(node);
        if (found != memo.end()) return found->second;
        const py::object slot = field(node, "slot", &slot_name);
        Py_ssize_t index;
        if (!slot.is_none()) {
            py::str name("v" + py::str(slot).cast<std::string>());
            inputs[name] = py::make_tuple(true, slot);
            index = append(std::move(name));
        } else if (const py::object value = field(node, "const", &const_name);
                   value.ptr() != no_const) {
            index = append(constant(value));
        } else {
            const py::object args = field(node, "args", &args_name);
            const py::tuple operands =
                py::reinterpret_steal<py::tuple>(PySequence_Tuple(args.ptr()));
            if (!operands) throw py::error_already_set();
            py::tuple step(operands.size() + 1);
            step[0] = field(node, "template", &template_name);
            for (std::size_t k = 0; k < operands.size(); ++k) {
                PyObject* arg = operands[k].ptr();
                if (Py_TYPE(arg) == reinterpret_cast<PyTypeObject*>(tracer)) {
                    step[k + 1] = py::int_(walk(arg));
                    continue;
                }
                std::string text = literal(arg);
                step[k + 1] = py::int_(PyList_GET_SIZE(steps.ptr()));
                if (text.empty()) {
                    append(constant(arg));
                } else {
                    append(py::str(text));
                }
            }
            index = append(std::move(step));
        }
        memo.emplace(node, index);
        return index;
    }
};

py::tuple jit_steps(const py::handle& node, const py::handle& no_const, const py::handle& tracer) {
    StepWalk walk{no_const.ptr(), tracer.ptr(), py::list(), py::dict(), {}};
    walk.walk(node.ptr());
    return py::make_tuple(std::move(walk.steps), std::move(walk.inputs));
}

py::tuple jit_formula_plans(const py::list& steps, const py::sequence& samples) {
    const Formula f = build(steps);
    const std::vector<std::string> used = expr::expression_names(f.ast);
    std::vector<std::string> names(used.begin(), used.end());
    std::sort(names.begin(), names.end());
    std::vector<Input> inputs = convert_inputs(f.text, names, samples, nullptr);
    std::vector<expr::InputSpec> specs;
    for (auto& input : inputs) specs.push_back(std::move(input.spec));
    const auto described = [&](bool tree) -> py::object {
        try {
            return describe_plan(tree ? *expr::compile_plan_of_tree(f.text, f.ast, specs)
                                      : *expr::compile_plan(f.text, specs));
        } catch (const expr::ExprError& error) {
            return py::make_tuple("error", static_cast<int>(error.kind), error.what());
        }
    };
    return py::make_tuple(described(true), described(false), f.text);
}

}  // namespace

void register_jit_formula(py::module_& m) {
    m.def("_jit_steps", &jit_steps, py::arg("node"), py::arg("no_const"), py::arg("tracer"),
          "(steps, inputs) of numfuse.jit's pending node `node`: the steps _jit_formula "
          "reads and the inputs' name -> (is_slot, slot or value) (src/python/jit_formula.cpp).");
    m.def("_jit_formula", &jit_formula, py::arg("steps"),
          "numfuse.jit's fused formula from its steps (src/python/jit_formula.cpp): a "
          "CompiledExpression of the formula's text, compiled from the AST the steps make.");
    m.def("_jit_formula_plans", &jit_formula_plans, py::arg("steps"), py::arg("samples"),
          "(plan from the steps' AST, plan from the text's parse, text) for `samples`, each "
          "plan described or ('error', kind, message) (tests: src/python/jit_formula.cpp).");
}

}  // namespace numfuse::python
