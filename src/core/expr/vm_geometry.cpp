// The VM's geometry: broadcast shapes, reduced axes and output shapes per stage.
#include <algorithm>
#include <string>
#include <vector>

#include "expr/vm_internal.hpp"

namespace numfuse::expr::vm {

[[noreturn]] void value_error(const std::string& message) {
    throw ExprError(ErrorKind::value, message);
}

std::string shape_text(const Shape& shape) {
    std::string s = "(";
    for (std::size_t k = 0; k < shape.size(); ++k) {
        s += std::to_string(shape[k]);
        if (shape.size() == 1 || k + 1 < shape.size()) s += ",";
    }
    return s + ")";
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
    std::size_t ndim = 0;
    for (const auto& s : shapes) ndim = std::max(ndim, s.size());
    Shape out(ndim, 1);
    for (const auto& s : shapes) {
        const std::size_t offset = ndim - s.size();
        for (std::size_t k = 0; k < s.size(); ++k) {
            std::ptrdiff_t& o = out[offset + k];
            if (s[k] == o || s[k] == 1) continue;
            if (o == 1) {
                o = s[k];
                continue;
            }
            std::string all;
            for (const auto& t : shapes) all += shape_text(t) + " ";
            value_error("operands could not be broadcast together with shapes " + all);
        }
    }
    return out;
}

std::size_t element_count(const Shape& shape) {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    return n;
}

std::vector<StageGeometry> plan_geometry(const Plan& plan, const std::vector<Shape>& input_shapes) {
    std::vector<StageGeometry> geometry;
    geometry.reserve(plan.stages.size());
    for (const Stage& stage : plan.stages) {
        std::vector<Shape> shapes;
        for (const auto& in : stage.inputs) {
            shapes.push_back(in.from_stage ? geometry[in.index].out_shape : input_shapes[in.index]);
        }
        StageGeometry g;
        g.iteration = broadcast_shapes(shapes);
        const int ndim = static_cast<int>(g.iteration.size());
        g.reduced.assign(g.iteration.size(), 0);
        if (stage.reduce == ReduceKind::none) {
            g.out_shape = g.iteration;
        } else {
            // A 0-d operand viewed as one element: NumPy's sum/prod/min/max take one
            // integer axis 0 or -1 (np.sum(np.float64(3), axis=-1) is 3.0; a tuple (0,) and
            // np.mean's axis=0 are AxisErrors), numfuse.logsumexp and SciPy's the tuples
            // (0,) and (-1,) too.
            const bool one_element_axis =
                stage.axes.size() == 1 && (stage.axes[0] == 0 || stage.axes[0] == -1);
            const bool zero_d_axis = ndim == 0 && one_element_axis &&
                                     (stage.reduce == ReduceKind::logsumexp ||
                                      (stage.axis_int && stage.reduce != ReduceKind::mean));
            if (stage.all_axes || zero_d_axis) {
                std::fill(g.reduced.begin(), g.reduced.end(), 1);
            } else {
                for (int axis : stage.axes) {
                    const int a = axis < 0 ? axis + ndim : axis;
                    if (a < 0 || a >= ndim) {
                        value_error("axis " + std::to_string(axis) +
                                    " is out of bounds for array of dimension " +
                                    std::to_string(ndim));
                    }
                    if (g.reduced[a]) value_error("duplicate value in 'axis'");
                    g.reduced[a] = 1;
                }
            }
            for (int k = 0; k < ndim; ++k) {
                if (!g.reduced[k]) {
                    g.out_shape.push_back(g.iteration[k]);
                } else if (stage.keepdims) {
                    g.out_shape.push_back(1);
                }
            }
        }
        geometry.push_back(std::move(g));
    }
    return geometry;
}

std::vector<std::ptrdiff_t> contiguous_strides(const Shape& shape, std::size_t item) {
    std::vector<std::ptrdiff_t> strides(shape.size());
    auto step = static_cast<std::ptrdiff_t>(item);
    for (std::size_t k = shape.size(); k-- > 0;) {
        strides[k] = step;
        step *= shape[k];
    }
    return strides;
}

}  // namespace numfuse::expr::vm
