// numfuse.compile: CompiledExpression, a compiled expression called with its inputs.
//
// A call takes one of two paths. The fast path (call_contiguous) handles the common
// call -- 1-d contiguous arrays of engine types and scalars -- with a plan memoised for
// the last call's types (or fixed by the signature) and no conversion, broadcasting or
// cache key; every other call goes through evaluate's path (run_plan), errors included.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "expr_conversion.hpp"
#include "expr_internal.hpp"
#include "weak_scalar.hpp"
#include "expr/array_views.hpp"
#include "expr/expr.hpp"
#include "expr/operation.hpp"
#include "numfuse_core.hpp"

namespace py = pybind11;

namespace numfuse::python {
namespace {

using expr::ExprError;
using expr::InputSpec;
using expr::Plan;
using expr::Type;

std::string type_name_of(py::handle value) {
    return std::string(py::str(py::type::handle_of(value).attr("__name__")));
}

// The inputs of a compiled expression without a signature: the names it
// uses, sorted; inf / nan are constants unless the caller names them.
std::vector<std::string> sorted_variable_names(std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    names.erase(std::remove_if(names.begin(), names.end(),
                               [](const std::string& s) { return s == "inf" || s == "nan"; }),
                names.end());
    return names;
}

// signature=: a sequence of (name, dtype) pairs.
std::vector<InputSpec> parse_signature(const py::object& signature) {
    if (!PySequence_Check(signature.ptr()) || py::isinstance<py::str>(signature)) {
        throw py::type_error("signature must be a list of (name, dtype) pairs, got " +
                             type_name_of(signature));
    }
    std::vector<InputSpec> specs;
    for (py::handle entry : signature) {
        if (!PySequence_Check(entry.ptr()) || py::isinstance<py::str>(entry)) {
            throw py::type_error("signature entries are (name, dtype) pairs");
        }
        auto pair = py::reinterpret_borrow<py::sequence>(entry);
        if (py::len(pair) != 2) throw py::value_error("signature entries are (name, dtype)");
        if (!py::isinstance<py::str>(pair[0])) {
            throw py::type_error("signature names must be str, got " + type_name_of(pair[0]));
        }
        InputSpec spec;
        spec.name = pair[0].cast<std::string>();
        spec.type = type_from_dtype(pair[1], &spec.int_dtype);
        specs.push_back(spec);
    }
    return specs;
}

// KeyError (as numexpr) for a name the expression uses that the signature
// does not declare.
void check_signature_names(const std::vector<std::string>& used,
                           const std::vector<std::string>& declared) {
    for (const auto& name : used) {
        if (name != "inf" && name != "nan" &&
            std::find(declared.begin(), declared.end(), name) == declared.end()) {
            PyErr_SetObject(PyExc_KeyError, py::str(name).ptr());
            throw py::error_already_set();
        }
    }
}

// The arguments of a call of a compiled expression, by input name.
struct CallArguments {
    py::list values;  // one per input, in input order
    py::object out = py::none();
    std::string order = "K";
    std::string casting = "same_kind";
};

CallArguments parse_call_arguments(const std::vector<std::string>& names, const py::args& args,
                                   const py::kwargs& kwargs) {
    CallArguments call;
    std::vector<py::object> values(names.size());
    if (args.size() > names.size()) {
        throw py::type_error("expected at most " + std::to_string(names.size()) +
                             " positional arguments, got " + std::to_string(args.size()));
    }
    for (std::size_t k = 0; k < args.size(); ++k) values[k] = args[k];
    for (auto item : kwargs) {
        const std::string key = item.first.cast<std::string>();
        if (key == "out") {
            call.out = py::reinterpret_borrow<py::object>(item.second);
            continue;
        }
        if (key == "order" || key == "casting") {
            if (!py::isinstance<py::str>(item.second)) {
                throw py::type_error(key + " must be a str, got " + type_name_of(item.second));
            }
            (key == "order" ? call.order : call.casting) = item.second.cast<std::string>();
            continue;
        }
        // numexpr's options, accepted and ignored.
        if (key == "ex_uses_vml" || key == "optimization" || key == "truediv") continue;
        const auto found = std::find(names.begin(), names.end(), key);
        if (found == names.end()) throw py::type_error("unexpected keyword argument '" + key + "'");
        const auto k = static_cast<std::size_t>(found - names.begin());
        if (values[k]) throw py::type_error("argument '" + key + "' given twice");
        values[k] = py::reinterpret_borrow<py::object>(item.second);
    }
    for (std::size_t k = 0; k < names.size(); ++k) {
        if (!values[k]) {
            PyErr_SetObject(PyExc_KeyError, py::str(names[k]).ptr());
            throw py::error_already_set();
        }
        call.values.append(values[k]);
    }
    return call;
}

// A compiled expression: reusable, thread-safe (immutable after
// construction), runs without the GIL.
class CompiledExpression {
public:
    CompiledExpression(const std::string& text, py::object signature) : text_(text) {
        const std::vector<std::string> used = names_of(text);
        if (signature.is_none()) {
            names_ = sorted_variable_names(used);
            return;
        }
        const std::vector<InputSpec> specs = parse_signature(signature);
        for (const auto& spec : specs) {
            names_.push_back(spec.name);
            types_.push_back(spec.type);
        }
        check_signature_names(used, names_);
        signature_ = true;
        specs_ = specs;
        fixed_ = signature_plan_for_level();
    }

    // `text` whose plans come from `ast`, its AST built by the caller, or from the text's
    // parse where `ast` is null (no signature): compiled_expression_of_tree.
    CompiledExpression(std::string text, std::shared_ptr<const expr::detail::Ast> ast)
        : text_(std::move(text)), ast_(std::move(ast)) {
        names_ = sorted_variable_names(ast_ ? expr::expression_names(*ast_) : names_of(text_));
    }

    py::object call(py::args args, py::kwargs kwargs) const {
        if (kwargs.empty()) {
            py::object fast = call_contiguous(args);
            if (fast) return fast;
        } else if (args.empty()) {
            // c(x=..., y=...) with exactly the input names: the same fast path, in name order.
            py::object fast = call_contiguous_keywords(kwargs);
            if (fast) return fast;
        }
        const CallArguments call = parse_call_arguments(names_, args, kwargs);
        return run_plan(text_, names_, call.values, call.out, call.order, call.casting,
                        signature_ ? &types_ : nullptr,
                        signature_ ? signature_plan()->plan : nullptr);
    }

    const std::string& text() const { return text_; }
    const std::vector<std::string>& names() const { return names_; }
    py::object signature() const {
        if (!signature_) return py::none();
        py::list sig;
        for (std::size_t k = 0; k < names_.size(); ++k) {
            sig.append(py::make_tuple(names_[k], py::str(expr::type_name(types_[k]))));
        }
        return sig;
    }
    py::object disassemble() const {
        if (!signature_) {
            throw py::value_error(
                "this compiled expression has no signature; its types (and "
                "program) are chosen at each call");
        }
        return disassembly(*signature_plan()->plan);
    }

private:
    static constexpr std::size_t max_fast_inputs = 16;
    // What each fast-path argument is: 0 a 1-d array, else one value, weak
    // (a Python scalar, NEP 50) or strong (a NumPy scalar or 0-d array).
    static constexpr char weak_scalar = 1, strong_scalar = 2;

    py::object call_contiguous_keywords(const py::kwargs& kwargs) const {
        const std::size_t count = names_.size();
        if (count == 0 || count > max_fast_inputs ||
            static_cast<std::size_t>(PyDict_GET_SIZE(kwargs.ptr())) != count) {
            return py::object();
        }
        py::tuple ordered(count);
        for (std::size_t k = 0; k < count; ++k) {
            PyObject* value = PyDict_GetItemString(kwargs.ptr(), names_[k].c_str());
            if (value == nullptr) return py::object();
            ordered[k] = py::reinterpret_borrow<py::object>(value);
        }
        return call_contiguous(py::reinterpret_borrow<py::args>(ordered));
    }

    // The common call c(x, y, ...) with 1-d C-contiguous, aligned, native
    // arrays of one length and engine types, and (without a signature)
    // scalars: no conversions, no broadcasting, no cache key, no shape
    // bookkeeping. Returns a null object when the call is anything else (the
    // general path then handles it, errors included).
    py::object call_contiguous(const py::args& args) const {
        const std::size_t count = names_.size();
        if (count == 0 || count > max_fast_inputs || args.size() != count) return py::object();
        const char* data[max_fast_inputs];
        Type types[max_fast_inputs];
        char scalar[max_fast_inputs];
        expr::Scalar values[max_fast_inputs];
        std::int64_t ints[max_fast_inputs];  // a Python int's value, else 0
        npy_intp n = -1;
        for (std::size_t k = 0; k < count; ++k) {
            PyObject* obj = PyTuple_GET_ITEM(args.ptr(), static_cast<Py_ssize_t>(k));
            ints[k] = 0;
            if (!PyArray_CheckExact(obj)) {
                if (signature_) return py::object();  // the signature casts: the general path
                if (is_weak_python_scalar(obj)) {
                    InputSpec spec;
                    if (!read_weak_scalar(obj, &spec, &values[k])) throw py::error_already_set();
                    // Ints beyond int64 (rare) take the general path.
                    if (spec.type == Type::d && spec.int_range != expr::PyIntRange::unknown) {
                        return py::object();
                    }
                    types[k] = spec.type;
                    ints[k] = spec.int_value;
                    scalar[k] = weak_scalar;
                } else if (PyArray_IsScalar(obj, Generic)) {
                    PyArray_Descr* descr = PyArray_DescrFromScalar(obj);
                    const bool exact = exact_type_for_descr(descr, &types[k]) &&
                                       static_cast<std::size_t>(PyDataType_ELSIZE(descr)) <=
                                           sizeof values[k].bytes &&
                                       PyArray_ISNBO(descr->byteorder);
                    if (exact) PyArray_ScalarAsCtype(obj, values[k].bytes);
                    Py_DECREF(descr);
                    if (!exact) return py::object();
                    scalar[k] = strong_scalar;
                } else {
                    return py::object();
                }
                data[k] = reinterpret_cast<const char*>(values[k].bytes);
                continue;
            }
            auto* arr = reinterpret_cast<PyArrayObject*>(obj);
            const int ndim = PyArray_NDIM(arr);
            if (ndim > 1 || !PyArray_IS_C_CONTIGUOUS(arr) || !PyArray_ISALIGNED(arr) ||
                !PyArray_ISNOTSWAPPED(arr)) {
                return py::object();
            }
            Type t;
            if (!exact_type_for_descr(PyArray_DESCR(arr), &t)) return py::object();
            if (signature_ && types_[k] != t) return py::object();
            types[k] = t;
            data[k] = static_cast<const char*>(PyArray_DATA(arr));
            if (ndim == 0) {  // a 0-d array: a strong scalar, as NumPy scalars are
                if (signature_) return py::object();  // (the signature's form has arrays only)
                scalar[k] = strong_scalar;
                continue;
            }
            const npy_intp length = PyArray_DIM(arr, 0);
            if (n >= 0 && length != n) return py::object();
            n = length;
            scalar[k] = 0;
        }
        if (n <= 0) return py::object();  // no array, or empty ones (execute()'s rules)
        // The plan: fixed by the signature, else the one memoised for the
        // last types seen.
        const std::shared_ptr<const FastPlan> found =
            signature_ ? signature_plan() : memoised_plan(types, scalar, ints, count);
        if (!found || found->form.kind == expr::ContiguousForm::Kind::none) return py::object();
        const std::vector<std::ptrdiff_t>& shape = found->form.result_shape;  // at most 1-d
        npy_intp dims[1] = {shape.empty() || shape[0] < 0 ? n : shape[0]};
        PyObject* fresh = PyArray_SimpleNew(static_cast<int>(shape.size()), dims,
                                            npy_type_of(found->plan->result_type));
        if (fresh == nullptr) throw py::error_already_set();
        py::object result = py::reinterpret_steal<py::object>(fresh);
        char* out = static_cast<char*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(fresh)));
        // The GIL is only worth releasing for work longer than its round trip.
        run_engine(text_, n >= 4096, static_cast<std::size_t>(n), [&] {
            expr::execute_contiguous(*found->plan, found->form, data, static_cast<std::size_t>(n),
                                     out);
        });
        return result;
    }

    // A plan and how the fast path runs it (shared: a call that released the
    // GIL keeps its plan while another call replaces the memo).
    struct FastPlan {
        std::shared_ptr<const Plan> plan;
        expr::ContiguousForm form;
    };

    // The signature's plan for the active level (its constants folded with that level's
    // kernels, Plan::level): compiled at construction, fetched again after set_level.
    std::shared_ptr<const FastPlan> signature_plan() const {
        {
            const std::lock_guard<std::mutex> lock(memo_mutex_);
            if (fixed_->plan->level == core::active_level()) return fixed_;
        }
        std::shared_ptr<const FastPlan> found = signature_plan_for_level();
        const std::lock_guard<std::mutex> lock(memo_mutex_);
        fixed_ = found;
        return found;
    }

    std::shared_ptr<const FastPlan> signature_plan_for_level() const {
        try {
            std::shared_ptr<const Plan> plan = expr::cached_plan(text_, specs_);
            return std::make_shared<const FastPlan>(
                FastPlan{plan, expr::contiguous_form(*plan, std::vector<char>(names_.size(), 0))});
        } catch (const ExprError& error) {
            raise_expr_error(error, text_);
        }
    }

    // The plan for these input types, `scalar` marking the single values
    // (no signature): the memoised one when they and the level are the last call's,
    // else compiled and memoised. Null when compiling fails (the general path
    // then raises the error). Called with the GIL held, which orders the
    // memo's accesses; the mutex is there too because no tool can see that
    // (ThreadSanitizer), and it costs nothing.
    std::shared_ptr<const FastPlan> memoised_plan(const Type* types, const char* scalar,
                                                  const std::int64_t* ints,
                                                  std::size_t count) const {
        // A Python int's class decides the plan (its NumPy range checks), its value too
        // where the plan is value-keyed: both are part of the memo's key.
        const auto is_python_int = [&](std::size_t k) {
            return scalar[k] == weak_scalar && types[k] == Type::l;
        };
        const auto same_ints = [&](bool value_keyed) {
            for (std::size_t k = 0; k < count; ++k) {
                if (!is_python_int(k)) continue;
                if (value_keyed
                        ? ints[k] != memo_ints_[k]
                        : expr::python_int_class(expr::PyIntRange::int64, ints[k]) !=
                              expr::python_int_class(expr::PyIntRange::int64, memo_ints_[k])) {
                    return false;
                }
            }
            return true;
        };
        {
            const std::lock_guard<std::mutex> lock(memo_mutex_);
            if (memo_ && memo_->plan->level == core::active_level() &&
                std::equal(types, types + count, memo_types_.begin()) &&
                std::equal(scalar, scalar + count, memo_scalar_.begin()) &&
                same_ints(memo_->plan->value_keyed)) {
                return memo_;
            }
        }
        std::vector<InputSpec> specs(count);
        for (std::size_t k = 0; k < count; ++k) {
            specs[k].name = names_[k];
            specs[k].type = types[k];
            specs[k].weak = scalar[k] == weak_scalar;
            if (is_python_int(k)) {
                specs[k].int_range = expr::PyIntRange::int64;
                specs[k].int_value = ints[k];
            }
        }
        std::shared_ptr<const Plan> plan;
        try {
            // Without the text's parse where the caller gave its AST; an error there
            // (rare: numfuse.jit's verdicts ran each operation) returns null, and the
            // general path compiles the text, whose parse gives the error's column.
            plan = expr::cached_plan_of_tree(text_, ast_.get(), specs);
        } catch (const ExprError&) {
            return nullptr;
        }
        std::vector<char> scalar_input(count);
        for (std::size_t k = 0; k < count; ++k) scalar_input[k] = scalar[k] != 0;
        auto found = std::make_shared<const FastPlan>(
            FastPlan{plan, expr::contiguous_form(*plan, scalar_input)});
        const std::lock_guard<std::mutex> lock(memo_mutex_);
        memo_types_.assign(types, types + count);
        memo_scalar_.assign(scalar, scalar + count);
        memo_ints_.assign(ints, ints + count);
        memo_ = found;
        return found;
    }

    std::string text_;
    std::shared_ptr<const expr::detail::Ast> ast_;  // the caller's AST of text_, else null
    std::vector<std::string> names_;
    std::vector<Type> types_;
    bool signature_ = false;
    std::vector<InputSpec> specs_;  // the signature's
    // The signature's plan and its form, for the level of the last call (signature_plan).
    mutable std::shared_ptr<const FastPlan> fixed_;
    // Memo of the last call's plan (no signature); touched only under the GIL.
    mutable std::vector<Type> memo_types_;
    mutable std::vector<char> memo_scalar_;
    mutable std::vector<std::int64_t> memo_ints_;
    mutable std::shared_ptr<const FastPlan> memo_;
    mutable std::mutex memo_mutex_;
};

}  // namespace

py::object compiled_expression_of_tree(std::string text,
                                       std::shared_ptr<const expr::detail::Ast> ast) {
    return py::cast(new CompiledExpression(std::move(text), std::move(ast)),
                    py::return_value_policy::take_ownership);
}

void register_compiled_expression(py::module_& m) {
    py::class_<CompiledExpression>(m, "CompiledExpression",
                                   "A compiled numfuse expression; call it with the input arrays.")
        .def(py::init<const std::string&, py::object>(), py::arg("ex"),
             py::arg("signature") = py::none())
        .def("__call__", &CompiledExpression::call)
        .def("run", &CompiledExpression::call,
             "numexpr's NumExpr.run: the same as calling the object, c.run(*args, out=None, "
             "order='K', casting='same_kind').")
        .def_property_readonly("expression", &CompiledExpression::text)
        .def_property_readonly("input_names", &CompiledExpression::names)
        .def_property_readonly("signature", &CompiledExpression::signature)
        .def("disassemble", &CompiledExpression::disassemble)
        .def("__repr__", [](const CompiledExpression& c) {
            return "numfuse.CompiledExpression(" + py::repr(py::str(c.text())).cast<std::string>() +
                   ")";
        });
}

}  // namespace numfuse::python
