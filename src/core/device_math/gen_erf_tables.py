"""Regenerate erf_tables.hpp from the SIMD kernel's tables (src/core/kernels/erf.hpp).

Usage: python3 src/core/device_math/gen_erf_tables.py > src/core/device_math/erf_tables.hpp
"""
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
src = (HERE.parent / "kernels" / "erf.hpp").read_text()
HEADER = (HERE / "erf_tables.hpp").read_text().split("// erf_table_f64")[0]
out=[]
for name in ['f64','f32']:
    s=src.index('struct erf_table_%s {'%name); e=src.index('\n};',s)
    body=src[s:e]
    hdr={}
    for key in ['degree','xmax','qb','qc','qn']:
        m=re.search(r'static constexpr (?:int|double) %s = ([^;]+);'%key, body); hdr[key]=m.group(1)
    deg=int(hdr['degree'])
    def arr(nm):
        i=body.index('double %s['%nm); j=body.index('};',i)
        return re.findall(r'(-?0x[0-9a-fA-F.]+p[+-]?\d+)', body[i:j])
    cols=[arr('m'),arr('c0'),arr('c1hi'),arr('c1lo')]
    i=body.index('double c[');
    allc=re.findall(r'(-?0x[0-9a-fA-F.]+p[+-]?\d+)', body[i:])
    assert len(allc)==16*(deg-1),(len(allc),deg)
    for j in range(deg-1): cols.append(allc[16*j:16*j+16])
    for c in cols: assert len(c)==16
    ncol=len(cols)
    out.append(f"// erf_table_{name}: degree {deg}; row k = m, c0, c1hi, c1lo, c2..c{deg}")
    out.append(f"#define NUMFUSE_DM_ERF_{name.upper()}_DEGREE {deg}")
    for key in ['xmax','qb','qc','qn']:
        out.append(f"#define NUMFUSE_DM_ERF_{name.upper()}_{key.upper()} {hdr[key].split('//')[0].strip()}")
    out.append(f"#define NUMFUSE_DM_ERF_{name.upper()}_ROWS {{ \\")
    for k in range(16):
        vals=", ".join(cols[c][k] for c in range(ncol))
        out.append(f"    {{{vals}}}, \\")
    out.append("}")
    out.append("")
print(HEADER + "\n".join(out))
