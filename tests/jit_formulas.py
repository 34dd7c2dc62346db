"""The formula table of tests/test_jit_formulas.py and benchmarks: real formulas written as
plain NumPy functions. A row: (name, function, domains of its array arguments)."""

from __future__ import annotations

import numpy as np
import scipy.special as sp

import numfuse as nf

SQRT_2_OVER_PI = 0.7978845608028654
GAMMALN_HALF_NU = float(sp.gammaln(3.5))  # Student-t with nu = 6, precomputed
GAMMALN_NU = float(sp.gammaln(3.0))
NU = 5.0


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def log_softmax(x):
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


def logsumexp(x):
    m = np.max(x, axis=-1, keepdims=True)
    return np.log(np.sum(np.exp(x - m), axis=-1)) + np.squeeze(m, -1)


def logsumexp_flat(x):
    m = x.max()
    return m + np.log(np.exp(x - m).sum())


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def gelu_erf(x):
    return 0.5 * x * (1 + sp.erf(x / np.sqrt(2.0)))


def gelu_numfuse_erf(x):
    return x * 0.5 * (1.0 + nf.erf(x * 0.7071067811865476))


def silu(x):
    return x * sp.expit(x)


def silu_exp(x):
    return x / (1 + np.exp(-x))


def softplus(x):
    return np.logaddexp(0, x)


def softplus_stable(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def mish(x):
    return x * np.tanh(np.log1p(np.exp(x)))


def sigmoid_bce_logits(z, y):
    return np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))


def sigmoid_bce_mean(z, y):
    return np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


def focal_loss(z, y):
    p = sp.expit(z)
    pt = np.where(y > 0.5, p, 1 - p)
    return -0.25 * (1 - pt) ** 2 * np.log(np.clip(pt, 1e-7, 1.0))


def gaussian_logpdf(x, mu):
    return -0.5 * ((x - mu) / 1.5) ** 2 - np.log(1.5) - 0.5 * np.log(2 * np.pi)


def student_t_logpdf(x):
    return (
        GAMMALN_HALF_NU
        - GAMMALN_NU
        - 0.5 * np.log(NU * np.pi)
        - (NU + 1) / 2 * np.log1p(x * x / NU)
    )


def lognormal_logpdf(x):
    return -np.log(x * 0.8 * np.sqrt(2 * np.pi)) - (np.log(x) - 0.2) ** 2 / (2 * 0.8**2)


def mixture_loglik(x):
    a = np.log(0.3) - 0.5 * (x + 1) ** 2 - 0.5 * np.log(2 * np.pi)
    b = np.log(0.7) - 0.5 * ((x - 2) / 0.5) ** 2 - np.log(0.5) - 0.5 * np.log(2 * np.pi)
    return np.logaddexp(a, b)


def mixture_loglik_total(x):
    return np.sum(mixture_loglik(x))


def _d1(s, k, t, r, v):
    return (np.log(s / k) + (r + 0.5 * v * v) * t) / (v * np.sqrt(t))


def black_scholes_call(s, k, t):
    r, v = 0.02, 0.3
    d1 = _d1(s, k, t, r, v)
    d2 = d1 - v * np.sqrt(t)
    cdf1 = 0.5 * (1 + sp.erf(d1 / np.sqrt(2)))
    cdf2 = 0.5 * (1 + sp.erf(d2 / np.sqrt(2)))
    return s * cdf1 - k * np.exp(-r * t) * cdf2


def black_scholes_delta(s, k, t):
    return 0.5 * sp.erfc(-_d1(s, k, t, 0.02, 0.3) / np.sqrt(2))


def black_scholes_put(s, k, t):
    r, v = 0.02, 0.3
    d1 = _d1(s, k, t, r, v)
    d2 = d1 - v * np.sqrt(t)
    return k * np.exp(-r * t) * 0.5 * sp.erfc(d2 / np.sqrt(2)) - s * 0.5 * sp.erfc(d1 / np.sqrt(2))


def haversine(lat1, lon1, lat2, lon2):
    a = (
        np.sin((lat2 - lat1) / 2) ** 2
        + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2
    )
    return 2 * 6371.0 * np.arcsin(np.sqrt(a))


def horner5(x):
    return ((((0.5 * x - 1.25) * x + 2.0) * x - 0.75) * x + 3.0) * x - 1.0


def horner_exp_series(x):
    return 1 + x * (1 + x * (0.5 + x * (1 / 6 + x * (1 / 24 + x / 120))))


def logistic_loss(z, y):
    return np.mean(np.logaddexp(0, -y * z))


def logistic_gradient(z, y):
    return -y * sp.expit(-y * z)


def adam_step(w, g, m, v):
    m2 = 0.9 * m + 0.1 * g
    v2 = 0.999 * v + 0.001 * g * g
    w2 = w - 1e-3 * (m2 / (1 - 0.9**10)) / (np.sqrt(v2 / (1 - 0.999**10)) + 1e-8)
    return w2, m2, v2


def layer_norm(x):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5)


def cosine_rows(a, b):
    dot = (a * b).sum(axis=-1)
    return dot / (np.sqrt((a * a).sum(axis=-1)) * np.sqrt((b * b).sum(axis=-1)))


def huber(x, y):
    r = np.abs(x - y)
    return np.where(r < 1.0, 0.5 * r * r, r - 0.5)


def huber_mean(x, y):
    return np.mean(huber(x, y))


def log_cosh(x, y):
    d = x - y
    return d + np.log1p(np.exp(-2 * d)) - np.log(2.0)


def tanh_via_exp(x):
    return (np.exp(2 * x) - 1) / (np.exp(2 * x) + 1)


def elu(x):
    return np.where(x > 0, x, np.expm1(x))


def selu(x):
    return 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))


def leaky_relu(x):
    return np.maximum(x, 0.01 * x)


def relu6(x):
    return np.clip(x, 0, 6)


def hard_sigmoid(x):
    return np.clip(x / 6 + 0.5, 0.0, 1.0)


def swish_beta(x):
    return x / (1 + np.exp(-1.5 * x))


def numfuse_softmax(x):
    return nf.softmax(x, axis=-1)


def numfuse_log_softmax(x):
    return nf.log_softmax(x, axis=-1)


def numfuse_logsumexp(x):
    return nf.logsumexp(x, axis=-1)


def entropy(x):
    p = softmax(x)
    return -(p * np.log(p)).sum(axis=-1)


def rmsnorm(x):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6)


def standardize(x):
    return (x - x.mean()) / x.std()


def l2_distance(a, b):
    return np.sqrt(np.sum((a - b) ** 2, axis=-1))


def poisson_nll(x, y):
    return np.exp(x) - y * x


def kl_bernoulli(p, q):
    return p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))


def arctan_angle(y, x):
    return np.arctan2(y, x) * (180 / np.pi)


def hypot_norm(x, y):
    return np.hypot(x, y) / (1 + np.abs(x))


def sinc_like(x):
    return np.where(np.abs(x) > 1e-3, np.sin(x) / x, 1 - x * x / 6)


def gaussian_kernel(a, b):
    return np.exp(-0.5 * (a - b) ** 2)


def cubic_spline_weight(x):
    ax = np.abs(x)
    return np.where(
        ax < 1,
        1.5 * ax**3 - 2.5 * ax**2 + 1,
        np.where(ax < 2, -0.5 * ax**3 + 2.5 * ax**2 - 4 * ax + 2, 0.0),
    )


def smooth_l1_and_grad(x, y):
    d = x - y
    loss = np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5)
    grad = np.clip(d, -1, 1)
    return {"loss": loss, "grad": grad}


def log1p_exp_list(x):
    return [np.log1p(np.exp(x)), np.exp(x).sum()]


def sigmoid_and_log(x):
    return sp.expit(x), np.log(sp.expit(x))


def geometric_mean(x):
    return np.exp(np.mean(np.log(x), axis=-1))


def weighted_logsumexp(x, w):
    m = x.max(axis=-1, keepdims=True)
    return np.log(np.sum(w * np.exp(x - m), axis=-1, keepdims=True)) + m


def erfc_tail(x):
    return np.log(sp.erfc(x / np.sqrt(2)) / 2)


def cauchy_logpdf(x):
    return -np.log(np.pi) - np.log1p(x * x)


def laplace_logpdf(x):
    return -np.abs(x - 0.5) / 0.8 - np.log(2 * 0.8)


def trig_identity(x):
    return np.sin(x) ** 2 + np.cos(x) ** 2 - 1 + np.tan(x / 4)


N = (-5.0, 5.0)
POS = (0.2, 5.0)
UNIT = (0.05, 0.95)
SMALL = (-2.0, 2.0)
FORMULAS = [
    ("softmax", softmax, [N]),
    ("log_softmax", log_softmax, [N]),
    ("logsumexp", logsumexp, [N]),
    ("logsumexp_flat", logsumexp_flat, [N]),
    ("gelu_tanh", gelu_tanh, [N]),
    ("gelu_erf", gelu_erf, [N]),
    ("gelu_numfuse_erf", gelu_numfuse_erf, [N]),
    ("silu", silu, [N]),
    ("silu_exp", silu_exp, [N]),
    ("softplus", softplus, [N]),
    ("softplus_stable", softplus_stable, [N]),
    ("mish", mish, [N]),
    ("sigmoid_bce_logits", sigmoid_bce_logits, [N, UNIT]),
    ("sigmoid_bce_mean", sigmoid_bce_mean, [N, UNIT]),
    ("focal_loss", focal_loss, [N, UNIT]),
    ("gaussian_logpdf", gaussian_logpdf, [N, SMALL]),
    ("student_t_logpdf", student_t_logpdf, [N]),
    ("lognormal_logpdf", lognormal_logpdf, [POS]),
    ("mixture_loglik", mixture_loglik, [N]),
    ("mixture_loglik_total", mixture_loglik_total, [N]),
    ("black_scholes_call", black_scholes_call, [(50.0, 150.0), (50.0, 150.0), (0.1, 2.0)]),
    ("black_scholes_delta", black_scholes_delta, [(50.0, 150.0), (50.0, 150.0), (0.1, 2.0)]),
    ("black_scholes_put", black_scholes_put, [(50.0, 150.0), (50.0, 150.0), (0.1, 2.0)]),
    ("haversine", haversine, [SMALL, SMALL, SMALL, SMALL]),
    ("horner5", horner5, [SMALL]),
    ("horner_exp_series", horner_exp_series, [SMALL]),
    ("logistic_loss", logistic_loss, [N, (-1.0, 1.0)]),
    ("logistic_gradient", logistic_gradient, [N, (-1.0, 1.0)]),
    ("adam_step", adam_step, [SMALL, SMALL, SMALL, UNIT]),
    ("layer_norm", layer_norm, [N]),
    ("cosine_rows", cosine_rows, [N, N]),
    ("huber", huber, [N, N]),
    ("huber_mean", huber_mean, [N, N]),
    ("log_cosh", log_cosh, [SMALL, SMALL]),
    ("tanh_via_exp", tanh_via_exp, [SMALL]),
    ("elu", elu, [N]),
    ("selu", selu, [N]),
    ("leaky_relu", leaky_relu, [N]),
    ("relu6", relu6, [(-10.0, 10.0)]),
    ("hard_sigmoid", hard_sigmoid, [N]),
    ("swish_beta", swish_beta, [N]),
    ("numfuse_softmax", numfuse_softmax, [N]),
    ("numfuse_log_softmax", numfuse_log_softmax, [N]),
    ("numfuse_logsumexp", numfuse_logsumexp, [N]),
    ("entropy", entropy, [N]),
    ("rmsnorm", rmsnorm, [N]),
    ("standardize", standardize, [N]),
    ("l2_distance", l2_distance, [N, N]),
    ("poisson_nll", poisson_nll, [SMALL, POS]),
    ("kl_bernoulli", kl_bernoulli, [UNIT, UNIT]),
    ("arctan_angle", arctan_angle, [N, N]),
    ("hypot_norm", hypot_norm, [N, N]),
    ("sinc_like", sinc_like, [N]),
    ("gaussian_kernel", gaussian_kernel, [N, N]),
    ("cubic_spline_weight", cubic_spline_weight, [(-3.0, 3.0)]),
    ("smooth_l1_and_grad", smooth_l1_and_grad, [N, N]),
    ("log1p_exp_list", log1p_exp_list, [SMALL]),
    ("sigmoid_and_log", sigmoid_and_log, [N]),
    ("geometric_mean", geometric_mean, [POS]),
    ("weighted_logsumexp", weighted_logsumexp, [N, UNIT]),
    ("erfc_tail", erfc_tail, [SMALL]),
    ("cauchy_logpdf", cauchy_logpdf, [N]),
    ("laplace_logpdf", laplace_logpdf, [N]),
    ("trig_identity", trig_identity, [SMALL]),
]


def inputs(domains, shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [(lo + (hi - lo) * rng.random(shape)).astype(dtype) for lo, hi in domains]
