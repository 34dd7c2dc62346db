// The expression engine driven from C++ with raw pointers (no Python): parse
// errors and their columns, type rules, CSE/folding visible in the bytecode,
// every usable instruction-set level, block edges, strided/broadcast inputs,
// staged reductions and their thread-count independence.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "expr/expr.hpp"
#include "numfuse_core.hpp"
#include "parallel.hpp"

namespace {

using numfuse::expr::ArrayView;
using numfuse::expr::ErrorKind;
using numfuse::expr::ExprError;
using numfuse::expr::InputSpec;
using numfuse::expr::Type;

ArrayView view_of(std::vector<double>& v, std::vector<std::ptrdiff_t> shape = {}) {
    ArrayView a;
    a.data = reinterpret_cast<char*>(v.data());
    a.type = Type::d;
    a.shape =
        shape.empty() ? std::vector<std::ptrdiff_t>{static_cast<std::ptrdiff_t>(v.size())} : shape;
    a.strides.resize(a.shape.size());
    std::ptrdiff_t step = sizeof(double);
    for (std::size_t k = a.shape.size(); k-- > 0;) {
        a.strides[k] = step;
        step *= a.shape[k];
    }
    return a;
}

std::vector<double> run(const std::string& text, std::vector<std::vector<double>*> inputs,
                        std::vector<std::vector<std::ptrdiff_t>> shapes = {}) {
    std::vector<InputSpec> specs;
    std::vector<ArrayView> views;
    std::vector<std::vector<std::ptrdiff_t>> all_shapes;
    const char* names[] = {"x", "y", "z"};
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        specs.push_back({names[k], Type::d, false});
        views.push_back(
            view_of(*inputs[k], k < shapes.size() ? shapes[k] : std::vector<std::ptrdiff_t>{}));
        all_shapes.push_back(views.back().shape);
    }
    auto plan = numfuse::expr::compile_plan(text, specs);
    const auto shape = numfuse::expr::result_shape(*plan, all_shapes);
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    std::vector<double> out(n);
    ArrayView o = view_of(out, shape.empty() ? std::vector<std::ptrdiff_t>{1} : shape);
    o.shape = shape;
    o.strides.resize(shape.size());
    numfuse::expr::execute(*plan, views, o);
    return out;
}

TEST(ExprParser, ErrorsCarryKindAndColumn) {
    try {
        numfuse::expr::expression_names("a + * b");
        FAIL();
    } catch (const ExprError& e) {
        EXPECT_EQ(e.kind, ErrorKind::syntax);
        EXPECT_EQ(e.column, 4);
    }
    EXPECT_THROW(numfuse::expr::expression_names("__import__('os')"), ExprError);
    EXPECT_THROW(numfuse::expr::expression_names("a.__class__"), ExprError);
    EXPECT_THROW(numfuse::expr::expression_names("a[0]"), ExprError);
    EXPECT_THROW(numfuse::expr::expression_names("lambda: 1"), ExprError);
    try {
        numfuse::expr::expression_names(std::string(100000, '(') + "1");
        FAIL();
    } catch (const ExprError& e) {
        EXPECT_EQ(e.kind, ErrorKind::value);
    }
    const auto names = numfuse::expr::expression_names("sin(b) + a*b + sum(c, axis=1)");
    EXPECT_EQ(names, (std::vector<std::string>{"b", "a", "c"}));
}

// A text is parsed once for its names and its compile (parse_cached): the names, the
// plan and the errors are those of a fresh parse, whichever comes first.
TEST(ExprParser, RepeatedTextsGiveTheSameNamesPlansAndErrors) {
    for (int round = 0; round < 3; ++round) {
        try {
            numfuse::expr::expression_names("a + * b");
            FAIL();
        } catch (const ExprError& e) {
            EXPECT_EQ(e.kind, ErrorKind::syntax);
            EXPECT_EQ(e.column, 4);
        }
        const std::string text = "where(x >= 1, x ** 2 // 3 % 2, -x) << 0 != (y | 1 ^ 2 & 3) + y";
        EXPECT_EQ(numfuse::expr::expression_names(text), (std::vector<std::string>{"x", "y"}));
        const auto plan =
            numfuse::expr::compile_plan(text, {{"x", Type::l, false}, {"y", Type::l, false}});
        EXPECT_EQ(plan->result_type, Type::b);
    }
    // Every operator, one and two characters, next to its neighbours without spaces.
    std::vector<double> x = {3.0, -2.0};
    EXPECT_EQ(run("x**2//1%5*x/x-+x", {&x}), (std::vector<double>{1.0, 6.0}));
    EXPECT_EQ(run("where((x<=2)&(x>=-1)|(x==0)^(x!=3)|(x<x)|(x>x),x,-x)", {&x}),
              (std::vector<double>{-3.0, -2.0}));
    for (const char* bad : {"x ! 1", "x = 1", "x === 1", "x <> 1", "x ** * 1"}) {
        EXPECT_THROW(numfuse::expr::expression_names(bad), ExprError) << bad;
    }
}

TEST(ExprCompiler, TypesFoldingAndCse) {
    auto plan = numfuse::expr::compile_plan("sin(x)*sin(x) + (2+3)*x", {{"x", Type::f, false}});
    EXPECT_EQ(plan->result_type, Type::f);  // weak Python scalars keep float32
    int sines = 0;
    for (const auto& line : numfuse::expr::disassemble(*plan)) sines += line.opcode == "sin_ff";
    EXPECT_EQ(sines, 1);
    EXPECT_EQ(numfuse::expr::compile_plan("x + y", {{"x", Type::i, false}, {"y", Type::f, false}})
                  ->result_type,
              Type::d);
    try {
        numfuse::expr::compile_plan("x + 1", {});
        FAIL();
    } catch (const ExprError& e) {
        EXPECT_EQ(e.kind, ErrorKind::name);
    }
}

TEST(ExprVm, EveryLevelEveryBlockEdge) {
    const auto previous = numfuse::core::active_level();
    for (const auto level : numfuse::core::usable_levels()) {
        numfuse::core::set_active_level(level);
        for (std::size_t n : {0u, 1u, 7u, 2047u, 2048u, 2049u, 10000u}) {
            std::vector<double> x(n), y(n);
            std::iota(x.begin(), x.end(), -3.0);
            std::iota(y.begin(), y.end(), 1.0);
            const auto r = run("2*x + y*y - exp(x/1000)", {&x, &y});
            for (std::size_t k = 0; k < n; ++k) {
                const double expected = 2 * x[k] + y[k] * y[k] - std::exp(x[k] / 1000);
                EXPECT_NEAR(r[k], expected, 1e-12 * std::fabs(expected) + 1e-300)
                    << numfuse::core::level_name(level) << " n=" << n << " k=" << k;
            }
        }
    }
    numfuse::core::set_active_level(previous);
}

TEST(ExprVm, BroadcastAndStagedReductions) {
    std::vector<double> x(6 * 5);
    std::iota(x.begin(), x.end(), 0.0);
    std::vector<double> y = {1, 2, 3, 4, 5};
    const auto b = run("x + y", {&x, &y}, {{6, 5}, {5}});
    EXPECT_EQ(b[7], x[7] + y[2]);
    const auto s = run("sum(x, axis=0)", {&x}, {{6, 5}});
    ASSERT_EQ(s.size(), 5u);
    EXPECT_EQ(s[1], 1 + 6 + 11 + 16 + 21 + 26);
    const auto soft =
        run("exp(x - max(x, axis=1, keepdims=True)) / "
            "sum(exp(x - max(x, axis=1, keepdims=True)), axis=1, keepdims=True)",
            {&x}, {{6, 5}});
    for (int row = 0; row < 6; ++row) {
        double total = 0;
        for (int col = 0; col < 5; ++col) total += soft[row * 5 + col];
        EXPECT_NEAR(total, 1.0, 1e-15);
    }
}

// Plan::reuse: softmax's exp(x - max) is stored by its sum's stage and read back by the
// final stage (no exp there); layer_norm's x - mean is too cheap to store.
TEST(ExprCompiler, ReusesCostlyReducedValues) {
    const std::string softmax =
        "exp(x - max(x, axis=1, keepdims=True)) / "
        "sum(exp(x - max(x, axis=1, keepdims=True)), axis=1, keepdims=True)";
    const auto plan = numfuse::expr::compile_plan(softmax, {{"x", Type::d, false}});
    ASSERT_EQ(plan->stages.size(), 3u);
    EXPECT_EQ(plan->reuse_stage, 1);
    bool reads_output = false;
    for (const auto& in : plan->reuse_last.inputs) reads_output |= in.from_output;
    EXPECT_TRUE(reads_output);
    for (const auto& ins : plan->reuse_last.program.code) {
        EXPECT_STRNE(numfuse::expr::opcode_name(ins.op), "exp_dd");
    }
    const auto layer_norm = numfuse::expr::compile_plan(
        "(x - mean(x, axis=1, keepdims=True)) / "
        "sqrt(mean((x - mean(x, axis=1, keepdims=True))**2, axis=1, keepdims=True) + 1e-5)",
        {{"x", Type::d, false}});
    EXPECT_EQ(layer_norm->reuse_stage, -1);

    // Stored or recomputed (the result overlapping the input), the same bits.
    std::vector<double> x(6 * 50);
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = std::sin(static_cast<double>(k)) * 9;
    const auto stored = run(softmax, {&x}, {{6, 50}});
    std::vector<double> aliased = x;
    ArrayView view = view_of(aliased, {6, 50});
    numfuse::expr::execute(*plan, {view}, view);
    ASSERT_EQ(stored.size(), aliased.size());
    EXPECT_EQ(std::memcmp(stored.data(), aliased.data(), x.size() * sizeof(double)), 0);
}

TEST(ExprVm, ReductionsIndependentOfThreadCount) {
    std::vector<double> x(300001);
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = std::sin(static_cast<double>(k));
    const int previous = numfuse::parallel::thread_count();
    numfuse::parallel::set_thread_count(1);
    const auto one = run("sum(exp(x))", {&x});
    numfuse::parallel::set_thread_count(3);
    const auto three = run("sum(exp(x))", {&x});
    numfuse::parallel::set_thread_count(previous);
    EXPECT_EQ(std::memcmp(one.data(), three.data(), sizeof(double)), 0);
}

}  // namespace

// Byte strings through the core API: an S3 array (one element per 3 bytes,
// walked backwards) against a literal, NumPy's order (unsigned, NUL-padded)
// and contains(); a view whose element size differs from the plan's is refused.
namespace {

std::vector<bool> run_bytes(const std::string& text, std::string& data, std::size_t item,
                            std::ptrdiff_t stride) {
    const std::size_t n = data.size() / item;
    InputSpec spec{"s", Type::s, false, item};
    auto plan = numfuse::expr::compile_plan(text, {spec});
    ArrayView s;
    s.type = Type::s;
    s.item = item;
    s.data = stride < 0 ? &data[data.size() - item] : &data[0];
    s.shape = {static_cast<std::ptrdiff_t>(n)};
    s.strides = {stride};
    std::vector<char> out(n);
    ArrayView o;
    o.type = Type::b;
    o.data = out.data();
    o.shape = s.shape;
    o.strides = {1};
    numfuse::expr::execute(*plan, {s}, o);
    return std::vector<bool>(out.begin(), out.end());
}

}  // namespace

TEST(Expr, BytesComparisonsAndContains) {
    std::string data("ab\0abc\xff\0\0\0\0\0", 12);  // "ab", "abc", "\xff", ""
    const std::ptrdiff_t forward = 3, backward = -3;
    EXPECT_EQ(run_bytes("s == b'ab\\x00\\x00'", data, 3, forward),
              (std::vector<bool>{true, false, false, false}));
    EXPECT_EQ(run_bytes("s < b'abc'", data, 3, forward),
              (std::vector<bool>{true, false, false, true}));
    EXPECT_EQ(run_bytes("s > b'b'", data, 3, backward),
              (std::vector<bool>{false, true, false, false}));
    EXPECT_EQ(run_bytes("contains(s, b'b')", data, 3, forward),
              (std::vector<bool>{true, true, false, false}));
    EXPECT_EQ(run_bytes("contains(b'xabcx', s)", data, 3, forward),
              (std::vector<bool>{true, true, false, true}));
    try {
        auto plan = numfuse::expr::compile_plan("s == b'a'", {{"s", Type::s, false, 3}});
        ArrayView s;
        s.type = Type::s;
        s.item = 4;
        s.data = &data[0];
        s.shape = {3};
        s.strides = {4};
        std::vector<char> out(3);
        ArrayView o;
        o.type = Type::b;
        o.data = out.data();
        o.shape = {3};
        o.strides = {1};
        numfuse::expr::execute(*plan, {s}, o);
        FAIL() << "an element size other than the plan's was accepted";
    } catch (const ExprError& e) {
        EXPECT_EQ(e.kind, ErrorKind::type);
    }
}
