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
    {0x0.0p+0, 0x0.0p+0, 0x1.06eba8214db69p-3, -0x1.ca38adde68c03p-57, -0x1.812746b0379e7p-2, 0x1.ce2f21a042be2p-4, -0x1.b82ce31288b50p-6, 0x1.565bcd0e6a4b6p-8, -0x1.c02db400352ddp-11, 0x1.f9a326f007b47p-14, -0x1.f4d25703953fcp-17, 0x1.b9e4f99918550p-20, -0x1.5f1004761ec0bp-23, 0x1.e43d762e8a5fap-27}, \
    {0x1.cbd74fad55c46p-2, 0x1.e6025be134aa9p-2, 0x1.d838c85193f6dp-1, 0x1.4ddaf375a9387p-55, -0x1.a81d7ce9e1994p-2, -0x1.77b0848399ae1p-3, 0x1.6f19023f2d8cfp-3, 0x1.76225e9fb4812p-6, -0x1.a3929200ef3a3p-5, 0x1.295fd7c327181p-10, 0x1.6374fdcb96030p-7, -0x1.5579766580448p-10, -0x1.d8a67dd1cdc49p-10, 0x1.67f6c4e2d519fp-12}, \
    {0x1.5c3943d2e3708p-1, 0x1.53e6d8b4c0c73p-1, 0x1.6bc69902d5514p-1, -0x1.7eddedf92482ep-56, -0x1.eed3579891c25p-2, -0x1.227bcee4631f3p-6, 0x1.563b44a3e2061p-3, -0x1.48d7ed1b0f9b4p-5, -0x1.227ed6bd787e0p-5, 0x1.0d7db30587985p-6, 0x1.3ab4a9b6b5c37p-8, -0x1.012ad9c50d800p-8, -0x1.508cc7e6c123ap-12, 0x1.64295af2ce618p-11}, \
    {0x1.d2cdb967d6432p-1, 0x1.9affb8acc29bep-1, 0x1.f73615f075e60p-2, 0x1.b61b6d2ee0eccp-57, -0x1.caca6b58bcfbap-2, 0x1.bc7ec271de4dfp-4, 0x1.991792c8e700bp-4, -0x1.1a8a5c32bbf15p-4, -0x1.7398900f81ec0p-8, 0x1.25491efd7db0ap-6, -0x1.778577d28059cp-9, -0x1.7c15ea2c6bb6fp-9, 0x1.0e081e626dbdcp-10, 0x1.30bc68bd5dbdep-12}, \
    {0x1.2c21203730904p+0, 0x1.ce2c4ef3d4322p-1, 0x1.244c9b85ac79dp-2, 0x1.ac849a187eb3ep-61, -0x1.56af98e949b4ap-2, 0x1.54cfc196c84bep-3, 0x1.cad485787d321p-7, -0x1.cec42644f40f8p-5, 0x1.2c83c1dec43e0p-6, 0x1.decf9fa14b047p-8, -0x1.8dea893200cfap-8, 0x1.519bf27970be1p-13, 0x1.0fcea2f50d4eap-10, -0x1.f6aa39474c9c6p-13}, \
    {0x1.6e97d38e3f9e5p+0, 0x1.ea0f703e49021p-1, 0x1.294e96ba33a32p-3, -0x1.d73619d6bd556p-57, -0x1.a9beae8a175abp-3, 0x1.3357e0fc0189bp-3, -0x1.3892ec3c7177cp-5, -0x1.7b89c362ef181p-6, 0x1.5bdf71ba4adf7p-6, -0x1.9fb60bd31f94bp-9, -0x1.bf88d7af10a50p-9, 0x1.be823d0b2a70dp-10, 0x1.ff17fc47294fbp-14, -0x1.4576ba93ec0d8p-12}, \
    {0x1.b2561cbb851dap+0, 0x1.f7977e81e92e4p-1, 0x1.03d31d1f4c302p-4, -0x1.ee74c055dfaf8p-58, -0x1.b8d34d7441239p-4, 0x1.9c00a223a6fb1p-4, -0x1.952175b23f493p-5, 0x1.bbd9ecdaa5b2ep-9, 0x1.7162a21afce22p-7, -0x1.9af5654e5b7bfp-8, 0x1.ffed3bb42b127p-13, 0x1.27740f5922f51p-10, -0x1.ba400dbd8cff5p-12, -0x1.9e0122d5d3acap-15}, \
    {0x1.fee7742bef2d8p+0, 0x1.fd8f2f1e23b57p-1, 0x1.5873156514340p-6, 0x1.f1e40bf1f3fd8p-60, -0x1.57b6586377a2dp-5, 0x1.8fe4d5802ba57p-5, -0x1.1c7799aeb5ae7p-5, 0x1.ac7954e2dabc1p-7, 0x1.264ce4a8c9556p-11, -0x1.c205ff4170078p-9, 0x1.a1869ac2a99b7p-10, -0x1.44c9e38056e08p-15, -0x1.184b4ba86a8a0p-12, 0x1.abc4cef3065a1p-14}, \
    {0x1.268456b914c29p+1, 0x1.ff6ad76704f3ap-1, 0x1.73457da990205p-8, -0x1.dd62fd06d4708p-66, -0x1.ab21bbeb4ac21p-7, 0x1.28a892cc0c05fp-6, -0x1.0e1aaa0426db7p-6, 0x1.3f31a8b290c85p-7, -0x1.93073a42a1b8cp-9, -0x1.38556cc998d49p-12, 0x1.b34d8cf97de73p-11, -0x1.8082ddb00c1cap-12, 0x1.498e01b32cd64p-16, 0x1.bd6616f911493p-15}, \
    {0x1.4f5c2dbc4a685p+1, 0x1.ffe451a068283p-1, 0x1.34e743284d0f9p-10, -0x1.f631f8014ef08p-68, -0x1.94a9db2dba7c4p-9, 0x1.47aa0c816183ap-8, -0x1.69cbdd7b0a4b7p-8, 0x1.18dd066c1f1e8p-8, -0x1.299de55efc03fp-9, 0x1.642c115df8b8bp-11, 0x1.5d0b8b0f97aebp-15, -0x1.47db30275278cp-13, 0x1.364621e6aab3ep-14, -0x1.3aec19818eda5p-17}, \
    {0x1.7bd2a82548845p+1, 0x1.fffc7264aca79p-1, 0x1.62d1ec4763bfdp-13, 0x1.9beef68a1d949p-71, -0x1.0738610776f55p-11, 0x1.eb2542b0add71p-11, -0x1.407b6d9eadebep-10, 0x1.32b92ba0c3d2ep-10, -0x1.b3d989039eb57p-11, 0x1.beed0785b4396p-12, -0x1.21875e3dc3a36p-13, 0x1.11bfdd133f7e0p-17, 0x1.4eeb0b7b04644p-16, -0x1.922dada4e3977p-17}, \
    {0x1.ac5ec4632e304p+1, 0x1.ffffb5b860671p-1, 0x1.02dd181218405p-16, -0x1.e893c1830af4ep-70, -0x1.b129780279e9bp-15, 0x1.cda4076f9a6f2p-14, -0x1.5e23c67d84938p-13, 0x1.8f7889c8a0e15p-13, -0x1.60420311acd64p-13, 0x1.e36c083ae5901p-14, -0x1.fb07ace379773p-15, 0x1.7a29cfe4e7ee4p-16, -0x1.1a2e3598f7902p-18, -0x1.2dafe478dac3ep-20}, \
    {0x1.e1fde55c1a7b8p+1, 0x1.fffffc9e48b88p-1, 0x1.a4fcb8d02af97p-21, -0x1.6483862738e5ap-75, -0x1.8c502f185332ep-19, 0x1.dfe7f22a1e8f3p-18, -0x1.a2c0b33ddb7ccp-17, 0x1.175ff4a5ac511p-16, -0x1.26d58bb6b3cc7p-16, 0x1.f55f6f16cf989p-17, -0x1.599bcf155ae2cp-17, 0x1.7f7b93590f549p-18, -0x1.4d92386513742p-19, 0x1.9335c4f710aeep-21}, \
    {0x1.100e0da4fadc2p+2, 0x1.fffffff038e27p-1, 0x1.135633a8049e5p-26, -0x1.c4cd186eb1a99p-80, -0x1.249ab47d731ecp-24, 0x1.93225351f46ebp-23, -0x1.94084f9f4f024p-22, 0x1.3942fd4001a87p-21, -0x1.860447f715686p-21, 0x1.8f1bc1be65507p-21, -0x1.543024faba300p-21, 0x1.e74fe1a5b7615p-22, -0x1.30ca89788b8a7p-22, 0x1.3600d120a5c1bp-23}, \
    {0x1.335f6c569996ep+2, 0x1.ffffffffe7b03p-1, 0x1.dcc6624bf7f13p-34, 0x1.2e62f73b6f0f2p-89, -0x1.1e39d8c6f457cp-31, 0x1.c04907673aae6p-30, -0x1.013161b9d3639p-28, 0x1.cc7d8c00f3c53p-28, -0x1.4e67d456b5fa1p-27, 0x1.93a8f1107b6ddp-27, -0x1.9aa8c17b100c1p-27, 0x1.6d19ed63ee3e2p-27, -0x1.2e711294097c3p-27, 0x1.61e6b48558ed1p-28}, \
    {0x1.63cd516f9fb9dp+2, 0x1.fffffffffffdep-1, 0x1.7ffa721574889p-45, -0x1.91af04a59c193p-100, -0x1.0add980f81693p-42, 0x1.e673931ac978bp-41, -0x1.4689ea8374e08p-39, 0x1.596827f8b7538p-38, -0x1.2d3bd77d7fdfdp-37, 0x1.b04a04b0ec5a9p-37, -0x1.f36ab4da9559fp-37, 0x1.1d04e72d5a000p-36, -0x1.750398ea08c1ep-36, 0x1.145643f8f7efcp-36}, \
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

