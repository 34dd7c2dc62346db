// The expression engine's one opcode table.
//
// Each row: X(name, Functor, result, arg1, arg2, arg3). Types are one-letter
// codes (b bool, i int32, l int64, f float32, d float64, c complex64,
// z complex128, s bytes, w bytes widths; n none). This list generates the Opcode enum (expr.hpp),
// the per-level kernel tables (arch/expr_ops.hpp: the VM's dispatch) and the names
// `numfuse.disassemble` shows. The compiler never names an opcode directly: it builds
// "<family>_<result><args>" from the operand types and looks the name up, so a missing row is a
// clean "not supported for these types" error rather than a silent wrong kernel.
//
// Byte strings (s) appear only in the comparisons and contains(): rows
// <family>_bssw, whose third operand w is a constant holding the two
// operands' element sizes (BytesWidths, kernel_table.hpp).
//
// Casts are named cast_<to><from>. The math functions' rows come from the
// function table (functions.hpp): each row expands by its type rule, e.g.
// exp (float_complex) into exp_ff, exp_dd, exp_cc, exp_zz.
#pragma once

#include "functions.hpp"

// clang-format off
#define NUMFUSE_EXPR_OPCODES(X) \
    X(add_iii,       Add,           i, i, i, n) \
    X(add_lll,       Add,           l, l, l, n) \
    X(add_fff,       Add,           f, f, f, n) \
    X(add_ddd,       Add,           d, d, d, n) \
    X(add_ccc,       Add,           c, c, c, n) \
    X(add_zzz,       Add,           z, z, z, n) \
    X(sub_iii,       Sub,           i, i, i, n) \
    X(sub_lll,       Sub,           l, l, l, n) \
    X(sub_fff,       Sub,           f, f, f, n) \
    X(sub_ddd,       Sub,           d, d, d, n) \
    X(sub_ccc,       Sub,           c, c, c, n) \
    X(sub_zzz,       Sub,           z, z, z, n) \
    X(mul_iii,       Mul,           i, i, i, n) \
    X(mul_lll,       Mul,           l, l, l, n) \
    X(mul_fff,       Mul,           f, f, f, n) \
    X(mul_ddd,       Mul,           d, d, d, n) \
    X(mul_ccc,       Mul,           c, c, c, n) \
    X(mul_zzz,       Mul,           z, z, z, n) \
    X(div_fff,       Div,           f, f, f, n) \
    X(div_ddd,       Div,           d, d, d, n) \
    X(div_ccc,       Div,           c, c, c, n) \
    X(div_zzz,       Div,           z, z, z, n) \
    X(floordiv_iii,  FloorDiv,      i, i, i, n) \
    X(floordiv_lll,  FloorDiv,      l, l, l, n) \
    X(floordiv_fff,  FloorDiv,      f, f, f, n) \
    X(floordiv_ddd,  FloorDiv,      d, d, d, n) \
    X(mod_iii,       Mod,           i, i, i, n) \
    X(mod_lll,       Mod,           l, l, l, n) \
    X(mod_fff,       Mod,           f, f, f, n) \
    X(mod_ddd,       Mod,           d, d, d, n) \
    X(pow_iii,       Pow,           i, i, i, n) \
    X(pow_lll,       Pow,           l, l, l, n) \
    X(pow_fff,       Pow,           f, f, f, n) \
    X(pow_ddd,       Pow,           d, d, d, n) \
    X(pow_ccc,       Pow,           c, c, c, n) \
    X(pow_zzz,       Pow,           z, z, z, n) \
    X(fmod_iii,      Fmod,          i, i, i, n) \
    X(fmod_lll,      Fmod,          l, l, l, n) \
    X(fmod_fff,      Fmod,          f, f, f, n) \
    X(fmod_ddd,      Fmod,          d, d, d, n) \
    X(maximum_bbb,   Maximum,       b, b, b, n) \
    X(maximum_iii,   Maximum,       i, i, i, n) \
    X(maximum_lll,   Maximum,       l, l, l, n) \
    X(maximum_fff,   Maximum,       f, f, f, n) \
    X(maximum_ddd,   Maximum,       d, d, d, n) \
    X(maximum_ccc,   Maximum,       c, c, c, n) \
    X(maximum_zzz,   Maximum,       z, z, z, n) \
    X(minimum_bbb,   Minimum,       b, b, b, n) \
    X(minimum_iii,   Minimum,       i, i, i, n) \
    X(minimum_lll,   Minimum,       l, l, l, n) \
    X(minimum_fff,   Minimum,       f, f, f, n) \
    X(minimum_ddd,   Minimum,       d, d, d, n) \
    X(minimum_ccc,   Minimum,       c, c, c, n) \
    X(minimum_zzz,   Minimum,       z, z, z, n) \
    X(lshift_iii,    Lshift,        i, i, i, n) \
    X(lshift_lll,    Lshift,        l, l, l, n) \
    X(rshift_iii,    Rshift,        i, i, i, n) \
    X(rshift_lll,    Rshift,        l, l, l, n) \
    X(and_bbb,       BitAnd,        b, b, b, n) \
    X(and_iii,       BitAnd,        i, i, i, n) \
    X(and_lll,       BitAnd,        l, l, l, n) \
    X(or_bbb,        BitOr,         b, b, b, n) \
    X(or_iii,        BitOr,         i, i, i, n) \
    X(or_lll,        BitOr,         l, l, l, n) \
    X(xor_bbb,       BitXor,        b, b, b, n) \
    X(xor_iii,       BitXor,        i, i, i, n) \
    X(xor_lll,       BitXor,        l, l, l, n) \
    X(neg_ii,        Neg,           i, i, n, n) \
    X(neg_ll,        Neg,           l, l, n, n) \
    X(neg_ff,        Neg,           f, f, n, n) \
    X(neg_dd,        Neg,           d, d, n, n) \
    X(neg_cc,        Neg,           c, c, n, n) \
    X(neg_zz,        Neg,           z, z, n, n) \
    X(invert_bb,     Invert,        b, b, n, n) \
    X(invert_ii,     Invert,        i, i, n, n) \
    X(invert_ll,     Invert,        l, l, n, n) \
    X(sign_ii,       Sign,          i, i, n, n) \
    X(sign_ll,       Sign,          l, l, n, n) \
    X(sign_ff,       Sign,          f, f, n, n) \
    X(sign_dd,       Sign,          d, d, n, n) \
    X(sign_cc,       Sign,          c, c, n, n) \
    X(sign_zz,       Sign,          z, z, n, n) \
    X(abs_ii,        Abs,           i, i, n, n) \
    X(abs_ll,        Abs,           l, l, n, n) \
    X(abs_ff,        Abs,           f, f, n, n) \
    X(abs_dd,        Abs,           d, d, n, n) \
    X(abs_fc,        Abs,           f, c, n, n) \
    X(abs_dz,        Abs,           d, z, n, n) \
    X(conj_cc,       Conj,          c, c, n, n) \
    X(conj_zz,       Conj,          z, z, n, n) \
    X(real_fc,       Real,          f, c, n, n) \
    X(real_dz,       Real,          d, z, n, n) \
    X(imag_fc,       Imag,          f, c, n, n) \
    X(imag_dz,       Imag,          d, z, n, n) \
    X(complex_cff,   Complex,       c, f, f, n) \
    X(complex_zdd,   Complex,       z, d, d, n) \
    X(copy_bb,       Copy,          b, b, n, n) \
    X(copy_ii,       Copy,          i, i, n, n) \
    X(copy_ll,       Copy,          l, l, n, n) \
    X(copy_ff,       Copy,          f, f, n, n) \
    X(copy_dd,       Copy,          d, d, n, n) \
    X(copy_cc,       Copy,          c, c, n, n) \
    X(copy_zz,       Copy,          z, z, n, n) \
    X(oneslike_bb,   OnesLike,      b, b, n, n) \
    X(oneslike_ii,   OnesLike,      i, i, n, n) \
    X(oneslike_ll,   OnesLike,      l, l, n, n) \
    X(oneslike_ff,   OnesLike,      f, f, n, n) \
    X(oneslike_dd,   OnesLike,      d, d, n, n) \
    X(oneslike_cc,   OnesLike,      c, c, n, n) \
    X(oneslike_zz,   OnesLike,      z, z, n, n) \
    X(lt_bbb,        Less,          b, b, b, n) \
    X(lt_bii,        Less,          b, i, i, n) \
    X(lt_bll,        Less,          b, l, l, n) \
    X(lt_bff,        Less,          b, f, f, n) \
    X(lt_bdd,        Less,          b, d, d, n) \
    X(lt_bcc,        Less,          b, c, c, n) \
    X(lt_bzz,        Less,          b, z, z, n) \
    X(le_bbb,        LessEqual,     b, b, b, n) \
    X(le_bii,        LessEqual,     b, i, i, n) \
    X(le_bll,        LessEqual,     b, l, l, n) \
    X(le_bff,        LessEqual,     b, f, f, n) \
    X(le_bdd,        LessEqual,     b, d, d, n) \
    X(le_bcc,        LessEqual,     b, c, c, n) \
    X(le_bzz,        LessEqual,     b, z, z, n) \
    X(gt_bbb,        Greater,       b, b, b, n) \
    X(gt_bii,        Greater,       b, i, i, n) \
    X(gt_bll,        Greater,       b, l, l, n) \
    X(gt_bff,        Greater,       b, f, f, n) \
    X(gt_bdd,        Greater,       b, d, d, n) \
    X(gt_bcc,        Greater,       b, c, c, n) \
    X(gt_bzz,        Greater,       b, z, z, n) \
    X(ge_bbb,        GreaterEqual,  b, b, b, n) \
    X(ge_bii,        GreaterEqual,  b, i, i, n) \
    X(ge_bll,        GreaterEqual,  b, l, l, n) \
    X(ge_bff,        GreaterEqual,  b, f, f, n) \
    X(ge_bdd,        GreaterEqual,  b, d, d, n) \
    X(ge_bcc,        GreaterEqual,  b, c, c, n) \
    X(ge_bzz,        GreaterEqual,  b, z, z, n) \
    X(eq_bbb,        Equal,         b, b, b, n) \
    X(eq_bii,        Equal,         b, i, i, n) \
    X(eq_bll,        Equal,         b, l, l, n) \
    X(eq_bff,        Equal,         b, f, f, n) \
    X(eq_bdd,        Equal,         b, d, d, n) \
    X(eq_bcc,        Equal,         b, c, c, n) \
    X(eq_bzz,        Equal,         b, z, z, n) \
    X(ne_bbb,        NotEqual,      b, b, b, n) \
    X(ne_bii,        NotEqual,      b, i, i, n) \
    X(ne_bll,        NotEqual,      b, l, l, n) \
    X(ne_bff,        NotEqual,      b, f, f, n) \
    X(ne_bdd,        NotEqual,      b, d, d, n) \
    X(ne_bcc,        NotEqual,      b, c, c, n) \
    X(ne_bzz,        NotEqual,      b, z, z, n) \
    X(lt_bssw,       BytesLess,         b, s, s, w) \
    X(le_bssw,       BytesLessEqual,    b, s, s, w) \
    X(gt_bssw,       BytesGreater,      b, s, s, w) \
    X(ge_bssw,       BytesGreaterEqual, b, s, s, w) \
    X(eq_bssw,       BytesEqual,        b, s, s, w) \
    X(ne_bssw,       BytesNotEqual,     b, s, s, w) \
    X(contains_bssw, BytesContains,     b, s, s, w) \
    X(isnan_bf,      Isnan,         b, f, n, n) \
    X(isnan_bd,      Isnan,         b, d, n, n) \
    X(isnan_bc,      Isnan,         b, c, n, n) \
    X(isnan_bz,      Isnan,         b, z, n, n) \
    X(isinf_bf,      Isinf,         b, f, n, n) \
    X(isinf_bd,      Isinf,         b, d, n, n) \
    X(isinf_bc,      Isinf,         b, c, n, n) \
    X(isinf_bz,      Isinf,         b, z, n, n) \
    X(isfinite_bf,   Isfinite,      b, f, n, n) \
    X(isfinite_bd,   Isfinite,      b, d, n, n) \
    X(isfinite_bc,   Isfinite,      b, c, n, n) \
    X(isfinite_bz,   Isfinite,      b, z, n, n) \
    X(signbit_bf,    Signbit,       b, f, n, n) \
    X(signbit_bd,    Signbit,       b, d, n, n) \
    X(where_bbbb,    Where,         b, b, b, b) \
    X(where_ibii,    Where,         i, b, i, i) \
    X(where_lbll,    Where,         l, b, l, l) \
    X(where_fbff,    Where,         f, b, f, f) \
    X(where_dbdd,    Where,         d, b, d, d) \
    X(where_cbcc,    Where,         c, b, c, c) \
    X(where_zbzz,    Where,         z, b, z, z) \
    X(cast_bi,       Cast,          b, i, n, n) \
    X(cast_bl,       Cast,          b, l, n, n) \
    X(cast_bf,       Cast,          b, f, n, n) \
    X(cast_bd,       Cast,          b, d, n, n) \
    X(cast_bc,       Cast,          b, c, n, n) \
    X(cast_bz,       Cast,          b, z, n, n) \
    X(cast_ib,       Cast,          i, b, n, n) \
    X(cast_il,       Cast,          i, l, n, n) \
    X(cast_if,       Cast,          i, f, n, n) \
    X(cast_id,       Cast,          i, d, n, n) \
    X(cast_ic,       Cast,          i, c, n, n) \
    X(cast_iz,       Cast,          i, z, n, n) \
    X(cast_lb,       Cast,          l, b, n, n) \
    X(cast_li,       Cast,          l, i, n, n) \
    X(cast_lf,       Cast,          l, f, n, n) \
    X(cast_ld,       Cast,          l, d, n, n) \
    X(cast_lc,       Cast,          l, c, n, n) \
    X(cast_lz,       Cast,          l, z, n, n) \
    X(cast_fb,       Cast,          f, b, n, n) \
    X(cast_fi,       Cast,          f, i, n, n) \
    X(cast_fl,       Cast,          f, l, n, n) \
    X(cast_fd,       Cast,          f, d, n, n) \
    X(cast_fc,       Cast,          f, c, n, n) \
    X(cast_fz,       Cast,          f, z, n, n) \
    X(cast_db,       Cast,          d, b, n, n) \
    X(cast_di,       Cast,          d, i, n, n) \
    X(cast_dl,       Cast,          d, l, n, n) \
    X(cast_df,       Cast,          d, f, n, n) \
    X(cast_dc,       Cast,          d, c, n, n) \
    X(cast_dz,       Cast,          d, z, n, n) \
    X(cast_cb,       Cast,          c, b, n, n) \
    X(cast_ci,       Cast,          c, i, n, n) \
    X(cast_cl,       Cast,          c, l, n, n) \
    X(cast_cf,       Cast,          c, f, n, n) \
    X(cast_cd,       Cast,          c, d, n, n) \
    X(cast_cz,       Cast,          c, z, n, n) \
    X(cast_zb,       Cast,          z, b, n, n) \
    X(cast_zi,       Cast,          z, i, n, n) \
    X(cast_zl,       Cast,          z, l, n, n) \
    X(cast_zf,       Cast,          z, f, n, n) \
    X(cast_zd,       Cast,          z, d, n, n) \
    X(cast_zc,       Cast,          z, c, n, n) \
    NUMFUSE_FUNCTION_OPCODES(X)
// clang-format on
