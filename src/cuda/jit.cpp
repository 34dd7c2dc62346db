// Run-time compilation of evaluate programs with NVRTC (see jit.hpp).
#include "jit.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace numfuse::cuda::jit {

// The headers the generated source includes, embedded at build time
// (CMakeLists.txt writes jit_headers.cpp from src/cuda and src/core/device_math).
extern const int embedded_header_count;
extern const char* const embedded_header_names[];
extern const char* const embedded_header_texts[];

namespace {

// The part of NVRTC's C API that is used, declared here so that no NVRTC header
// is needed at build time (the library is optional at run time).
struct nvrtc_program_t;
using nvrtcProgram = nvrtc_program_t*;
using nvrtcResult = int;

// Minimal standard headers for NVRTC (it ships none of these by default); only
// what vm_exec.hpp and device_math use in device code.
const char* const shim_cstdint = R"nfshim(
#pragma once
namespace std {
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;
typedef unsigned long long uint64_t; typedef unsigned long long uintptr_t;
}
)nfshim";
const char* const shim_type_traits = R"nfshim(
#pragma once
namespace std {
template <class T, T v> struct integral_constant { static constexpr T value = v; };
typedef integral_constant<bool, true> true_type;
typedef integral_constant<bool, false> false_type;
template <class A, class B> struct is_same : false_type {};
template <class A> struct is_same<A, A> : true_type {};
template <class A, class B> inline constexpr bool is_same_v = is_same<A, B>::value;
template <class T> struct remove_cv { typedef T type; };
template <class T> struct remove_cv<const T> { typedef T type; };
template <class T> struct remove_cv<volatile T> { typedef T type; };
template <class T> struct remove_cv<const volatile T> { typedef T type; };
template <class T> struct is_fp_ : false_type {};
template <> struct is_fp_<float> : true_type {};
template <> struct is_fp_<double> : true_type {};
template <> struct is_fp_<long double> : true_type {};
template <class T> struct is_floating_point : is_fp_<typename remove_cv<T>::type> {};
template <class T> inline constexpr bool is_floating_point_v = is_floating_point<T>::value;
template <class T> struct is_int_ : false_type {};
template <> struct is_int_<bool> : true_type {};
template <> struct is_int_<char> : true_type {};
template <> struct is_int_<signed char> : true_type {};
template <> struct is_int_<unsigned char> : true_type {};
template <> struct is_int_<short> : true_type {};
template <> struct is_int_<unsigned short> : true_type {};
template <> struct is_int_<int> : true_type {};
template <> struct is_int_<unsigned int> : true_type {};
template <> struct is_int_<long> : true_type {};
template <> struct is_int_<unsigned long> : true_type {};
template <> struct is_int_<long long> : true_type {};
template <> struct is_int_<unsigned long long> : true_type {};
template <class T> struct is_integral : is_int_<typename remove_cv<T>::type> {};
template <class T> inline constexpr bool is_integral_v = is_integral<T>::value;
}
)nfshim";
const char* const shim_empty = "#pragma once\n";

struct Nvrtc {
    void* handle = nullptr;
    std::string library;
    std::string error;
    int major = 0, minor = 0;
    nvrtcResult (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                          const char* const*) = nullptr;
    nvrtcResult (*compile)(nvrtcProgram, int, const char* const*) = nullptr;
    nvrtcResult (*log_size)(nvrtcProgram, std::size_t*) = nullptr;
    nvrtcResult (*log)(nvrtcProgram, char*) = nullptr;
    nvrtcResult (*cubin_size)(nvrtcProgram, std::size_t*) = nullptr;
    nvrtcResult (*cubin)(nvrtcProgram, char*) = nullptr;
    nvrtcResult (*ptx_size)(nvrtcProgram, std::size_t*) = nullptr;
    nvrtcResult (*ptx)(nvrtcProgram, char*) = nullptr;
    nvrtcResult (*destroy)(nvrtcProgram*) = nullptr;
    const char* (*error_string)(nvrtcResult) = nullptr;
    nvrtcResult (*version)(int*, int*) = nullptr;
};

struct Entry {
    cudaKernel_t kernel = nullptr;  // null: the compile failed, use the interpreter
};

struct State {
    std::mutex mutex;
    std::vector<std::string> candidates;
    bool tried_load = false;
    Nvrtc nvrtc;
    std::unordered_map<std::string, Entry> cache;  // key: program shape + device architecture
    std::size_t failures = 0;
    std::string last_error;
    double compile_seconds = 0;
};

State& state() {
    static State* s = new State();  // never destroyed: kernels may outlive static destructors
    return *s;
}

bool enabled() {
    const char* v = std::getenv("NUMFUSE_CUDA_JIT");
    return v == nullptr ||
           !(std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 || std::strcmp(v, "OFF") == 0);
}

template <class F>
bool sym(void* h, const char* name, F& f) {
    f = reinterpret_cast<F>(dlsym(h, name));
    return f != nullptr;
}

// Called with the mutex held.
void load_nvrtc(State& st) {
    if (st.tried_load) return;
    st.tried_load = true;
    std::vector<std::string> names = st.candidates;
    for (const char* n : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) names.emplace_back(n);
    std::string tried;
    for (const auto& name : names) {
        void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (h == nullptr) {
            tried += (tried.empty() ? "" : ", ") + name;
            continue;
        }
        Nvrtc n;
        n.handle = h;
        n.library = name;
        const bool ok =
            sym(h, "nvrtcCreateProgram", n.create) && sym(h, "nvrtcCompileProgram", n.compile) &&
            sym(h, "nvrtcGetProgramLogSize", n.log_size) && sym(h, "nvrtcGetProgramLog", n.log) &&
            sym(h, "nvrtcGetPTXSize", n.ptx_size) && sym(h, "nvrtcGetPTX", n.ptx) &&
            sym(h, "nvrtcDestroyProgram", n.destroy) &&
            sym(h, "nvrtcGetErrorString", n.error_string) && sym(h, "nvrtcVersion", n.version);
        if (!ok) {
            dlclose(h);
            tried += (tried.empty() ? "" : ", ") + name + " (incomplete)";
            continue;
        }
        sym(h, "nvrtcGetCUBINSize", n.cubin_size);  // optional (CUDA >= 11.1)
        sym(h, "nvrtcGetCUBIN", n.cubin);
        n.version(&n.major, &n.minor);
        st.nvrtc = n;
        return;
    }
    st.nvrtc.error = "NVRTC not found (tried " + tried + ")";
}

const char* type_name(int t) {
    switch (static_cast<vm::Type>(t)) {
        case vm::Type::b: return "bool";
        case vm::Type::i: return "int";
        case vm::Type::l: return "long long";
        case vm::Type::f: return "float";
        default: return "double";
    }
}

bool uses_erf(const vm::Program& p) {
    for (int k = 0; k < p.ncode; ++k) {
        if (p.code[k].family == static_cast<std::uint8_t>(vm::Family::Erf)) return true;
    }
    return false;
}

// Everything the generated code depends on: not the constants' values, not pointers.
std::string key_of(const vm::Program& p) {
    std::string key;
    key.reserve(16 + 7 * static_cast<std::size_t>(p.ncode) + 2 * static_cast<std::size_t>(p.nregs));
    const auto put = [&](int v) { key.push_back(static_cast<char>(v & 0xff)); };
    put(p.ncode);
    put(p.nregs);
    put(p.result);
    put(p.result_type);
    for (int k = 0; k < p.ncode; ++k) {
        const vm::Instr& in = p.code[k];
        for (int v : {int(in.family), int(in.type), int(in.rtype), int(in.dst), int(in.a),
                      int(in.b), int(in.c)})
            put(v);
    }
    for (int r = 0; r < p.nregs; ++r) {
        put(p.reg_type[r]);
        put(p.reg_input[r]);
    }
    return key;
}

// The kernel's parameter: what changes between calls of one compiled program.
struct Args {
    const void* inputs[vm::max_inputs];
    std::uint64_t bits[vm::max_registers];
};

}  // namespace

// Plain string building (std::to_string), no iostreams: on the GPU machine a build
// whose ostringstream crashed inside libstdc++'s number formatting was seen.
std::string source_for(const vm::Program& p) {
    const auto S = [](int v) { return std::to_string(v); };
    std::string s;
    s.reserve(4096);
    s += "// generated by numfuse (src/cuda/jit.cpp) for one evaluate program\n"
         "#include \"vm_exec.hpp\"\n"
         "namespace nfv = numfuse::cuda::vm;\n"
         "struct NfArgs { const void* inputs[" +
         S(vm::max_inputs) + "]; unsigned long long bits[" + S(vm::max_registers) +
         "]; };\n"
         "__device__ __forceinline__ void nf_load(nfv::Reg* r, const NfArgs& a, long long i) {\n";
    for (int r = 0; r < p.nregs; ++r) {
        if (p.reg_input[r] >= 0) {
            s += "    nfv::load(r[" + S(r) + "], static_cast<nfv::Type>(" + S(p.reg_type[r]) +
                 "), a.inputs[" + S(p.reg_input[r]) + "], i);\n";
        } else {
            s += "    r[" + S(r) + "].bits = a.bits[" + S(r) + "];\n";
        }
    }
    s += "}\n"
         "__device__ __forceinline__ void nf_run(nfv::Reg* r, void* out, long long i) {\n";
    for (int k = 0; k < p.ncode; ++k) {
        const vm::Instr& in = p.code[k];
        s += std::string("    nfv::exec<") + type_name(in.type) + ">(nfv::Instr{" + S(in.family) +
             ", " + S(in.type) + ", " + S(in.rtype) + ", " + S(in.dst) + ", " + S(in.a) + ", " +
             S(in.b) + ", " + S(in.c) + "}, r);\n";
    }
    s += "    nfv::store(r[" + S(p.result) + "], static_cast<nfv::Type>(" + S(p.result_type) +
         "), out, i);\n"
         "}\n"
         "extern \"C\" __global__ void __launch_bounds__(256) nf_program(const NfArgs args, void* "
         "out, long long n) {\n";
    if (uses_erf(p)) s += "    numfuse::device_math::erf_rows_to_shared();\n";
    const std::string regs = S(p.nregs > 0 ? p.nregs : 1);
    // Tiles of 1024 elements per block, four per thread (coalesced: u * 256 apart),
    // all loads first, one tile per block in the usual case (a grid as large as the
    // array: on an H100 this ran at the copy's speed where a grid-stride loop over a
    // 4096-block grid did not). An output that aliases an input (out=x) is still read
    // before it is written at every index, as in the interpreter.
    s += "    const long long tiles = (n + 1023) / 1024;\n"
         "    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {\n"
         "        const long long i = t * 1024 + threadIdx.x;\n"
         "        if (i + 768 < n) {\n"
         "            nfv::Reg r0[" +
         regs + "], r1[" + regs + "], r2[" + regs + "], r3[" + regs +
         "];\n"
         "            nf_load(r0, args, i); nf_load(r1, args, i + 256);\n"
         "            nf_load(r2, args, i + 512); nf_load(r3, args, i + 768);\n"
         "            nf_run(r0, out, i); nf_run(r1, out, i + 256);\n"
         "            nf_run(r2, out, i + 512); nf_run(r3, out, i + 768);\n"
         "        } else {\n"
         "            for (long long k = i; k < n && k < t * 1024 + 1024; k += 256) {\n"
         "                nfv::Reg r0[" +
         regs +
         "];\n"
         "                nf_load(r0, args, k);\n"
         "                nf_run(r0, out, k);\n"
         "            }\n"
         "        }\n"
         "    }\n"
         "}\n";
    return s;
}

namespace {

// Compiles `p` for compute capability `arch` (e.g. 90) with NVRTC; called with the
// mutex held. Returns the image (a cubin, or PTX when `cubin` is false) or sets *error.
std::vector<char> compile_image(State& st, const vm::Program& p, int arch, bool cubin,
                                std::string* error) {
    const Nvrtc& nv = st.nvrtc;
    const std::string src = source_for(p);
    std::vector<const char*> names, texts;
    for (int k = 0; k < embedded_header_count; ++k) {
        names.push_back(embedded_header_names[k]);
        texts.push_back(embedded_header_texts[k]);
    }
    names.push_back("cstdint");
    texts.push_back(shim_cstdint);
    names.push_back("type_traits");
    texts.push_back(shim_type_traits);
    names.push_back("cstring");
    texts.push_back(shim_empty);
    names.push_back("cmath");
    texts.push_back(shim_empty);
    const std::string option =
        std::string(cubin ? "--gpu-architecture=sm_" : "--gpu-architecture=compute_") +
        std::to_string(arch);
    nvrtcProgram prog = nullptr;
    nvrtcResult r = nv.create(&prog, src.c_str(), "numfuse_program.cu",
                              static_cast<int>(names.size()), texts.data(), names.data());
    if (r != 0) {
        *error = std::string("nvrtcCreateProgram: ") + nv.error_string(r);
        return {};
    }
    std::vector<const char*> opts = {option.c_str(), "-std=c++17", "--fmad=false",
                                     "-default-device", "-DNUMFUSE_JIT=1"};
    if (uses_erf(p)) opts.push_back("-DNUMFUSE_DM_ERF_SHARED=1");
    r = nv.compile(prog, static_cast<int>(opts.size()), opts.data());
    std::vector<char> image;
    if (r != 0) {
        std::size_t n = 0;
        nv.log_size(prog, &n);
        std::string log(n, '\0');
        if (n > 0) nv.log(prog, &log[0]);
        *error = option + ": " + nv.error_string(r) + "\n" + log;
    } else {
        std::size_t size = 0;
        if (cubin) {
            nv.cubin_size(prog, &size);
            image.resize(size);
            if (size > 0) nv.cubin(prog, image.data());
        } else {
            nv.ptx_size(prog, &size);
            image.resize(size);
            if (size > 0) nv.ptx(prog, image.data());
        }
        if (image.empty()) *error = option + ": NVRTC returned an empty image";
    }
    nv.destroy(&prog);
    return image;
}

// Compiles and loads `p` for the current device (compute capability major.minor);
// called with the mutex held. Returns null and sets st.last_error on failure.
cudaKernel_t compile(State& st, const vm::Program& p, int cc_major, int cc_minor) {
    const auto t0 = std::chrono::steady_clock::now();
    const int arch = cc_major * 10 + cc_minor;
    // A cubin for the device itself when this NVRTC can emit one, else PTX for the
    // device's virtual architecture, which the driver compiles.
    std::string errors;
    for (const bool cubin : {true, false}) {
        if (cubin && (st.nvrtc.cubin == nullptr || st.nvrtc.cubin_size == nullptr)) continue;
        std::string error;
        const std::vector<char> image = compile_image(st, p, arch, cubin, &error);
        if (image.empty()) {
            errors += error + "\n";
            continue;
        }
        cudaLibrary_t lib = nullptr;
        cudaError_t e =
            cudaLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
        cudaKernel_t kernel = nullptr;
        if (e == cudaSuccess) e = cudaLibraryGetKernel(&kernel, lib, "nf_program");
        if (e != cudaSuccess) {
            cudaGetLastError();
            errors += std::string(cubin ? "cubin" : "PTX") +
                      ": loading the image: " + cudaGetErrorName(e) + "\n";
            continue;
        }
        st.compile_seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return kernel;  // the library stays loaded for the life of the process
    }
    st.compile_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    st.last_error = errors;
    return nullptr;
}

}  // namespace

void set_nvrtc_candidates(const std::vector<std::string>& paths) {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mutex);
    st.candidates = paths;
}

bool launch(const vm::Program& p, void* out, std::int64_t n, std::uintptr_t stream, int* error) {
    *error = 0;
    if (!enabled()) return false;
    State& st = state();
    int device = 0, major = 0, minor = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    cudaKernel_t kernel = nullptr;
    {
        std::lock_guard<std::mutex> lock(st.mutex);
        load_nvrtc(st);
        if (st.nvrtc.handle == nullptr) return false;
        std::string key = key_of(p);
        key.push_back(static_cast<char>(major));
        key.push_back(static_cast<char>(minor));
        auto it = st.cache.find(key);
        if (it == st.cache.end()) {
            constexpr std::size_t max_kernels = 4096;  // beyond: interpret (no unbounded growth)
            if (st.cache.size() >= max_kernels) return false;
            Entry e;
            e.kernel = compile(st, p, major, minor);
            if (e.kernel == nullptr) ++st.failures;
            it = st.cache.emplace(std::move(key), e).first;
        }
        kernel = it->second.kernel;
    }
    if (kernel == nullptr) return false;
    if (n <= 0) return true;
    Args args{};
    for (int k = 0; k < vm::max_inputs; ++k) args.inputs[k] = p.inputs[k];
    for (int r = 0; r < vm::max_registers; ++r) args.bits[r] = p.const_bits[r];
    long long count = n;
    void* params[] = {&args, &out, &count};
    const std::int64_t tiles = (n + 1023) / 1024;  // one 1024-element tile per block
    const unsigned grid = static_cast<unsigned>(tiles < 0x7fffffff ? tiles : 0x7fffffff);
    const cudaError_t e =
        cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(grid), dim3(256), params, 0,
                         reinterpret_cast<cudaStream_t>(stream));
    *error = static_cast<int>(e);
    return true;
}

std::size_t compile_check(const vm::Program& p, int arch, bool cubin, std::string* error) {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mutex);
    load_nvrtc(st);
    if (st.nvrtc.handle == nullptr) {
        *error = st.nvrtc.error;
        return 0;
    }
    if (cubin && st.nvrtc.cubin == nullptr) {
        *error = "this NVRTC cannot emit cubins";
        return 0;
    }
    return compile_image(st, p, arch, cubin, error).size();
}

Status status() {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mutex);
    Status s;
    s.enabled = enabled();
    if (s.enabled) load_nvrtc(st);
    s.loaded = st.nvrtc.handle != nullptr;
    s.library = st.nvrtc.library;
    s.version_major = st.nvrtc.major;
    s.version_minor = st.nvrtc.minor;
    s.load_error = st.nvrtc.error;
    for (const auto& kv : st.cache) s.kernels += kv.second.kernel != nullptr ? 1 : 0;
    s.failures = st.failures;
    s.last_error = st.last_error;
    s.compile_seconds = st.compile_seconds;
    return s;
}

}  // namespace numfuse::cuda::jit
