// Per-interval erf coefficients, as rows for scalar (and GPU) code.
//
// GENERATED from src/core/kernels/erf.hpp (erf_table_f64 / erf_table_f32, the
// column tables of the SIMD kernel) by src/core/device_math/gen_erf_tables.py:
// the numbers are the same hex literals, regrouped so that one interval's
// coefficients are contiguous (one cache line or two per lookup on a GPU).
// tests/cpp/test_device_math.cpp checks entry by entry that they still equal
// the SIMD kernel's tables, so the two cannot drift apart.
//
// Row k: m, c0, c1hi, c1lo, c2, ..., cD (D = degree).
// Plain macros (no types): the same initialiser builds a host array and, under
// nvcc, a __device__ array (device code cannot read host constexpr arrays).
#pragma once

// erf_table_f64: degree 11; row k = m, c0, c1hi, c1lo, c2..c11
#define NUMFUSE_DM_ERF_F64_DEGREE 11
#define NUMFUSE_DM_ERF_F64_XMAX 0x1.8000000000000p+2
#define NUMFUSE_DM_ERF_F64_QB 0x1.2a58bf258bf25p+2
#define NUMFUSE_DM_ERF_F64_QC -0x1.47ae147ae147bp-2
#define NUMFUSE_DM_ERF_F64_QN 0x1.ffffffffffffep+51
#define NUMFUSE_DM_ERF_F64_ROWS { \
    {0x0.0p+0, 0x0.0p+0, 0x1.06eba8214db69p-3, -0x1.ca38adde68c03p-57, -0x1.812746b0379e7p-2, 0x1.ce2f21a042be0p-4, -0x1.b82ce31288b50p-6, 0x1.565bcd0e6a4b0p-8, -0x1.c02db400352e0p-11, 0x1.f9a326f007b40p-14, -0x1.f4d2570395400p-17, 0x1.b9e4f99918550p-20, -0x1.5f1004761ec10p-23, 0x1.e43d762e8a600p-27}, \
    {0x1.cbd74fab48501p-2, 0x1.e6025bdf50091p-2, 0x1.d838c8526d982p-1, 0x0.0p+0, -0x1.a81d7ce8c06d6p-2, -0x1.77b084868b2b1p-3, 0x1.6f19023eb5901p-3, 0x1.76225ea9cc181p-6, -0x1.a3929201109b1p-5, 0x1.295fd7958d8d1p-10, 0x1.6374fdcc5b251p-7, -0x1.5579765c05c41p-10, -0x1.d8a67dd3cbd11p-10, 0x1.67f6c4e24e491p-12}, \
    {0x1.5c3943d672c9ap-1, 0x1.53e6d8b7484a6p-1, 0x1.6bc698ff648a1p-1, 0x0.0p+0, -0x1.eed35798f2b4ep-2, -0x1.227bce983dde2p-6, 0x1.563b44a1065b2p-3, -0x1.48d7ed272e0f2p-5, -0x1.227ed6b6e9962p-5, 0x1.0d7db309e7ef2p-6, 0x1.3ab4a9a69e002p-8, -0x1.012ad9c683cd2p-8, -0x1.508cc7b048212p-12, 0x1.64295af2b8082p-11}, \
    {0x1.d2cdb96501cfcp-1, 0x1.9affb8ab5e99fp-1, 0x1.f73615f588394p-2, 0x0.0p+0, -0x1.caca6b5a94af3p-2, 0x1.bc7ec268d2f03p-4, 0x1.991792d0b5e53p-4, -0x1.1a8a5c31f6c63p-4, -0x1.7398903ce56e3p-8, 0x1.25491eff91083p-6, -0x1.778577bf98163p-9, -0x1.7c15ea33e39e3p-9, 0x1.0e081e5dc7cb3p-10, 0x1.30bc68be8aac3p-12}, \
    {0x1.2c2120365bbb6p+0, 0x1.ce2c4ef35ab0ep-1, 0x1.244c9b87e6469p-2, 0x0.0p+0, -0x1.56af98eaf2b7cp-2, 0x1.54cfc19668ee4p-3, 0x1.cad485968bd34p-7, -0x1.cec42647e1944p-5, 0x1.2c83c1dc0b9e4p-6, 0x1.decf9faba18e4p-8, -0x1.8dea89324fc34p-8, 0x1.519bf232ca674p-13, 0x1.0fcea2f74d4f4p-10, -0x1.f6aa394689204p-13}, \
    {0x1.6e97d38a4fa30p+0, 0x1.ea0f703d245a1p-1, 0x1.294e96c74c512p-3, 0x0.0p+0, -0x1.a9beae9845c7ep-3, 0x1.3357e100d0465p-3, -0x1.3892ec2dd9755p-5, -0x1.7b89c38309705p-6, 0x1.5bdf71bfe31a5p-6, -0x1.9fb60b9c0e855p-9, -0x1.bf88d7cdf8085p-9, 0x1.be823d0643615p-10, 0x1.ff17fd2347415p-14, -0x1.4576ba94cab75p-12}, \
    {0x1.b2561cbbdb37dp+0, 0x1.f7977e81f41abp-1, 0x1.03d31d1e23a7fp-4, 0x0.0p+0, -0x1.b8d34d72a16c8p-4, 0x1.9c00a22296756p-4, -0x1.952175b210a26p-5, 0x1.bbd9ece64b696p-9, 0x1.7162a219191c6p-7, -0x1.9af5654e30706p-8, 0x1.ffed3bd01dfc6p-13, 0x1.27740f57aebb6p-10, -0x1.ba400dbe4e046p-12, -0x1.9e0122d4f6796p-15}, \
    {0x1.fee7742f6e6a3p+0, 0x1.fd8f2f1e4959dp-1, 0x1.587315524c542p-6, 0x0.0p+0, -0x1.57b6585314535p-5, 0x1.8fe4d570a07f7p-5, -0x1.1c7799a764b47p-5, 0x1.ac7954e45cac7p-7, 0x1.264ce3fca8977p-11, -0x1.c205ff2a9fa47p-9, 0x1.a1869ac16a247p-10, -0x1.44c9e4b2b3277p-15, -0x1.184b4b9856cd7p-12, 0x1.abc4cef375117p-14}, \
    {0x1.268456b90f836p+1, 0x1.ff6ad76704d53p-1, 0x1.73457da9d6290p-8, 0x0.0p+0, -0x1.ab21bbeb93b84p-7, 0x1.28a892cc384f8p-6, -0x1.0e1aaa0447918p-6, 0x1.3f31a8b2a9908p-7, -0x1.93073a4296848p-9, -0x1.38556ccab6528p-12, 0x1.b34d8cf9c4d38p-11, -0x1.8082ddb0149e8p-12, 0x1.498e01b19c798p-16, 0x1.bd6616f919168p-15}, \
    {0x1.4f5c2db9c3869p+1, 0x1.ffe451a0651bap-1, 0x1.34e74348415b5p-10, 0x0.0p+0, -0x1.94a9db548a1cfp-9, 0x1.47aa0c9df33f9p-8, -0x1.69cbdd96c3619p-8, 0x1.18dd067dbf5f9p-8, -0x1.299de56b4a089p-9, 0x1.642c115a86c49p-11, 0x1.5d0b8bf897cf9p-15, -0x1.47db3045f8869p-13, 0x1.364621ef3b869p-14, -0x1.3aec197cd5559p-17}, \
    {0x1.7bd2a826ca27ap+1, 0x1.fffc7264acea6p-1, 0x1.62d1ec2e9b848p-13, 0x0.0p+0, -0x1.073860f61fcb3p-11, 0x1.eb2542928175ap-11, -0x1.407b6d8ca172ap-10, 0x1.32b92b916071ap-10, -0x1.b3d988f135f8ap-11, 0x1.beed07781315ap-12, -0x1.21875e3bf3bdap-13, 0x1.11bfdd61fa29ap-17, 0x1.4eeb0b60fedeap-16, -0x1.922dada3c0c4ap-17}, \
    {0x1.ac5ec4670f140p+1, 0x1.ffffb5b86076cp-1, 0x1.02dd17dd982fep-16, 0x0.0p+0, -0x1.b12977ae8c5e0p-15, 0x1.cda4071aba4cbp-14, -0x1.5e23c640ff32bp-13, 0x1.8f7889889632bp-13, -0x1.604202de6840bp-13, 0x1.e36c07fd71b5bp-14, -0x1.fb07acafe954bp-15, 0x1.7a29cfcf7616bp-16, -0x1.1a2e35b20ea2bp-18, -0x1.2dafe46e9e7abp-20}, \
    {0x1.e1fde55f24b59p+1, 0x1.fffffc9e48b92p-1, 0x1.a4fcb884dea05p-21, 0x0.0p+0, -0x1.8c502ed3f085fp-19, 0x1.dfe7f1da8ec5cp-18, -0x1.a2c0b2fb81c8cp-17, 0x1.175ff47ba8f2cp-16, -0x1.26d58b8d06c3cp-16, 0x1.f55f6ed52558cp-17, -0x1.599bceec5ef8cp-17, 0x1.7f7b93317836cp-18, -0x1.4d92384abe1ecp-19, 0x1.9335c4f5d97fcp-21}, \
    {0x1.100e0da4f7639p+2, 0x1.fffffff038e27p-1, 0x1.135633a88391fp-26, 0x0.0p+0, -0x1.249ab47df64cfp-24, 0x1.93225352a3badp-23, -0x1.94084f9ff8e6dp-22, 0x1.3942fd408091dp-21, -0x1.860447f7acebdp-21, 0x1.8f1bc1bef8eddp-21, -0x1.543024fb3122dp-21, 0x1.e74fe1a65c13dp-22, -0x1.30ca8978e7c5dp-22, 0x1.3600d120ac73dp-23}, \
    {0x1.335f6c56a8dedp+2, 0x1.ffffffffe7b03p-1, 0x1.dcc66247b27ccp-34, 0x0.0p+0, -0x1.1e39d8c47221ap-31, 0x1.c04907636422ep-30, -0x1.013161b7ada5ep-28, 0x1.cc7d8bfd35afep-28, -0x1.4e67d454133eep-27, 0x1.93a8f10d6a69ep-27, -0x1.9aa8c1780064ep-27, 0x1.6d19ed612265ep-27, -0x1.2e71129234a4ep-27, 0x1.61e6b485291aep-28}, \
    {0x1.63cd516c20222p+2, 0x1.fffffffffffdep-1, 0x1.7ffa72fed7d76p-45, 0x0.0p+0, -0x1.0add98af0de1cp-42, 0x1.e673943877a9fp-41, -0x1.4689eb403ccafp-39, 0x1.596828bdfa10fp-38, -0x1.2d3bd823072bfp-37, 0x1.b04a058d5e7dfp-37, -0x1.f36ab5f2354afp-37, 0x1.1d04e7f3bcb4fp-36, -0x1.750399912953fp-36, 0x1.14564403c461fp-36}, \
}

// erf_table_f32: degree 5; row k = m, c0, c1hi, c1lo, c2..c5
#define NUMFUSE_DM_ERF_F32_DEGREE 5
#define NUMFUSE_DM_ERF_F32_XMAX 0x1.0000000000000p+2
#define NUMFUSE_DM_ERF_F32_QB 0x1.ca66666666666p+2
#define NUMFUSE_DM_ERF_F32_QC -0x1.6666666666666p-1
#define NUMFUSE_DM_ERF_F32_QN 0x1.ffffffffffffcp+51
#define NUMFUSE_DM_ERF_F32_ROWS { \
    {0x0.0p+0, 0x0.0p+0, 0x1.06eba8214db69p-3, -0x1.ca38add602500p-57, -0x1.8127468fb91e4p-2, 0x1.ce2ea575a88edp-4, -0x1.b7e29024bd0eep-6, 0x1.480df73fc1571p-8}, \
    {0x1.c0b2f1d2b1154p-2, 0x1.dbaece4cf5e45p-2, 0x1.dccd80201699cp-1, 0x1.e9ebcde97226fp-56, -0x1.a1da50479c0fcp-2, -0x1.879be01c6384cp-3, 0x1.6b9a5a5f73f77p-3, 0x1.acf910704f87dp-6}, \
    {0x1.2fdf0c2f6c2d4p-1, 0x1.328b28f32fe33p-1, 0x1.9635587be0145p-1, -0x1.30e1d24d687f5p-56, -0x1.e22aeb852cba9p-2, -0x1.401cfb8b90f78p-4, 0x1.703ca7a684896p-3, -0x1.3b03f9d3018a7p-6}, \
    {0x1.8239fe04c84d8p-1, 0x1.6d89dcac860b4p-1, 0x1.4708c4a83b239p-1, 0x1.2220ea4556aa9p-56, -0x1.ed65353142ea4p-2, 0x1.e1aed0b6684a5p-6, 0x1.31c4e6ea7383dp-3, -0x1.b89442fda2186p-5}, \
    {0x1.d7bdfa692a4fcp-1, 0x1.9d678c03a607dp-1, 0x1.ee64627a0f8acp-2, 0x1.3eed594861bf3p-56, -0x1.c784c57d6d70cp-2, 0x1.cc03a85b61d98p-4, 0x1.8b44e075af24ap-4, -0x1.1b163a7627ed0p-4}, \
    {0x1.18681300b6bbdp+0, 0x1.c1db93755d786p-1, 0x1.5c197e7e86193p-2, -0x1.0a19a0704bcb0p-58, -0x1.7d4977f5cf92dp-2, 0x1.44c89c9f08642p-3, 0x1.3258a78fa074bp-5, -0x1.054cb8344990fp-4}, \
    {0x1.46f65a907d60ap+0, 0x1.dbb545cf049ecp-1, 0x1.c4387aeb665e7p-3, 0x1.33ac6c3b28f31p-60, -0x1.20c9afaa8b6a3p-2, 0x1.550b3c9bfc9b6p-3, -0x1.8c816955a45f9p-7, -0x1.65688a7cff40fp-5}, \
    {0x1.77d7869201d14p+0, 0x1.ec9c3a38a0977p-1, 0x1.0bbb86e3a40aep-3, -0x1.6bf24b0301982p-60, -0x1.891167f618f7dp-3, 0x1.2778dde0ac97ap-3, -0x1.5580f2c55ef62p-5, -0x1.327e47a6e42c2p-6}, \
    {0x1.ab6f01da274ebp+0, 0x1.f6acc9b91a6a8p-1, 0x1.1c830f19ff0ebp-4, 0x1.14fdd4fe67373p-58, -0x1.db0a71986e885p-4, 0x1.b1eef727268a2p-4, -0x1.96754fb9ac46dp-5, 0x1.6a5fd03058d4cp-10}, \
    {0x1.e23f8f937d912p+0, 0x1.fc0c1b331cffdp-1, 0x1.09e244b11e03ep-5, 0x1.61577cffeb663p-60, -0x1.f4de68d8f12c1p-5, 0x1.0e31fe6c8d0afp-4, -0x1.558dbd3984e59p-5, 0x1.7c05d32766b61p-7}, \
    {0x1.0e7d9fa6502bfp+1, 0x1.fe9092bce812cp-1, 0x1.a91b2a2cfd3bdp-7, -0x1.361490e31459dp-62, -0x1.c12ad3f751db0p-6, 0x1.18f8b0f4bf22cp-5, -0x1.bc80738a85d81p-6, 0x1.9c546a8ac60fep-7}, \
    {0x1.2e4fdc4f2a19ep+1, 0x1.ff923b718ab47p-1, 0x1.177e7096c71c5p-8, -0x1.6dc5fce2825f1p-63, -0x1.4a0c0b7a68f38p-7, 0x1.d91abe09c3b34p-7, -0x1.c2d109b358e7cp-7, 0x1.19fa53803620ap-7}, \
    {0x1.515695cc2c85cp+1, 0x1.ffe69c8d01732p-1, 0x1.1cce6656f5942p-10, 0x1.8e83e6000bf29p-68, -0x1.774223841d46dp-9, 0x1.31f3f412a0e84p-8, -0x1.5859c6ebbebf7p-8, 0x1.0c719a6650a44p-8}, \
    {0x1.78cfca8b4e6dbp+1, 0x1.fffbe3181b48ap-1, 0x1.97c1cddc72c4cp-13, -0x1.adf3f06fbb668p-67, -0x1.2bfbf897e61fcp-11, 0x1.15755c0a053eep-10, -0x1.6e756b4e35b80p-10, 0x1.56d0cf96adf57p-10}, \
    {0x1.a71aefbc80300p+1, 0x1.ffff9d383282ep-1, 0x1.5454f68b3b883p-16, 0x1.23a6bdb8282c9p-70, -0x1.18d4adb7fed8cp-14, 0x1.2790f1efded5fp-13, -0x1.cef2deb65e9f9p-13, 0x1.fd8795213be75p-13}, \
    {0x1.e02d4c650f9bep+1, 0x1.fffffc3980c30p-1, 0x1.d4555e13c7278p-21, -0x1.26447c7620e3bp-75, -0x1.b405bd0f146ccp-19, 0x1.0831899671014p-17, -0x1.ff8bd64ea5571p-17, 0x1.46f8997fdfa84p-16}, \
}

