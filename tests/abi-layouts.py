#!/usr/bin/env python3
"""The layouts ACCEL_BACKEND_ABI stands for (accel/backend.h): each struct a
plugin reads, its definition with comments and blanks removed, hashed. Prints
"abi N" and one "STRUCT SHA256" line per struct; tests/registry.bats compares
that with tests/abi-layouts.txt, so that a layout changed without raising
ACCEL_BACKEND_ABI fails the tests (record the new lines with
`python3 tests/abi-layouts.py > tests/abi-layouts.txt` once it is raised)."""
import hashlib, os, re, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
INC = os.path.join(ROOT, 'libcore', 'include', 'accel')
STRUCTS = ['accel_backend', 'accel_op', 'accel_engine', 'accel_api_info', 'accel_api_note', 'accel_prior_bound',
           'accel_device', 'accel_prop', 'accel_api', 'accel_buf', 'accel_unit',
           'accel_fft', 'accel_age_key', 'accel_hash_files', 'accel_onnx_params', 'accel_tensor']
# Array sizes inside those structs.
MACROS = ['ACCEL_MAX_PROPS', 'ACCEL_MAX_APIS', 'ACCEL_TENSOR_MAX_DIMS']

text = ''
for d, _, files in os.walk(INC):
    for f in sorted(files):
        text += open(os.path.join(d, f)).read() + '\n'
text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
m = re.search(r'#define ACCEL_BACKEND_ABI (\d+)', text)
print('abi', m.group(1))
def body(kind, name):
    end = r'^\};' if kind == 'struct' else r'\};'   # enums nest no braces
    m = re.search(r'^%s %s \{(.*?)%s' % (kind, name, end), text, re.S | re.M)
    if not m:
        sys.exit('abi-layouts: %s %s not found' % (kind, name))
    return re.sub(r'\s+', ' ', m.group(1)).strip()

enums = []
for s in STRUCTS:
    b = body('struct', s)
    enums += [e for e in re.findall(r'\benum (accel_\w+)', b) if e not in enums]
    print(s, hashlib.sha256(b.encode()).hexdigest()[:16])
# The values of the enums those structs hold.
for e in sorted(enums):
    print('enum', e, hashlib.sha256(body('enum', e).encode()).hexdigest()[:16])
for c in MACROS:
    m = re.search(r'^#define %s (.*)$' % c, text, re.M)
    print(c, re.sub(r'\s+', ' ', m.group(1)).strip() if m else 'enum')
