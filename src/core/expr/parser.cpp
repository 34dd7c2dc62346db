// Recursive-descent parser (grammar in parser.hpp; tokens from lexer.hpp).
#include "expr/parser.hpp"

#include <algorithm>
#include <iterator>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "expr/lexer.hpp"
#include "expr/suggest.hpp"
#include "functions.hpp"

namespace numfuse::expr::detail {
namespace {

// The math functions of the function table (functions.hpp) and the language's
// own element-wise functions, whose type rules the compiler writes out. Views of static
// names, the table sized up front: built at a process's first call of a function, where it
// used to be ~30k instructions of std::string nodes (numfuse.jit's first function).
const std::unordered_set<std::string_view>& elementwise_functions() {
    static const std::unordered_set<std::string_view> names = [] {
        static const char* const language[] = {
            "where",    "isinf",   "isnan", "isfinite",   "signbit",  "maximum",
            "minimum",  "fmod",    "sign",  "abs",        "conj",     "real",
            "imag",     "complex", "copy",  "ones_like",  "absolute", "negative",
            "contains", "pow",     "power", "float_power"};
        std::unordered_set<std::string_view> set;
        set.reserve(std::size(language) + std::size(core::function_table));
        for (const char* name : language) set.insert(name);
        for (const core::FunctionInfo& info : core::function_table) set.insert(info.name);
        return set;
    }();
    return names;
}

const std::unordered_set<std::string>& reduction_functions() {
    static const std::unordered_set<std::string> names = {"sum", "prod", "min",
                                                          "max", "mean", "logsumexp"};
    return names;
}

double rounded_integer(const std::string& digits, int base) {
    std::string text;
    if (base == 10) {
        text = digits;
    } else if (base == 16) {
        text = "0x" + digits;
    } else {
        const int bits_per_digit = base == 2 ? 1 : 3;
        std::string bits;
        for (char ch : digits) {
            const int d = ch - '0';
            for (int k = bits_per_digit - 1; k >= 0; --k) bits.push_back((d >> k) & 1 ? '1' : '0');
        }
        bits.insert(0, (4 - bits.size() % 4) % 4, '0');
        text = "0x";
        for (std::size_t k = 0; k < bits.size(); k += 4) {
            const int nibble = (bits[k] - '0') * 8 + (bits[k + 1] - '0') * 4 +
                               (bits[k + 2] - '0') * 2 + (bits[k + 3] - '0');
            text.push_back("0123456789abcdef"[nibble]);
        }
    }
    return std::strtod(text.c_str(), nullptr);  // HUGE_VAL (+inf) beyond float64
}

}  // namespace

AstNode number_node(const std::string& token, int column) {
    AstNode node;
    node.kind = NodeKind::number;
    node.column = column;
    std::string digits;
    for (char ch : token) {
        if (ch != '_') digits.push_back(ch);
    }
    const bool imaginary = !digits.empty() && (digits.back() == 'j' || digits.back() == 'J');
    const bool radix =
        digits.size() > 1 && digits[0] == '0' && std::strchr("xXoObB", digits[1]) != nullptr;
    const bool floating = !radix && digits.find_first_of(".eE") != std::string::npos;
    if (imaginary) {
        digits.pop_back();
        node.number_type = Type::z;
        node.imag_value = std::strtod(digits.c_str(), nullptr);
    } else if (floating) {
        node.number_type = Type::d;
        node.real_value = std::strtod(digits.c_str(), nullptr);
    } else {
        int base = 10;
        std::size_t skip = 0;
        if (radix) {
            const char r = static_cast<char>(digits[1] | 0x20);
            base = r == 'x' ? 16 : (r == 'o' ? 8 : 2);
            skip = 2;
        }
        errno = 0;
        char* end = nullptr;
        const unsigned long long value = std::strtoull(digits.c_str() + skip, &end, base);
        if (*end != '\0' || end == digits.c_str() + skip) {
            syntax_error("invalid number literal", column);
        }
        if (errno == ERANGE ||
            value > static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max())) {
            // A Python int beyond int64: what NumPy does with it depends on what it
            // meets (the compiler's checks), so it is kept, rounded to float64.
            node.number_type = Type::d;
            node.big_int = true;
            node.real_value = rounded_integer(digits.substr(skip), base);
            // 2^63 exactly (int_value 1): its negative is int64's min.
            node.int_value = errno != ERANGE && value == 0x8000000000000000ULL ? 1 : 0;
        } else {
            node.number_type = Type::l;
            node.int_value = static_cast<std::int64_t>(value);
        }
    }
    return node;
}

namespace {

class Parser {
public:
    Parser(const std::string& text, std::vector<Token> tokens)
        : tokens_(std::move(tokens)),
          groups_(16, GroupHash{text.data()}, GroupEqual{text.data(), &compare_budget_}),
          compare_budget_(4 * text.size() + 4096) {
        // Each token's binary precedence, classified once: parse_binary asks it at every
        // one of the six levels after every operand (string compares were ~20% of a
        // 20-operation jit function's first call).
        levels_.reserve(tokens_.size());
        for (const Token& t : tokens_) levels_.push_back(precedence(t));
        // At most one node per token (each node takes a token of its own): no regrowth.
        ast_.nodes.reserve(tokens_.size());
        depths_.reserve(tokens_.size());
        // Each '(' token's matching ')' (-1: none; the parse reports it).
        closing_.assign(tokens_.size(), -1);
        std::vector<std::size_t> open;
        for (std::size_t k = 0; k < tokens_.size(); ++k) {
            if (tokens_[k].op == op_code("(")) {
                open.push_back(k);
            } else if (tokens_[k].op == op_code(")") && !open.empty()) {
                closing_[open.back()] = static_cast<int>(k);
                open.pop_back();
            }
        }
    }

    Ast parse() {
        ast_.root = parse_expression();
        if (peek().kind != TokenKind::end) {
            const Token& t = peek();
            if (t.text == ")") syntax_error("unmatched ')'", t.column);
            syntax_error("unexpected '" + t.text + "'", t.column);
        }
        return std::move(ast_);
    }

private:
    // Guards every recursive entry; deep input is a clean ValueError.
    struct DepthGuard {
        explicit DepthGuard(Parser& p) : parser(p) {
            if (++parser.depth_ > max_nesting_depth) {
                throw ExprError(
                    ErrorKind::value,
                    "expression nests too deeply (limit " + std::to_string(max_nesting_depth) + ")",
                    parser.peek().column);
            }
            if (parser.depth_ > parser.deepest_) parser.deepest_ = parser.depth_;
        }
        ~DepthGuard() { --parser.depth_; }
        Parser& parser;
    };

    const Token& peek(std::size_t ahead = 0) const {
        const std::size_t k = pos_ + ahead < tokens_.size() ? pos_ + ahead : tokens_.size() - 1;
        return tokens_[k];
    }
    int peek_level() const { return levels_[pos_ < levels_.size() ? pos_ : levels_.size() - 1]; }
    // Is the next token the operator `op`? One integer compare (Token::op).
    template <std::size_t N>
    bool at_op(const char (&op)[N]) const {
        static_assert(N == 2 || N == 3, "operators are one or two characters");
        return peek().op == op_code(op);
    }
    bool at_op_text(const char* op) const { return peek().op == op_code(op); }
    // tokens_ never changes after construction: references to it stay valid.
    const Token& next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
    void expect(const char* op, const char* what) {
        if (!at_op_text(op)) {
            const Token& t = peek();
            if (t.kind == TokenKind::end)
                syntax_error(std::string("expected ") + what + " before the end of the expression",
                             t.column);
            syntax_error(std::string("expected ") + what + ", got '" + t.text + "'", t.column);
        }
        next();
    }

    int add(AstNode node) {
        // Node depth bounds the compiler's recursion over the tree (a long
        // flat chain like a+a+...+a is built without recursion here).
        int depth = 1;
        for (int child : node.args) depth = std::max(depth, depths_[child] + 1);
        if (depth > max_tree_depth) {
            throw ExprError(ErrorKind::value,
                            "expression is too deeply nested (more than " +
                                std::to_string(max_tree_depth) + " levels of operations)",
                            node.column);
        }
        ast_.nodes.push_back(std::move(node));
        depths_.push_back(depth);
        return static_cast<int>(ast_.nodes.size() - 1);
    }

    int binary(NodeKind kind, const Token& op, int lhs, int rhs) {
        AstNode node;
        node.kind = kind;
        node.column = op.column;
        node.text = op.text;
        node.args = {lhs, rhs};
        return add(std::move(node));
    }

    static int precedence(const Token& t) noexcept {
        switch (t.op) {
            case op_code("|"): return 1;
            case op_code("^"): return 2;
            case op_code("&"): return 3;
            case op_code("<<"):
            case op_code(">>"): return 4;
            case op_code("+"):
            case op_code("-"): return 5;
            case op_code("*"):
            case op_code("/"):
            case op_code("//"):
            case op_code("%"): return 6;
            default: return -1;
        }
    }
    static bool is_compare(const Token& t) noexcept {
        switch (t.op) {
            case op_code("<"):
            case op_code("<="):
            case op_code(">"):
            case op_code(">="):
            case op_code("=="):
            case op_code("!="): return true;
            default: return false;
        }
    }

    struct Group {
        int node;     // the group's node
        int nesting;  // the parse depth the group reached, from where it started
    };
    struct GroupStart {
        int depth;
        int deepest;  // deepest_ before the group
    };

    // Repeated groups. Text written by a program (numfuse.jit's tracer writes a shared
    // subexpression out at every use) repeats parenthesized groups and calls: a group
    // whose characters were parsed before is that node again, and the parse moves past
    // it. The grammar and the tokens are context-free, so the same characters always
    // give the same tree; the tree becomes a DAG, which the compiler lowers once per node
    // (Compiler::compile_node). A group is hashed by its length and a few of its bytes,
    // and compared in full only against groups with the same hash: a budget linear in the
    // text's length bounds what those compares may cost (past it, groups are parsed as
    // they come, which is always correct).
    struct GroupSpan {
        std::size_t begin = 0, length = 0;  // characters of the text; length 0: none
    };
    struct GroupHash {
        const char* text;
        std::size_t operator()(const GroupSpan& g) const noexcept {
            const auto word = [&](std::size_t at) {
                std::uint64_t w = 0;
                std::memcpy(&w, text + g.begin + at, std::min<std::size_t>(8, g.length - at));
                return w;
            };
            std::uint64_t h = g.length * 0x9E3779B97F4A7C15ULL;
            for (const std::size_t at :
                 {std::size_t{0}, g.length / 2, g.length - std::min<std::size_t>(8, g.length)}) {
                h = (h ^ word(at)) * 0xBF58476D1CE4E5B9ULL;
                h ^= h >> 31;
            }
            return static_cast<std::size_t>(h);
        }
    };
    struct GroupEqual {
        const char* text;
        std::size_t* budget;
        bool operator()(const GroupSpan& a, const GroupSpan& b) const noexcept {
            if (a.length != b.length || a.length > *budget) return false;
            *budget -= a.length;
            return std::memcmp(text + a.begin, text + b.begin, a.length) == 0;
        }
    };

    // The characters from token `first` to the ')' closing the '(' at token `open`
    // (length 0 when unmatched: the parse then reports it).
    GroupSpan group_text(std::size_t first, std::size_t open) const {
        const int close = closing_[open];
        if (close < 0) return {};
        const auto begin = static_cast<std::size_t>(tokens_[first].column);
        const auto end = static_cast<std::size_t>(tokens_[static_cast<std::size_t>(close)].column);
        return GroupSpan{begin, end + 1 - begin};
    }
    // The node of an earlier group with these characters (the parse moves past the group
    // that opens at token `open`), else -1; also -1 where parsing the group here would
    // nest too deeply, so that the parse raises that error as it would without reuse.
    // Where it returns -1, the group's parse starts: remember_group ends it.
    int repeated_group(const GroupSpan& group, std::size_t open, GroupStart& start) {
        start = GroupStart{depth_, deepest_};
        deepest_ = depth_;
        if (group.length == 0) return -1;
        const auto found = groups_.find(group);
        if (found == groups_.end() || depth_ + found->second.nesting > max_nesting_depth) {
            return -1;
        }
        deepest_ = std::max(start.deepest, depth_ + found->second.nesting);
        pos_ = static_cast<std::size_t>(closing_[open]) + 1;
        return found->second.node;
    }
    void remember_group(const GroupSpan& group, int node, const GroupStart& start) {
        if (group.length != 0) groups_.emplace(group, Group{node, deepest_ - start.depth});
        deepest_ = std::max(deepest_, start.deepest);
    }

    int parse_expression() {
        DepthGuard guard(*this);
        int lhs = parse_binary(1);
        if (is_compare(peek())) {
            const Token& op = next();
            const int rhs = parse_binary(1);
            lhs = binary(NodeKind::compare, op, lhs, rhs);
            if (is_compare(peek())) {
                syntax_error("chained comparisons are not supported; combine them with '&'",
                             peek().column);
            }
        }
        if (at_op("=")) syntax_error("'=' is only allowed for keyword arguments", peek().column);
        return lhs;
    }

    // Left-associative levels by precedence climbing: iterative within a
    // level, recursive only across the six levels.
    int parse_binary(int level) {
        if (level > 6) return parse_unary();
        int lhs = parse_binary(level + 1);
        while (peek_level() == level) {
            const Token& op = next();
            const int rhs = parse_binary(level + 1);
            lhs = binary(NodeKind::binary, op, lhs, rhs);
        }
        return lhs;
    }

    int parse_unary() {
        DepthGuard guard(*this);
        if (at_op("-") || at_op("+") || at_op("~")) {
            const Token& op = next();
            const int operand = parse_unary();
            AstNode node;
            node.kind = NodeKind::unary;
            node.column = op.column;
            node.text = op.text;
            node.args = {operand};
            return add(std::move(node));
        }
        return parse_power();
    }

    int parse_power() {
        const int base = parse_postfix();
        if (at_op("**")) {
            const Token& op = next();
            const int exponent = parse_unary();
            return binary(NodeKind::binary, op, base, exponent);
        }
        return base;
    }

    int parse_postfix() {
        int value = parse_atom();
        while (true) {
            if (at_op(".")) {
                const Token& dot = next();
                const Token& attr = next();
                if (attr.kind != TokenKind::name || (attr.text != "real" && attr.text != "imag")) {
                    syntax_error("attribute access is not allowed (only .real and .imag)",
                                 dot.column);
                }
                AstNode node;
                node.kind = NodeKind::attribute;
                node.column = attr.column;
                node.text = attr.text;
                node.args = {value};
                value = add(std::move(node));
            } else if (at_op("(")) {
                syntax_error("only the functions of the expression language can be called",
                             peek().column);
            } else {
                return value;
            }
        }
    }

    int parse_atom() {
        const Token& t = peek();
        if (t.kind == TokenKind::number) {
            next();
            return add(number_node(t.text, t.column));
        }
        if (t.kind == TokenKind::bytes) {
            next();
            AstNode node;
            node.kind = NodeKind::bytes;
            node.column = t.column;
            node.text = t.text;
            return add(std::move(node));
        }
        if (t.kind == TokenKind::name) {
            next();
            if (at_op("(")) return call(t);
            if (t.text == "True" || t.text == "False") {
                AstNode node;
                node.kind = NodeKind::number;
                node.column = t.column;
                node.number_type = Type::b;
                node.int_value = t.text == "True" ? 1 : 0;
                return add(std::move(node));
            }
            if (t.text == "None") syntax_error("None is only allowed as axis=None", t.column);
            AstNode node;
            node.kind = NodeKind::name;
            node.column = t.column;
            node.text = t.text;
            return add(std::move(node));
        }
        if (at_op("(")) {
            const std::size_t open = pos_;
            const GroupSpan group = group_text(open, open);
            GroupStart start;
            const int known = repeated_group(group, open, start);
            if (known >= 0) return known;
            next();
            if (at_op(")"))
                syntax_error("empty parentheses (tuples are not supported)", peek().column);
            const int inner = parse_expression();
            if (at_op(",")) syntax_error("tuples are not supported", peek().column);
            expect(")", "')'");
            remember_group(group, inner, start);
            return inner;
        }
        if (t.kind == TokenKind::end) syntax_error("unexpected end of expression", t.column);
        syntax_error("unexpected '" + t.text + "'", t.column);
    }

    // The integer of these digits (base 2, 8, 10 or 16, no sign, no prefix) rounded to
    // the nearest float64 as Python's float(int) rounds it (to nearest, ties to even;
    // +inf where that raises): strtod rounds decimal and hexadecimal digits correctly, and
    // binary and octal digits are rewritten as hexadecimal first.
    // The call of `name` (the token before the current one, the '(').
    int call(const Token& name) {
        const std::size_t open = pos_;
        const GroupSpan group = group_text(open - 1, open);
        GroupStart start;
        const int known = repeated_group(group, open, start);
        if (known >= 0) return known;
        const int node = parse_call(name);
        remember_group(group, node, start);
        return node;
    }

    int parse_call(const Token& name) {
        const bool reduction = reduction_functions().count(name.text) != 0;
        if (!reduction && elementwise_functions().count(name.text) == 0) {
            std::unordered_set<std::string> known(reduction_functions().begin(),
                                                  reduction_functions().end());
            for (const std::string_view known_name : elementwise_functions()) {
                known.emplace(known_name);
            }
            syntax_error(unknown_function_message(name.text, known), name.column);
        }
        DepthGuard guard(*this);
        expect("(", "'('");
        AstNode node;
        node.kind = NodeKind::call;
        node.column = name.column;
        node.text = name.text;
        bool keywords_started = false;
        if (!at_op(")")) {
            while (true) {
                if (peek().kind == TokenKind::name && peek(1).op == op_code("=")) {
                    keywords_started = true;
                    keyword(node, reduction);
                } else {
                    if (keywords_started) {
                        syntax_error("positional argument after a keyword argument", peek().column);
                    }
                    node.args.push_back(parse_expression());
                }
                if (at_op(",")) {
                    next();
                    if (at_op(")")) break;  // trailing comma, as Python allows
                    continue;
                }
                break;
            }
        }
        expect(")", "')' or ','");
        return add(std::move(node));
    }

    // axis=None | int | -int | (int, ...) ; keepdims=True | False | 0 | 1
    void keyword(AstNode& node, bool reduction) {
        const Token& key = next();
        next();  // '='
        if (!reduction) {
            syntax_error("'" + node.text + "' takes no keyword arguments", key.column);
        }
        if (key.text == "axis") {
            if (node.axis_given) syntax_error("axis given twice", key.column);
            node.axis_given = true;
            if (peek().kind == TokenKind::name && peek().text == "None") {
                next();
                node.axis_none = true;
                return;
            }
            node.axis_none = false;
            if (at_op("(")) {
                next();
                while (!at_op(")")) {
                    node.axes.push_back(axis_integer());
                    if (!at_op(",")) break;
                    next();
                }
                expect(")", "')' closing the axis tuple");
            } else {
                node.axes.push_back(axis_integer());
                node.axis_int = true;
            }
        } else if (key.text == "keepdims") {
            const Token& value = next();
            if (value.text == "True" || value.text == "1") {
                node.keepdims = true;
            } else if (value.text == "False" || value.text == "0") {
                node.keepdims = false;
            } else {
                syntax_error("keepdims must be True or False", value.column);
            }
        } else {
            syntax_error("unknown keyword argument '" + key.text + "' (expected axis or keepdims)",
                         key.column);
        }
    }

    int axis_integer() {
        bool negative = false;
        if (at_op("-")) {
            next();
            negative = true;
        }
        const Token& t = next();
        if (t.kind != TokenKind::number ||
            t.text.find_first_not_of("0123456789") != std::string::npos || t.text.size() > 6) {
            syntax_error("axis must be an integer, a tuple of integers or None", t.column);
        }
        const int value = std::atoi(t.text.c_str());
        return negative ? -value : value;
    }

    static constexpr int max_tree_depth = 2000;

    std::vector<Token> tokens_;
    std::vector<int> levels_;  // precedence(tokens_[k]), parallel to tokens_
    std::vector<int> closing_;  // the ')' token matching each '(' token, else -1
    std::unordered_map<GroupSpan, Group, GroupHash, GroupEqual> groups_;  // by characters
    std::size_t compare_budget_;  // characters GroupEqual may still compare
    std::size_t pos_ = 0;
    int depth_ = 0;
    int deepest_ = 0;  // the largest depth_ since the innermost group being parsed began
    Ast ast_;
    std::vector<int> depths_;
};

}  // namespace

bool is_function_name(const std::string& name) noexcept {
    return elementwise_functions().count(name) != 0 || reduction_functions().count(name) != 0;
}

bool is_reduction_name(const std::string& name) noexcept {
    return reduction_functions().count(name) != 0;
}

Ast parse_expression(const std::string& text) {
    if (text.size() > max_expression_length) {
        throw ExprError(ErrorKind::value, "expression is too long (" + std::to_string(text.size()) +
                                              " characters; the limit is " +
                                              std::to_string(max_expression_length) + ")");
    }
    Parser parser(text, tokenize(text));
    return parser.parse();
}

std::shared_ptr<const Ast> parse_cached(const std::string& text) {
    // A handful of entries, most recent first, compared by length then bytes: a lookup
    // costs less than hashing the text would.
    constexpr std::size_t entries = 4;
    constexpr std::size_t longest = 32768;
    struct Entry {
        std::string text;
        std::shared_ptr<const Ast> ast;
    };
    static std::mutex mutex;
    static std::vector<Entry> recent;
    if (text.size() <= longest) {
        const std::lock_guard<std::mutex> lock(mutex);
        for (std::size_t k = 0; k < recent.size(); ++k) {
            if (recent[k].text == text) {
                std::rotate(recent.begin(), recent.begin() + static_cast<std::ptrdiff_t>(k),
                            recent.begin() + static_cast<std::ptrdiff_t>(k) + 1);
                return recent.front().ast;
            }
        }
    }
    auto ast = std::make_shared<const Ast>(parse_expression(text));
    if (text.size() <= longest) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (recent.size() == entries) recent.pop_back();
        recent.insert(recent.begin(), Entry{text, ast});
    }
    return ast;
}

}  // namespace numfuse::expr::detail
