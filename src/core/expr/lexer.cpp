// Tokenizer (lexer.hpp).
#include "expr/lexer.hpp"

#include <cctype>
#include <cstring>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "expr/expr.hpp"

namespace numfuse::expr::detail {

void syntax_error(const std::string& message, int column) {
    throw ExprError(ErrorKind::syntax, message, column);
}

namespace {

bool is_name_start(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_name_char(char c) noexcept { return is_name_start(c) || is_digit(c); }

// Python keywords: none of them means anything here, and several are the
// first word of code-injection payloads (lambda, import, ...). True/False and
// None are handled by the parser itself.
const std::unordered_set<std::string>& python_keywords() {
    static const std::unordered_set<std::string> words = {
        "and",    "as",   "assert", "async",  "await",  "break",   "class",    "continue",
        "def",    "del",  "elif",   "else",   "except", "finally", "for",      "from",
        "global", "if",   "import", "in",     "is",     "lambda",  "nonlocal", "not",
        "or",     "pass", "raise",  "return", "try",    "while",   "with",     "yield"};
    return words;
}

class Lexer {
public:
    explicit Lexer(const std::string& text) : text_(text) {}

    std::vector<Token> tokenize() {
        std::vector<Token> tokens;
        tokens.reserve(text_.size() / 2 + 2);  // no regrowth: ~1 token per 2-4 characters
        const std::size_t n = text_.size();
        std::size_t i = 0;
        while (true) {
            while (i < n &&
                   (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' || text_[i] == '\r')) {
                ++i;
            }
            if (i >= n) break;
            const char c = text_[i];
            const int column = static_cast<int>(i);
            if (is_digit(c) || (c == '.' && i + 1 < n && is_digit(text_[i + 1]))) {
                i = scan_number(i, tokens);
            } else if (is_name_start(c)) {
                std::size_t j = i;
                while (j < n && is_name_char(text_[j])) ++j;
                std::string word = text_.substr(i, j - i);
                if (word.size() >= 2 && word[0] == '_' && word[1] == '_') {
                    syntax_error("names starting with '__' are not allowed: '" + word + "'",
                                 column);
                }
                // (every keyword is 2-8 lowercase letters: most names skip the lookup)
                if (word.size() >= 2 && word.size() <= 8 && word[0] >= 'a' && word[0] <= 'y' &&
                    python_keywords().count(word)) {
                    if (word == "and" || word == "or" || word == "not") {
                        syntax_error("'" + word +
                                         "' is not supported; use '&', '|' or '~' on "
                                         "boolean arrays",
                                     column);
                    }
                    syntax_error("the keyword '" + word + "' is not allowed in an expression",
                                 column);
                }
                // A string prefix like b'..' or r".." starts a string literal.
                if (j < n && (text_[j] == '\'' || text_[j] == '"')) {
                    i = scan_string(word, j, column, tokens);
                    continue;
                }
                tokens.push_back({TokenKind::name, std::move(word), column});
                i = j;
            } else if (c == '\'' || c == '"') {
                i = scan_string("", i, column, tokens);
            } else {
                const std::size_t length = operator_length(i);
                if (length == 0) {
                    if (c == '[') syntax_error("subscripts are not supported", column);
                    if (c == ':') syntax_error("':' is not allowed (no lambdas or slices)", column);
                    if (static_cast<unsigned char>(c) >= 0x80) {
                        syntax_error("only ASCII characters are allowed", column);
                    }
                    syntax_error(std::string("unexpected character '") + c + "'", column);
                }
                Token token{TokenKind::op, text_.substr(i, length), column, 0};
                token.op = op_code(token.text.c_str());
                tokens.push_back(std::move(token));
                i += length;
            }
        }
        tokens.push_back({TokenKind::end, "", static_cast<int>(n)});
        return tokens;
    }

private:
    // The length of the operator at `i` (2 for "**", "//", "<<", ">>", "<=", ">=", "==",
    // "!="; 1 for the single-character ones), 0 when no operator starts there.
    std::size_t operator_length(std::size_t i) const noexcept {
        const char c = text_[i];
        const char d = i + 1 < text_.size() ? text_[i + 1] : '\0';
        switch (c) {
            case '*':
            case '/': return d == c ? 2 : 1;
            case '<':
            case '>': return d == c || d == '=' ? 2 : 1;
            case '=':
            case '!': return d == '=' ? 2 : (c == '=' ? 1 : 0);
            case '+':
            case '-':
            case '%':
            case '&':
            case '|':
            case '^':
            case '~':
            case '(':
            case ')':
            case ',':
            case '.': return 1;
            default: return 0;
        }
    }

    // Python's number literals: decimal integers, floats (1., .5, 1e-5),
    // imaginary (1.5j), hexadecimal/octal/binary integers; '_' separators.
    std::size_t scan_number(std::size_t i, std::vector<Token>& tokens) {
        const std::size_t n = text_.size();
        const std::size_t start = i;
        if (text_[i] == '0' && i + 1 < n && std::strchr("xXoObB", text_[i + 1]) != nullptr &&
            text_[i + 1] != '\0') {
            i += 2;
            while (i < n &&
                   (std::isxdigit(static_cast<unsigned char>(text_[i])) || text_[i] == '_'))
                ++i;
        } else {
            while (i < n && (is_digit(text_[i]) || text_[i] == '_')) ++i;
            if (i < n && text_[i] == '.') {
                ++i;
                while (i < n && (is_digit(text_[i]) || text_[i] == '_')) ++i;
            }
            if (i < n && (text_[i] == 'e' || text_[i] == 'E')) {
                std::size_t j = i + 1;
                if (j < n && (text_[j] == '+' || text_[j] == '-')) ++j;
                if (j < n && is_digit(text_[j])) {
                    i = j;
                    while (i < n && (is_digit(text_[i]) || text_[i] == '_')) ++i;
                } else {
                    syntax_error("invalid number literal", static_cast<int>(start));
                }
            }
            if (i < n && (text_[i] == 'j' || text_[i] == 'J')) ++i;
        }
        if (i < n && is_name_char(text_[i])) {
            syntax_error("invalid number literal", static_cast<int>(start));
        }
        tokens.push_back(
            {TokenKind::number, text_.substr(start, i - start), static_cast<int>(start)});
        return i;
    }

    // A string literal whose prefix (letters before the quote) is `prefix`
    // and whose opening quote is at `i` becomes a bytes token: bytes literals
    // (b'..', rb'..', with Python's escapes unless raw) as Python reads them;
    // str literals ('..', r'..', u'..') as numexpr reads them, encoded to ASCII,
    // so that a str literal holding anything else (a character or escape above
    // 0x7f) is a syntax error that names the bytes literal to write (numexpr's
    // UnicodeEncodeError there is a ValueError, which numfuse.ExpressionError
    // also is). f-strings are a syntax error. Returns the index after the
    // closing quote.
    std::size_t scan_string(const std::string& prefix, std::size_t i, int column,
                            std::vector<Token>& tokens) {
        std::string lower;
        for (char ch : prefix) lower.push_back(static_cast<char>(ch | 0x20));
        const bool bytes = lower == "b" || lower == "rb" || lower == "br";
        const bool str = lower.empty() || lower == "r" || lower == "u";
        if (lower == "f" || lower == "rf" || lower == "fr") {
            syntax_error("f-strings are not supported", column);
        }
        if (!bytes && !str) syntax_error("invalid string prefix '" + prefix + "'", column);
        const char* const what = str ? "str literal" : "bytes literal";
        const auto non_ascii = [&](std::size_t at) {
            if (str) {
                syntax_error(
                    "str literals are encoded as ASCII (as numexpr does); for other text "
                    "write a bytes literal such as b'abc' with the encoding's bytes, e.g. "
                    "b'\\xc3\\xa9' for UTF-8 'e-acute'",
                    column);
            }
            syntax_error("bytes literals can only contain ASCII characters", static_cast<int>(at));
        };
        const bool raw = lower.find('r') != std::string::npos;
        const std::size_t n = text_.size();
        const char quote = text_[i];
        const bool triple = i + 2 < n && text_[i + 1] == quote && text_[i + 2] == quote;
        i += triple ? 3 : 1;
        std::string value;
        while (true) {
            if (i >= n) syntax_error(std::string("unterminated ") + what, column);
            const char ch = text_[i];
            if (ch == quote &&
                (!triple || (i + 2 < n && text_[i + 1] == quote && text_[i + 2] == quote))) {
                i += triple ? 3 : 1;
                break;
            }
            if (static_cast<unsigned char>(ch) >= 0x80) non_ascii(i);
            if ((ch == '\n' || ch == '\r') && !triple) {
                syntax_error(std::string("unterminated ") + what, column);
            }
            if (ch != '\\') {
                value.push_back(ch);
                ++i;
                continue;
            }
            if (i + 1 >= n) syntax_error(std::string("unterminated ") + what, column);
            const char e = text_[i + 1];
            if (raw) {
                // Raw: the backslash stays, and keeps the next character
                // (even a quote) from ending the literal.
                value.push_back('\\');
                value.push_back(e);
                i += 2;
                continue;
            }
            if (str && (e == 'u' || e == 'U' || e == 'N')) {
                i = scan_str_escape(i, value, non_ascii);
                continue;
            }
            const std::size_t at = i;
            i = scan_escape(i, value);
            // \x80-\xff and octal above 0177 are those code points in a str: not ASCII.
            if (str && !value.empty() && static_cast<unsigned char>(value.back()) >= 0x80) {
                non_ascii(at);
            }
        }
        tokens.push_back({TokenKind::bytes, std::move(value), column});
        return i;
    }

    // The escapes only str literals have, at the backslash at `i`: \uXXXX and
    // \UXXXXXXXX append their code point when it is ASCII (above 0x7f: non_ascii);
    // \N{name} is a syntax error. Returns the index after the escape.
    template <class NonAscii>
    std::size_t scan_str_escape(std::size_t i, std::string& value, const NonAscii& non_ascii) {
        const std::size_t n = text_.size();
        const char e = text_[i + 1];
        if (e == 'N') {
            syntax_error("\\N{...} escapes are not supported in str literals: write the character",
                         static_cast<int>(i));
        }
        const std::size_t digits = e == 'u' ? 4 : 8;
        unsigned long code = 0;
        for (std::size_t k = 0; k < digits; ++k) {
            const std::size_t j = i + 2 + k;
            const char h = j < n ? text_[j] : '\0';
            int d = -1;
            if (h >= '0' && h <= '9') d = h - '0';
            if (h >= 'a' && h <= 'f') d = h - 'a' + 10;
            if (h >= 'A' && h <= 'F') d = h - 'A' + 10;
            if (d < 0) {
                syntax_error(std::string("truncated \\") + e + " escape in a str literal",
                             static_cast<int>(i));
            }
            code = code * 16 + static_cast<unsigned long>(d);
        }
        if (code >= 0x80) non_ascii(i);
        value.push_back(static_cast<char>(code));
        return i + 2 + digits;
    }

    // Python's escapes in bytes literals, at the backslash at `i`; appends
    // the byte (if any) and returns the index after the escape.
    std::size_t scan_escape(std::size_t i, std::string& value) {
        const std::size_t n = text_.size();
        const char e = text_[i + 1];
        switch (e) {
            case '\n': return i + 2;  // line continuation
            case '\\': value.push_back('\\'); return i + 2;
            case '\'': value.push_back('\''); return i + 2;
            case '"': value.push_back('"'); return i + 2;
            case 'a': value.push_back('\a'); return i + 2;
            case 'b': value.push_back('\b'); return i + 2;
            case 'f': value.push_back('\f'); return i + 2;
            case 'n': value.push_back('\n'); return i + 2;
            case 'r': value.push_back('\r'); return i + 2;
            case 't': value.push_back('\t'); return i + 2;
            case 'v': value.push_back('\v'); return i + 2;
            case 'x': {
                auto hex = [](char h) -> int {
                    if (h >= '0' && h <= '9') return h - '0';
                    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
                    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
                    return -1;
                };
                const int hi = i + 2 < n ? hex(text_[i + 2]) : -1;
                const int lo = i + 3 < n ? hex(text_[i + 3]) : -1;
                if (hi < 0 || lo < 0) {
                    syntax_error("invalid \\x escape in a bytes literal", static_cast<int>(i));
                }
                value.push_back(static_cast<char>(hi * 16 + lo));
                return i + 4;
            }
            default: break;
        }
        if (e >= '0' && e <= '7') {
            int code = 0;
            std::size_t j = i + 1;
            for (int digits = 0; digits < 3 && j < n && text_[j] >= '0' && text_[j] <= '7';
                 ++digits, ++j) {
                code = code * 8 + (text_[j] - '0');
            }
            if (code > 0377) {
                syntax_error("octal escape out of range in a bytes literal", static_cast<int>(i));
            }
            value.push_back(static_cast<char>(code));
            return j;
        }
        // Unknown escapes keep their backslash, as in Python.
        value.push_back('\\');
        return i + 1;
    }

    const std::string& text_;
};

}  // namespace

std::vector<Token> tokenize(const std::string& text) {
    Lexer lexer(text);
    return lexer.tokenize();
}

}  // namespace numfuse::expr::detail
