"""Records PostgreSQL 15's text input/output of date/time types.

Run against a PostgreSQL 15 server (PGPORT etc. in the environment or the
defaults below); writes datetime_pg15.tsv beside this file: type, input,
settings (TimeZone|DateStyle), and what PostgreSQL printed (or its error).
"""
import subprocess, os
HERE = os.path.dirname(os.path.abspath(__file__))
PSQL = ['psql', '-h', os.environ.get('PGHOST', '/tmp'), '-p', os.environ.get('PGPORT', '5493'), '-U', 'postgres', '-X', '-At', '-v', 'VERBOSITY=verbose']
dates = open(os.path.join(HERE, 'datetime_inputs.txt')).read().split('\n')
settings = ['UTC|ISO, MDY', 'UTC|ISO, DMY', 'America/New_York|ISO, MDY', 'Asia/Kolkata|Postgres, MDY', 'Europe/Berlin|SQL, DMY', 'UTC|German']
rows = []
for line in dates:
    if not line.strip() or line.startswith('#'):
        continue
    ty, inp = line.split('\t', 1)
    for st in (settings if ty in ('timestamptz',) else settings[:2]):
        tz, ds = st.split('|')
        q = f"set timezone='{tz}'; set datestyle='{ds}'; select '{inp}'::{ty}::text"
        r = subprocess.run(PSQL + ['-c', q], capture_output=True, text=True)
        if r.returncode == 0:
            out = r.stdout.strip().split('\n')[-1]
        else:
            out = 'ERROR ' + r.stderr.strip().split('\n')[0].split('ERROR:  ')[1]
        rows.append((ty, inp, st, out))
with open(os.path.join(HERE, 'datetime_pg15.tsv'), 'w') as f:
    for r in rows:
        f.write('\t'.join(r) + '\n')
print(len(rows))
