// numfuse.jit's verdict on one operation type (python/numfuse/_jit/_ops.py, _engine_same).
//
// numfuse._core._jit_engine_agrees(text, samples, reference) -> bool: whether the engine,
// compiling `text` (a one-operation formula over inputs v0, v1, ... in that order, or the
// tracer's template of it, with {0}, {1}, ... where those go) for the types of `samples`
// (a sequence) and running it on them, returns what NumPy returned on the same
// samples (`reference`): the same dtype, the same shape (a result that lacks only ones,
// a reduction over every axis written without keepdims, counts as that shape), and the
// same values: the same bits, or for floating-point types every element within
// rtol 1e-4 / atol 1e-6 with NaN where NumPy has NaN, infinities equal and a zero's
// sign as NumPy's value's sign.
//
// What this replaces, and why it is one call: the verdict used to construct a
// numfuse.CompiledExpression (a parse for its names), call it (a second parse, the plan
// cache's lookup and insertion, the fast path's memo) and compare in Python; ~56k
// instructions per new operation type, 20 of them in a 20-operation function's first call
// (docs/jit.md). Here the plan is compiled once without the cache (a one-operation plan is
// never asked for again: the trace's formulas have other text) and run with the GIL held
// (nine elements). The engine never warns (no floating-point flags reach Python), so no
// np.errstate is needed around it.
//
// Engine errors (a type the engine refuses, shapes, a value error while running) answer
// False: the operation then runs in NumPy. Conversion errors of the samples propagate as
// Python exceptions (the caller treats any exception as False).
#include <pybind11/pybind11.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "expr_conversion.hpp"
#include "expr_internal.hpp"
#include "jit_internal.hpp"
#include "expr/expr.hpp"
#include "expr/operation.hpp"

namespace py = pybind11;

namespace numfuse::python {
namespace {

using expr::ExprError;

// np.allclose(rtol=1e-4, atol=1e-6, equal_nan=True) of one pair, and where `got` is zero,
// its sign the same as `want`'s.
bool close_real(double got, double want) {
    if (got == 0 && std::signbit(got) != std::signbit(want)) return false;
    if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
    if (std::isinf(got) || std::isinf(want)) return got == want;
    return std::fabs(got - want) <= 1e-6 + 1e-4 * std::fabs(want);
}

// np.isclose(rtol=1e-4, atol=1e-6, equal_nan=True) of one complex pair (NumPy's complex
// rule: the modulus of the difference; non-finite pairs equal or both NaN), and where the
// real part of `got` is zero, its sign the same as `want`'s real part's.
bool close_complex(std::complex<double> got, std::complex<double> want) {
    if (got.real() == 0 && std::signbit(got.real()) != std::signbit(want.real())) return false;
    const auto is_nan = [](std::complex<double> z) {
        return std::isnan(z.real()) || std::isnan(z.imag());
    };
    const auto is_finite = [](std::complex<double> z) {
        return std::isfinite(z.real()) && std::isfinite(z.imag());
    };
    if (is_finite(got) && is_finite(want)) {
        return std::abs(got - want) <= 1e-6 + 1e-4 * std::abs(want);
    }
    return got == want || (is_nan(got) && is_nan(want));
}

template <class T>
bool close_reals(const char* got, const char* want, npy_intp count) {
    for (npy_intp k = 0; k < count; ++k) {
        T g, w;
        std::memcpy(&g, got + k * static_cast<npy_intp>(sizeof(T)), sizeof(T));
        std::memcpy(&w, want + k * static_cast<npy_intp>(sizeof(T)), sizeof(T));
        if (!close_real(static_cast<double>(g), static_cast<double>(w))) return false;
    }
    return true;
}

template <class T>
bool close_complexes(const char* got, const char* want, npy_intp count) {
    for (npy_intp k = 0; k < count; ++k) {
        T g[2], w[2];
        std::memcpy(g, got + k * static_cast<npy_intp>(sizeof g), sizeof g);
        std::memcpy(w, want + k * static_cast<npy_intp>(sizeof w), sizeof w);
        if (!close_complex({static_cast<double>(g[0]), static_cast<double>(g[1])},
                           {static_cast<double>(w[0]), static_cast<double>(w[1])})) {
            return false;
        }
    }
    return true;
}

// The shapes agree: equal, or the same extents with only ones apart.
bool same_shape(PyArrayObject* got, PyArrayObject* want) {
    const npy_intp* g = PyArray_DIMS(got);
    const npy_intp* w = PyArray_DIMS(want);
    const npy_intp* const g_end = g + PyArray_NDIM(got);
    const npy_intp* const w_end = w + PyArray_NDIM(want);
    while (true) {
        while (g != g_end && *g == 1) ++g;
        while (w != w_end && *w == 1) ++w;
        if (g == g_end || w == w_end) return g == g_end && w == w_end;
        if (*g++ != *w++) return false;
    }
}

// The engine's result (a fresh C-contiguous array) against NumPy's (any object).
bool same_result(PyArrayObject* got, const py::handle& reference) {
    PyObject* converted =
        PyArray_FROM_OF(reference.ptr(), NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (converted == nullptr) throw py::error_already_set();
    const py::object holder = py::reinterpret_steal<py::object>(converted);
    auto* want = reinterpret_cast<PyArrayObject*>(converted);
    if (!PyArray_EquivTypes(PyArray_DESCR(got), PyArray_DESCR(want)) || !same_shape(got, want)) {
        return false;
    }
    const npy_intp count = PyArray_SIZE(want);
    const auto* g = static_cast<const char*>(PyArray_DATA(got));
    const auto* w = static_cast<const char*>(PyArray_DATA(want));
    if (std::memcmp(g, w, static_cast<std::size_t>(PyArray_NBYTES(want))) == 0) return true;
    switch (PyArray_TYPE(want)) {
        case NPY_FLOAT: return close_reals<float>(g, w, count);
        case NPY_DOUBLE: return close_reals<double>(g, w, count);
        case NPY_CFLOAT: return close_complexes<float>(g, w, count);
        case NPY_CDOUBLE: return close_complexes<double>(g, w, count);
        default: return false;  // integers and bools: the same bits or not the same
    }
}

// The usual verdict's samples, 1-d contiguous arrays of one length and single values, run
// as compiled objects run them (execute_contiguous: same bits as execute, without its
// shapes, strides and geometry, most of a one-operation run on nine elements). False,
// with nothing run, for any other samples (the caller then runs execute).
bool run_contiguous(const expr::Plan& plan, const std::vector<expr::ArrayView>& views,
                    py::object* result) {
    if (views.size() != plan.input_types.size()) return false;
    std::vector<char> scalar_input(views.size());
    std::vector<const char*> data(views.size());
    std::ptrdiff_t n = -1;
    for (std::size_t k = 0; k < views.size(); ++k) {
        const expr::ArrayView& v = views[k];
        if (v.type != plan.input_types[k] || v.type == expr::Type::s) return false;
        const auto item = static_cast<std::ptrdiff_t>(expr::type_size(v.type));
        if (reinterpret_cast<std::uintptr_t>(v.data) % static_cast<std::uintptr_t>(item) != 0) {
            return false;
        }
        data[k] = v.data;
        if (v.shape.empty()) {
            scalar_input[k] = 1;
            continue;
        }
        if (v.shape.size() != 1 || v.strides[0] != item || v.shape[0] < 1 ||
            (n >= 0 && v.shape[0] != n)) {
            return false;
        }
        n = v.shape[0];
    }
    if (n < 1) return false;
    const expr::ContiguousForm form = expr::contiguous_form(plan, scalar_input);
    if (form.kind == expr::ContiguousForm::Kind::none) return false;
    const std::vector<std::ptrdiff_t>& shape = form.result_shape;  // at most 1-d
    npy_intp dims[1] = {shape.empty() || shape[0] < 0 ? n : shape[0]};
    PyObject* fresh =
        PyArray_SimpleNew(static_cast<int>(shape.size()), dims, npy_type_of(plan.result_type));
    if (fresh == nullptr) throw py::error_already_set();
    *result = py::reinterpret_steal<py::object>(fresh);
    expr::execute_contiguous(
        plan, form, data.data(), static_cast<std::size_t>(n),
        static_cast<char*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(fresh))));
    return true;
}

// The plan of `text` (a formula over v0, v1, ...) for `specs`: a template's one operation
// (operation_of) compiled from the operation, without the text's parse (compile_operation:
// the same plan); other formulas, and operations compile_operation leaves to the text (a
// reduction), compiled from the text.
std::shared_ptr<const expr::Plan> verdict_plan(const std::string& template_text,
                                               const std::string& text,
                                               const std::vector<expr::InputSpec>& specs) {
    Operation operation;
    if (operation_of(template_text, &operation)) {
        std::shared_ptr<const expr::Plan> plan =
            expr::compile_operation(operation.form, operation.op, text, specs);
        if (plan != nullptr) return plan;
    }
    return expr::compile_plan(text, specs);
}

// The samples as the engine's inputs v0, v1, ...: `inputs` owns the arrays, and a Python
// scalar's view points into its Input; the specs and views are moved out of it (nothing
// else reads them), not copied.
struct VerdictInputs {
    std::vector<Input> inputs;
    std::vector<expr::InputSpec> specs;
    std::vector<expr::ArrayView> views;
};

void convert_samples(const std::string& text, const py::sequence& samples, VerdictInputs* in) {
    const auto count = static_cast<std::size_t>(py::len(samples));
    std::vector<std::string> names;
    names.reserve(count);
    for (std::size_t k = 0; k < count; ++k) names.push_back("v" + std::to_string(k));
    in->inputs = convert_inputs(text, names, samples, nullptr);
    in->specs.reserve(count);
    in->views.reserve(count);
    for (auto& input : in->inputs) {
        in->specs.push_back(std::move(input.spec));
        in->views.push_back(std::move(input.view));
    }
}

bool engine_agrees(const std::string& template_text, const py::sequence& samples,
                   const py::handle& reference) {
    const std::string text = formula_of(template_text);
    VerdictInputs in;
    convert_samples(text, samples, &in);
    const std::vector<expr::InputSpec>& specs = in.specs;
    const std::vector<expr::ArrayView>& views = in.views;
    const std::size_t count = views.size();
    py::object result;
    try {
        const std::shared_ptr<const expr::Plan> plan = verdict_plan(template_text, text, specs);
        if (plan->result_type == expr::Type::s) return false;
        if (run_contiguous(*plan, views, &result)) {
            return same_result(reinterpret_cast<PyArrayObject*>(result.ptr()), reference);
        }
        std::vector<std::vector<std::ptrdiff_t>> shapes;
        shapes.reserve(count);
        for (const auto& v : views) shapes.push_back(v.shape);
        const std::vector<std::ptrdiff_t> shape = expr::result_shape(*plan, shapes);
        const std::vector<npy_intp> dims(shape.begin(), shape.end());
        PyObject* fresh =
            PyArray_SimpleNew(static_cast<int>(dims.size()), const_cast<npy_intp*>(dims.data()),
                              npy_type_of(plan->result_type));
        if (fresh == nullptr) throw py::error_already_set();
        result = py::reinterpret_steal<py::object>(fresh);
        expr::execute(*plan, views, view_of(result, plan->result_type));
    } catch (const ExprError&) {
        return false;  // the engine refuses these types or values: NumPy runs it
    }
    return same_result(reinterpret_cast<PyArrayObject*>(result.ptr()), reference);
}

// The verdict's plan of `template_text` for `samples`, described (describe_plan), or the
// engine's error as ("error", kind, message).
py::object verdict_plan_of(const std::string& template_text, const py::sequence& samples) {
    const std::string text = formula_of(template_text);
    VerdictInputs in;
    convert_samples(text, samples, &in);
    try {
        return describe_plan(*verdict_plan(template_text, text, in.specs));
    } catch (const ExprError& error) {
        return py::make_tuple("error", static_cast<int>(error.kind), error.what());
    }
}

}  // namespace

// describe_plan (jit_internal.hpp).
py::tuple describe_plan(const expr::Plan& plan) {
    const auto describe_stage = [](const expr::Stage& stage) {
        py::list inputs, registers, code, axes;
        for (const auto& in : stage.inputs) {
            inputs.append(py::make_tuple(in.from_stage, in.index, in.from_output));
        }
        for (const auto& r : stage.program.registers) {
            const bool constant = r.kind == expr::RegisterKind::constant;
            registers.append(py::make_tuple(static_cast<int>(r.kind),
                                            std::string(1, expr::type_letter(r.type)), r.input,
                                            r.slot,
                                            py::bytes(reinterpret_cast<const char*>(r.value.bytes),
                                                      constant ? expr::type_size(r.type) : 0),
                                            py::bytes(r.bytes), r.item));
        }
        for (const auto& ins : stage.program.code) {
            code.append(py::make_tuple(expr::opcode_name(ins.op), ins.dst, ins.a, ins.b, ins.c));
        }
        for (int a : stage.axes) axes.append(a);
        return py::make_tuple(inputs, registers, code, stage.program.result, stage.program.slots,
                              stage.program.max_item, static_cast<int>(stage.reduce),
                              stage.all_axes, axes, stage.axis_int, stage.keepdims,
                              std::string(1, expr::type_letter(stage.out_type)));
    };
    py::list stages;
    for (const auto& stage : plan.stages) stages.append(describe_stage(stage));
    py::list names;
    for (const auto& name : plan.input_names) names.append(name);
    return py::make_tuple(stages, std::string(1, expr::type_letter(plan.result_type)),
                          plan.value_keyed, plan.reuse_stage, names);
}

void register_jit_verdict(py::module_& m) {
    m.def("_jit_verdict_plan", &verdict_plan_of, py::arg("text"), py::arg("samples"),
          "The plan numfuse.jit's verdict compiles for `text` on `samples` (as "
          "_jit_engine_agrees), described, or ('error', kind, message) "
          "(src/python/jit_verdict.cpp; tests compare a template's one operation with its "
          "text spelled otherwise).");
    m.def("_jit_engine_agrees", &engine_agrees, py::arg("text"), py::arg("samples"),
          py::arg("reference"),
          "Whether the engine computes `text` (over v0, v1, ..., or a template over {0}, "
          "{1}, ...) on `samples` as NumPy's `reference` (numfuse.jit's verdict, "
          "src/python/jit_verdict.cpp).");
}

}  // namespace numfuse::python
