"""Records PostgreSQL 15's explicit casts between tusk's types: writes
casts_pg15.tsv (from type, literal, target type, result or error)."""
import subprocess, os
HERE = os.path.dirname(os.path.abspath(__file__))
PSQL = ['psql', '-h', os.environ.get('PGHOST', '/tmp'), '-p', os.environ.get('PGPORT', '5493'), '-U', 'postgres', '-X', '-At', '-v', 'VERBOSITY=verbose']
vals = {
    'bool': ['true', 'false'],
    'int2': ['-32768', '7', '0'],
    'int4': ['-2147483648', '40000', '1', '0', '-7'],
    'int8': ['9223372036854775807', '3000000000', '-40000', '5'],
    'float4': ['1.5', '-2.5', '3.4e38', '0.1', 'NaN', '-Infinity', '1e-30', '32767.6'],
    'float8': ['2.5', '3.5', '-0.5', '1e300', '0.1', '2147483647.4', '2147483647.5', '-9223372036854775809', 'NaN', '123456789.987654321', '1e-50'],
    'numeric': ['2.5', '-2.5', '123.456', '1e30', 'NaN', 'Infinity', '0.1', '32767.5'],
    'text': ['  42 ', 'abc', '2021-02-03', '1.5', 't', '04:05:06', '1 day', 'infinity'],
    'bpchar(5)': ['ab', 'abcde'],
    'varchar(3)': ['abc'],
    'date': ['2021-02-03', 'infinity', '0044-03-15 BC'],
    'time': ['04:05:06.5', '24:00:00'],
    'timestamp': ['2021-02-03 04:05:06.5', 'infinity', '2021-03-14 02:30:00'],
    'timestamptz': ['2021-02-03 04:05:06.5+00', '-infinity', '2021-07-01 23:30:00+00'],
    'interval': ['1 day 04:05:06', '-04:00:00', '1 mon 27:00:00'],
}
targets = ['bool', 'int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'numeric(5,2)', 'text', 'varchar(2)', 'bpchar(4)', 'date', 'time', 'timestamp', 'timestamptz', 'interval']
rows = []
for ft, lits in vals.items():
    for lit in lits:
        for tt in targets:
            q = f"set timezone='America/New_York'; select coalesce('[' || '{lit}'::{ft}::{tt}::text || ']', 'NULL')"
            r = subprocess.run(PSQL + ['-c', q], capture_output=True, text=True)
            if r.returncode == 0:
                out = r.stdout.rstrip('\n').split('\n')[-1]
            else:
                out = 'ERROR ' + r.stderr.strip().split('\n')[0].split('ERROR:  ')[1]
            rows.append((ft, lit, tt, out))
with open(os.path.join(HERE, 'casts_pg15.tsv'), 'w') as f:
    for r in rows:
        f.write('\t'.join(r) + '\n')
print(len(rows))
