import subprocess
cases = []
vals = ['0','1','-1','1.50','-7.25','0.00000000000000000001','9223372036854775807','123456789012345678901234567890.123','-99999999999999999999999999999999999999','3.14159','1e-10','2.5','1000000','0.001','NaN','Infinity','-Infinity']
ops = {'+':'+','-':'-','*':'*','/':'/','%':'%'}
pairs = []
for a in vals:
    for b in vals:
        pairs.append((a,b))
for a,b in pairs:
    for op in ['+','-','*','/','%','cmp']:
        cases.append((op,a,b))
# functions
fn1 = ['sqrt','exp','ln','log10','ceil','floor','abs','sign','round','trunc']
vals1 = ['0','1','2','2.5','-2.5','10','0.001','1e-10','123456.789','99.99','0.5','1e20','-1e-5','1.1','0.9','1.0001','NaN','Infinity','-Infinity','100','1e100','-3.7']
for f in fn1:
    for a in vals1:
        cases.append((f,a,''))
pw = [('2','10'),('1.5','3'),('2','-2'),('0','0'),('4','0.5'),('2','0.5'),('10','-3'),('-2','3'),('-2','-3'),('1.0001','10000'),('3','100'),('0.5','100'),('7','1.5'),('2.5','2.5'),('10','20'),('1e-5','3'),('-8','0.333'),('0','-1'),('0','2.5'),('NaN','0'),('1','NaN'),('Infinity','2'),('-Infinity','3'),('-Infinity','2'),('2','Infinity'),('0.5','Infinity'),('2','-Infinity'),('123.456','7'),('9.99','-5')]
for a,b in pw: cases.append(('power',a,b))
lg = [('2','8'),('10','1000'),('2','10'),('3.5','100'),('10','0.5'),('1','5'),('1e10','1e20'),('2','1.5')]
for a,b in lg: cases.append(('log',a,b))
rnd = [('123.456','2'),('123.456','-1'),('123.456','-3'),('-0.5','0'),('2.5','0'),('1.23456789','5'),('99.995','2'),('-99.995','2'),('5','3')]
for a,b in rnd:
    cases.append(('round2',a,b)); cases.append(('trunc2',a,b))
dv = [('7','2'),('-7','2'),('7.5','-2'),('1e30','7')]
for a,b in dv: cases.append(('div',a,b))
inputs = [' 1.5e3 ','inf','-Infinity','+inf','nan',' NaN ','1.','.5','-.5e-2','1e+2','1e','.','1 2','','abc','1e 5','+-1','1.2.3','  -0.000  ','00012.3400','1e-16383','1e-16384','0e2000000','0e-2000000','1e131071','1e131072','12345678901234567890123456789012345678901234567890','-1E-3','1e2147483647','Infinityx','- 1']
for a in inputs: cases.append(('in',a,''))
tm = [('1.234','10,2'),('12345.6','5,2'),('0.1','3,3'),('1','3,3'),('123.456','5,-2'),('12345.6','2,-3'),('0.5','1,0'),('9.5','1,0'),('-9.4','1,0'),('NaN','5,2'),('Infinity','5,2'),('99.995','4,2'),('99.994','4,2'),('0.0000001','5,5'),('1e30','40,5')]
for a,b in tm: cases.append(('typmod',a,b))
iv = ['0','2.5','-2.5','32767.4','32767.5','-32768.5','2147483647.49','2147483647.5','-2147483648.5','9223372036854775807.4','9223372036854775807.5','-9223372036854775808.5','1e30','NaN','Infinity','-Infinity']
for a in iv:
    for t in ['int2','int4','int8']: cases.append((t,a,''))
fl = ['0.1','1e20','1.5e-7','123456789.123','1e-300','NaN','-Infinity','0.333333333333333333','1e400','1e-400','1e39','1e-50','-0','3.4028235e38','123456789012345678']
for a in fl:
    for t in ['float8','float4']: cases.append(('to_'+t,a,''))
ff = ['0.1','1e20','1.5e-7','123456789.123','1e-300','NaN','-Infinity','0.3333333333333333','1e15','1e16','123456.7','1.0000001','5e-324','1.7976931348623157e308']
for a in ff:
    for t in ['float8','float4']: cases.append(('from_'+t,a,''))
def sql(op,a,b):
    A=f"'{a}'::numeric" if op!='in' else "'"+a+"'::numeric"; B=f"'{b}'::numeric"
    if op in ['+','-','*','/','%']: return f"({A} {op} {B})::text"
    if op=='cmp': return f"(case when {A} < {B} then '<' when {A} = {B} then '=' else '>' end)"
    if op=='log10': return f"log({A})::text"
    if op in ('round','trunc','ceil','floor','abs','sign','sqrt','exp','ln'): return f"{op}({A})::text"
    if op=='power': return f"power({A},{B})::text"
    if op=='log': return f"log({A},{B})::text"
    if op=='round2': return f"round({A},{b})::text"
    if op=='trunc2': return f"trunc({A},{b})::text"
    if op=='div': return f"div({A},{B})::text"
    if op=='in': return f"{A}::text"
    if op=='typmod': return f"{A}::numeric({b})::text"
    if op in ('int2','int4','int8'): return f"{A}::{op}::text"
    if op.startswith('to_'): return f"{A}::{op[3:]}::text"
    if op.startswith('from_'): return f"'{a}'::{op[5:]}::numeric::text"
out=[]
for op,a,b in cases:
    q = "select " + sql(op,a,b)
    r = subprocess.run(['psql','-h','/tmp','-p','5493','-U','postgres','-X','-At','-v','VERBOSITY=verbose','-c',q],capture_output=True,text=True)
    if r.returncode==0:
        res = r.stdout.rstrip('\n')
    else:
        e = r.stderr.strip().split('\n')[0]
        # ERROR:  22012: division by zero
        res = 'ERROR ' + e.split('ERROR:  ')[1]
    out.append((op,a,b,res))
with open(__file__.rsplit('/',1)[0]+'/numeric_pg15.tsv','w') as f:
    for op,a,b,res in out:
        f.write(f"{op}\t{a}\t{b}\t{res}\n")
print(len(out))
