#!/usr/bin/env python3
"""Generates message/testdata/traceback_golden.json for traceback_test.go.

Each case pairs the RaisedException the worker sends (its StackFrames) with
the traceback text the worker's CLI prints for the same code. Run from the
repository root:

    python3 message/testdata/gen-traceback-golden.py [MONTY] [VECTORS_DIR] \
        > message/testdata/traceback_golden.json

MONTY defaults to .monty/bin/monty (the released worker) and VECTORS_DIR to
the recorded protocol-2 vectors. The tests read only the JSON this writes.

Frames come from two sources:
  - "vector:NAME": the Error event recorded in VECTORS_DIR/NAME.json
    (decoded from its response_frames_hex);
  - "probe": the Error event of a fresh `monty subprocess` run of the code.
The expected text is what `monty -c CODE` prints on stderr after the timing
prefix ("12.3ms ❯ error: ", or "error:\\n" for a SyntaxError). The worker
names the fed code "<python-input-0>" and the CLI names it "<string>"; the
frames here have their filename replaced by "<string>" to match.
"""

import json
import os
import re
import struct
import subprocess
import sys

MONTY = sys.argv[1] if len(sys.argv) > 1 else '.monty/bin/monty'
VECTORS = sys.argv[2] if len(sys.argv) > 2 else '/work/shared/vectors/v2'

VECTOR_CASES = [
    'error_nested_traceback',
    'limit_recursion_default',
    'error_syntax',
    'error_syntax_second_line',
    'presence_syntax_error_empty_code_line',
    'error_custom_exception_class',
    'error_unsupported_syntax',
    'error_lambda_frame',
    'error_method_frame',
    'error_assert',
    'error_key_error',
    'error_json_decode',
    'error_reraise',
    'error_chained',
    'error_zero_division',
    'presence_raised_empty_message',
    'error_unicode_decode',
    'error_stop_iteration',
    'print_before_error',
]

PROBES = [
    ('probe_no_message', "raise ValueError()"),
    ('probe_multiline_message', "raise ValueError('a\\nb')"),
    ('probe_repeat_once', "def r(n):\n    if n == 0:\n        raise ValueError('x')\n    return r(n - 1)\nr(4)"),
    ('probe_repeat_three', "def r(n):\n    if n == 0:\n        raise ValueError('x')\n    return r(n - 1)\nr(3)"),
    ('probe_mutual_recursion', "def a(n):\n    return b(n - 1)\ndef b(n):\n    if n < 0:\n        1/0\n    return a(n)\na(3)"),
    ('probe_multiline_binop', "x = (1 +\n     2 +\n     None)"),
    ('probe_multiline_call_elided', "def f(a, b):\n    return a / b\nf(\n    1,\n    0,\n)"),
    ('probe_backslash_continuation', "x = 1 +\\\n  None"),
    ('probe_continuation_line', "x = [\n  1/0]"),
    ('probe_tab_indent', "if True:\n\t1/0"),
    ('probe_form_feed', "\x0c1/0"),
    ('probe_trailing_space', "1/0 "),
    ('probe_non_ascii_column', "s = '\u00e9\u00e9\u00e9'; s + 1"),
    ('probe_cjk_identifier', "\u53d8\u91cf = 1/0"),
    ('probe_unexpected_indent', "\tx = 1"),
    ('probe_nbsp_syntax', "x = (\n\u00a01/0)"),
    ('probe_import_error', "import nosuchmod"),
    ('probe_attribute_error', "x = 1\nx.foo"),
    ('probe_assert_message', "assert 1 == 2, 'msg'"),
    ('probe_deep_function', "def f():\n    return (\n        1/0\n    )\nf()"),
    ('probe_crlf', "x = 1\r\ny = x +\\\r\n  None"),
]


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return r, i


def fields(b):
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError('wire type %d' % w)
        out.append((f, v))
    return out


def loc(b):
    d = dict(fields(b))
    return [d.get(1, 0), d.get(2, 0)]


def frame(b):
    fr = {'filename': '', 'start': [0, 0], 'end': [0, 0]}
    for f, v in fields(b):
        if f == 1:
            fr['filename'] = v.decode()
        elif f == 2:
            fr['start'] = loc(v)
        elif f == 3:
            fr['end'] = loc(v)
        elif f == 4:
            fr['frame_name'] = v.decode()
        elif f == 5:
            fr['preview_line'] = v.decode()
        elif f == 6:
            fr['hide_caret'] = bool(v)
        elif f == 7:
            fr['hide_frame_name'] = bool(v)
    return fr


def exception(b):
    e = {'type': '', 'traceback': []}
    for f, v in fields(b):
        if f == 1:
            e['type'] = v.decode()
        elif f == 2:
            e['message'] = v.decode()
        elif f == 3:
            e['traceback'].append(frame(v))
    return e


def error_of_event(b):
    """The RaisedException of a ChildEvent.error(7).exception(1), or None."""
    for f, v in fields(b):
        if f == 7:
            for f2, v2 in fields(v):
                if f2 == 1:
                    return exception(v2)
    return None


def ld(field, data):
    def uv(n):
        o = b''
        while True:
            c, n = n & 0x7f, n >> 7
            if n:
                o += bytes([c | 0x80])
            else:
                return o + bytes([c])
    return uv(field << 3 | 2) + uv(len(data)) + data


def run_subprocess(code):
    configure = ld(1, ld(1, b'main.py') + bytes([0x48, 2]))  # script_name, protocol_version 2
    feed = ld(3, ld(1, code.encode()))
    shutdown = bytes.fromhex('5200')
    data = b''.join(struct.pack('<I', len(m)) + m for m in (configure, feed, shutdown))
    out = subprocess.run([MONTY, 'subprocess'], input=data, capture_output=True, timeout=120).stdout
    i = 0
    while i < len(out):
        n = struct.unpack('<I', out[i:i + 4])[0]
        e = error_of_event(out[i + 4:i + 4 + n])
        if e:
            return e
        i += 4 + n
    raise RuntimeError('no Error event for %r' % code)


def run_cli(code):
    p = subprocess.run([MONTY, '-c', code], capture_output=True, timeout=120)
    s = p.stderr.decode()
    if s.startswith('error:\n'):
        return s[len('error:\n'):]
    m = re.search('\u276f error: ', s)
    if not m:
        raise RuntimeError('no error printed for %r: %r' % (code, s))
    return s[m.end():]


def vector_case(name):
    d = json.load(open(os.path.join(VECTORS, name + '.json')))
    for ex in d['exchanges']:
        if not ex['request_decoded'].startswith('feed'):
            continue
        for h in ex['response_frames_hex']:
            e = error_of_event(bytes.fromhex(h))
            if e:
                return d['python_code'], e
    raise RuntimeError('no error in vector ' + name)


def compact(case):
    """One frame per line keeps the 1000-frame recursion case readable."""
    head = json.dumps({k: v for k, v in case.items() if k != 'exception'}, ensure_ascii=False)[:-1]
    exc = case['exception']
    frames = ',\n'.join('    ' + json.dumps(f, ensure_ascii=False) for f in exc['traceback'])
    meta = {k: v for k, v in exc.items() if k != 'traceback'}
    return (head + ', "exception": ' + json.dumps(meta, ensure_ascii=False)[:-1] +
            (', "traceback": [\n' + frames + '\n  ]}}' if frames else ', "traceback": []}}'))


def main():
    cases = []
    for name in VECTOR_CASES:
        code, e = vector_case(name)
        cases.append(('vector:' + name, name, code, e))
    for name, code in PROBES:
        cases.append(('probe', name, code, run_subprocess(code)))
    out = []
    for source, name, code, e in cases:
        for fr in e['traceback']:
            if re.fullmatch(r'<python-input-\d+>', fr['filename']):
                fr['filename'] = '<string>'
        out.append(compact({'name': name, 'source': source, 'python_code': code,
                            'want': run_cli(code), 'exception': e}))
    version = subprocess.run([MONTY, '--version'], capture_output=True).stdout.decode().strip()
    sys.stdout.write('{"generator": "message/testdata/gen-traceback-golden.py", "worker": %s, "cases": [\n'
                     % json.dumps(version))
    sys.stdout.write(',\n'.join(out))
    sys.stdout.write('\n]}\n')


if __name__ == '__main__':
    main()
