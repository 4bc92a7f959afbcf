"""Records PostgreSQL 15's interval input and its output in every
IntervalStyle; writes interval_pg15.tsv: input, qualifier, then the
postgres, postgres_verbose, sql_standard and iso_8601 outputs (or the error)."""
import subprocess, os
HERE = os.path.dirname(os.path.abspath(__file__))
PSQL = ['psql', '-h', os.environ.get('PGHOST', '/tmp'), '-p', os.environ.get('PGPORT', '5493'), '-U', 'postgres', '-X', '-At', '-v', 'VERBOSITY=verbose']
cases = [(l, '') for l in open(os.path.join(HERE, 'interval_inputs.txt')).read().split('\n') if l]
cases += [('90', 'day'), ('90', 'day (3)'), ('1', 'month'), ('1', 'year'), ('1-2', 'year to month'), ('1 day 2 hours 3 minutes 4.5 seconds', 'day'),
          ('1 day 2 hours 3 minutes 4.5 seconds', 'hour'), ('1 day 2 hours 3 minutes 4.5 seconds', 'day to minute'), ('1 year 5 months', 'year'),
          ('90', 'minute'), ('90', 'hour to minute'), ('90', 'second'), ('4:05', 'minute to second'), ('1 day 2 hours 3 minutes 4.56789 seconds', 'second (2)'),
          ('3 4:05:06', 'day to second'), ('1.5', 'day'), ('100', 'year to month')]
rows = []
for inp, q in cases:
    outs = []
    for st in ['postgres', 'postgres_verbose', 'sql_standard', 'iso_8601']:
        sql = f"set intervalstyle='{st}'; select interval '{inp}' {q}"
        r = subprocess.run(PSQL + ['-c', sql], capture_output=True, text=True)
        if r.returncode == 0:
            outs.append(r.stdout.strip().split('\n')[-1])
        else:
            outs.append('ERROR ' + r.stderr.strip().split('\n')[0].split('ERROR:  ')[1])
    rows.append([inp, q] + outs)
with open(os.path.join(HERE, 'interval_pg15.tsv'), 'w') as f:
    for r in rows:
        f.write('\t'.join(r) + '\n')
print(len(rows))
