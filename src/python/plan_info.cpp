// The compiled plan's stages, for back ends that schedule the stages themselves
// (numfuse/_dask.py): what each stage reads, how it reduces, its type, and a way
// to run one stage on NumPy arrays with its reduction changed (partial
// reductions of blocks). Only the core's public API (expr/expr.hpp) is used.
//
// The GIL: released around core::execute, as in evaluate (expr_evaluate.cpp); the
// arrays are held by the py::array handles of this frame.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "dtype_rules.hpp"
#include "expr_error.hpp"
#include "weak_scalar.hpp"
#include "expr/expr.hpp"

namespace py = pybind11;

namespace numfuse::python {
namespace {

using expr::ErrorKind;
using expr::ExprError;
using expr::InputSpec;
using expr::Plan;
using expr::ReduceKind;
using expr::Type;

// (name, NumPy dtype name, weak, the Python int or None): an input as the compiler typed
// it; a Python int is kept, since its value decides NumPy's range checks (and may be
// folded into the plan: Plan::value_keyed).
using InputDescription = std::tuple<std::string, std::string, bool, py::object>;

Type type_of_dtype_name(const std::string& name) {
    for (int t = 0; t < expr::type_count; ++t) {
        if (name == expr::type_name(static_cast<Type>(t))) return static_cast<Type>(t);
    }
    throw py::type_error("no expression type for dtype '" + name + "'");
}

// The type the engine computes an array of this dtype in: the rule evaluate applies
// (dtype_rules.hpp), and evaluate has already accepted these values with its detailed
// messages (numfuse/_dask.py validates with evaluate first). Byte strings are not taken:
// the Dask back end has no stages for them.
Type type_of_array_dtype(const py::dtype& dtype) {
    Type type;
    if (!engine_type_of(dtype.kind(), dtype.itemsize(), &type) || type == Type::s) {
        throw py::type_error("unsupported array dtype '" + py::str(dtype).cast<std::string>() +
                             "' for numfuse.evaluate");
    }
    return type;
}

// Python scalars are weak (NEP 50, weak_scalar.hpp, as evaluate reads them); anything else
// is typed by its dtype.
InputSpec spec_of(const std::string& name, py::handle value) {
    InputSpec spec;
    spec.name = name;
    PyObject* obj = value.ptr();
    if (is_weak_python_scalar(obj)) {
        expr::Scalar unused;
        if (!read_weak_scalar(obj, &spec, &unused)) throw py::error_already_set();
    } else {
        const py::array array = py::array::ensure(value);
        if (!array) throw py::error_already_set();
        spec.type = type_of_array_dtype(array.dtype());
        spec.int_dtype = int_dtype_of(array.dtype().kind(), array.dtype().itemsize());
    }
    return spec;
}

std::vector<InputSpec> specs_of(const std::vector<InputDescription>& inputs) {
    std::vector<InputSpec> specs;
    specs.reserve(inputs.size());
    for (const auto& [name, dtype, weak, python_int] : inputs) {
        InputSpec spec;
        if (!python_int.is_none()) {
            spec = spec_of(name, python_int);
        } else {
            spec.name = name;
            spec.type = type_of_dtype_name(dtype);
            spec.weak = weak;
        }
        specs.push_back(spec);
    }
    return specs;
}

std::shared_ptr<const Plan> plan_for(const std::string& text, const std::vector<InputSpec>& specs) {
    try {
        return expr::cached_plan(text, specs);
    } catch (const ExprError& error) {
        raise_expr_error(error, text);
    }
}

ReduceKind reduce_kind_of(const std::string& name) {
    for (auto kind : {ReduceKind::none, ReduceKind::sum, ReduceKind::prod, ReduceKind::min,
                      ReduceKind::max, ReduceKind::mean, ReduceKind::logsumexp}) {
        if (name == expr::reduce_name(kind)) return kind;
    }
    throw py::value_error("unknown reduction '" + name + "'");
}

// A stage whose program only copies its one input (the value of an earlier stage).
bool is_passthrough(const expr::Stage& stage) {
    if (stage.inputs.size() != 1 || stage.program.code.size() != 1) return false;
    const std::string op = expr::opcode_name(stage.program.code[0].op);
    const char letter = expr::type_letter(stage.out_type);
    return op == std::string("copy_") + letter + letter;
}

Type stage_input_type(const Plan& plan, const expr::StageInput& input) {
    return input.from_stage ? plan.stages[static_cast<std::size_t>(input.index)].out_type
                            : plan.input_types[static_cast<std::size_t>(input.index)];
}

py::tuple plan_stages(const std::string& text, const std::vector<std::string>& names,
                      const py::sequence& values) {
    if (static_cast<std::size_t>(py::len(values)) != names.size()) {
        throw py::value_error("names and values differ in length");
    }
    std::vector<InputSpec> specs;
    for (std::size_t k = 0; k < names.size(); ++k) specs.push_back(spec_of(names[k], values[k]));
    const auto plan = plan_for(text, specs);
    if (plan->stages.empty()) {  // a bytes result (Plan::bytes_input): nothing to schedule
        throw py::type_error(
            "a bytes result (evaluate('s') of a bytes array s) needs NumPy inputs; compute "
            "it from the dask array itself");
    }
    py::list inputs;
    for (std::size_t k = 0; k < specs.size(); ++k) {
        const bool python_int = specs[k].int_range != expr::PyIntRange::unknown;
        inputs.append(py::make_tuple(specs[k].name, expr::type_name(plan->input_types[k]),
                                     specs[k].weak,
                                     python_int ? py::object(values[k]) : py::object(py::none())));
    }
    py::list stages;
    for (const auto& stage : plan->stages) {
        py::list stage_inputs;
        py::list input_dtypes;
        for (const auto& input : stage.inputs) {
            stage_inputs.append(py::make_tuple(input.from_stage, input.index));
            input_dtypes.append(expr::type_name(stage_input_type(*plan, input)));
        }
        py::dict info;
        info["reduce"] = expr::reduce_name(stage.reduce);
        info["all_axes"] = stage.all_axes;
        info["axes"] = stage.axes;
        info["keepdims"] = stage.keepdims;
        info["inputs"] = stage_inputs;
        info["input_dtypes"] = input_dtypes;
        info["out_dtype"] = expr::type_name(stage.out_type);
        info["passthrough"] = is_passthrough(stage);
        stages.append(info);
    }
    return py::make_tuple(inputs, stages);
}

// Stage `index` of the plan as a plan of its own over its inputs, reducing as asked.
Plan stage_plan(const Plan& plan, std::size_t index, ReduceKind reduce,
                const std::optional<std::vector<int>>& axes, bool keepdims) {
    Plan sub;
    sub.text = plan.text;
    expr::Stage stage = plan.stages[index];
    for (std::size_t k = 0; k < stage.inputs.size(); ++k) {
        sub.input_names.push_back("input" + std::to_string(k));
        sub.input_types.push_back(stage_input_type(plan, stage.inputs[k]));
        stage.inputs[k] = expr::StageInput{false, static_cast<int>(k)};
    }
    stage.reduce = reduce;
    stage.all_axes = !axes.has_value();
    // The 0-d rule of one integer axis (Stage::axis_int) holds for the stage's own axis.
    stage.axis_int = stage.axis_int && axes.has_value() && *axes == stage.axes;
    stage.axes = axes.value_or(std::vector<int>{});
    stage.keepdims = keepdims;
    sub.result_type = stage.out_type;
    sub.stages.push_back(std::move(stage));
    return sub;
}

py::array run_stage(const std::string& text, const std::vector<InputDescription>& inputs,
                    std::size_t index, const std::vector<py::array>& arrays,
                    const std::string& reduce, const std::optional<std::vector<int>>& axes,
                    bool keepdims) {
    const auto plan = plan_for(text, specs_of(inputs));
    if (index >= plan->stages.size()) throw py::index_error("no such stage");
    const Plan sub = stage_plan(*plan, index, reduce_kind_of(reduce), axes, keepdims);
    if (arrays.size() != sub.input_types.size()) {
        throw py::value_error("stage " + std::to_string(index) + " reads " +
                              std::to_string(sub.input_types.size()) + " inputs, got " +
                              std::to_string(arrays.size()));
    }
    std::vector<expr::ArrayView> views;
    std::vector<std::vector<std::ptrdiff_t>> shapes;
    for (std::size_t k = 0; k < arrays.size(); ++k) {
        const py::array& array = arrays[k];
        const Type type = sub.input_types[k];
        if (array.dtype().attr("name").cast<std::string>() != expr::type_name(type) ||
            !array.dtype().attr("isnative").cast<bool>()) {
            throw py::type_error("stage input " + std::to_string(k) + " must be a native " +
                                 expr::type_name(type) + " array");
        }
        expr::ArrayView view;
        view.data = static_cast<char*>(const_cast<void*>(array.data()));
        view.type = type;
        view.shape.assign(array.shape(), array.shape() + array.ndim());
        view.strides.assign(array.strides(), array.strides() + array.ndim());
        shapes.push_back(view.shape);
        views.push_back(std::move(view));
    }
    std::vector<std::ptrdiff_t> shape;
    try {
        shape = expr::result_shape(sub, shapes);
    } catch (const ExprError& error) {
        raise_expr_error(error, text);
    }
    py::array result(py::dtype(expr::type_name(sub.result_type)),
                     std::vector<py::ssize_t>(shape.begin(), shape.end()));
    expr::ArrayView out;
    out.data = static_cast<char*>(result.mutable_data());
    out.type = sub.result_type;
    out.shape = shape;
    out.strides.assign(result.strides(), result.strides() + result.ndim());
    bool failed = false;
    ExprError failure(ErrorKind::value, "");
    {
        py::gil_scoped_release release;
        const TsanComputeSection tsan_section;
        try {
            expr::execute(sub, views, out);
        } catch (const ExprError& error) {
            failed = true;
            failure = error;
        }
    }
    if (failed) raise_expr_error(failure, text);
    return result;
}

}  // namespace

void register_plan_info(py::module_& m) {
    m.def("_plan_stages", &plan_stages, py::arg("ex"), py::arg("names"), py::arg("values"),
          "(inputs, stages) of the plan compiled for these values: inputs as (name, dtype, "
          "weak, the Python int or None), stages in execution order as dicts (reduce, all_axes, "
          "axes, keepdims, "
          "inputs as (from_stage, index), input_dtypes, out_dtype, passthrough).");
    m.def("_plan_run_stage", &run_stage, py::arg("ex"), py::arg("inputs"), py::arg("stage"),
          py::arg("arrays"), py::arg("reduce"), py::arg("axes"), py::arg("keepdims"),
          "Runs one stage of the plan of (ex, inputs) on arrays of its input dtypes, "
          "reducing with `reduce` ('none', 'sum', ...) over `axes` (None: all).");
}

}  // namespace numfuse::python
