#!/usr/bin/env python3
"""Generates value/testdata/repr_golden.json, the golden file of value's repr tests.

Each case is a Python expression, the graph gomonty would receive for the value
it evaluates to (built here by walking the value the way the worker encodes it)
and the repr() and str() CPython prints for it. The Go test decodes the graph,
renders it with Graph.Repr / Graph.Str and compares.

Run it with the machine's python3 from the repository root:

    python3 scripts/gen-repr-golden.py > value/testdata/repr_golden.json

The goldens target CPython 3.14, the language the worker implements. This
script runs on whatever python3 is installed (3.11 when it was written); the
few places where 3.11 and 3.14 print differently are fixed up in FIXUPS below,
each with the reason.
"""

import atexit
import collections
import dataclasses
import datetime
import io
import itertools
import json
import os
import pathlib
import re
import shutil
import sys
import tempfile

# ---------------------------------------------------------------------------
# Helpers the case expressions use.

PATH_RAW = {}  # id(path) -> the text the graph carries for it


def P(raw):
    """A PosixPath whose graph text is raw (the unnormalized constructor arg)."""
    p = pathlib.PosixPath(raw)
    PATH_RAW[id(p)] = raw
    return p


class AsType:
    """Marks a class that is also a builtin function name (type) to be sent as a Type."""

    def __init__(self, t):
        self.t = t


KEEP = []  # keeps helper objects alive so their id() stays unique


def tz(seconds, name=None):
    d = datetime.timedelta(seconds=seconds)
    return datetime.timezone(d) if name is None else datetime.timezone(d, name)


utc = datetime.timezone.utc
Point = collections.namedtuple('Point', 'x y')
Empty = collections.namedtuple('Empty', '')


@dataclasses.dataclass
class D:
    a: object
    b: object = 'x'


@dataclasses.dataclass
class E:
    pass


@dataclasses.dataclass(frozen=True)
class Frozen:
    n: int


def cyclic_list():
    a = [1]
    a.append(a)
    return a


def cyclic_dict():
    d = {}
    d['self'] = d
    return d


def cyclic_tuple():
    t = ([],)
    t[0].append(t)
    return t


def nested_cycle():
    a = []
    a.append([a])
    return a


def cyclic_dataclass():
    d = D(1)
    d.b = [d]
    return d


def shared():
    s = [1]
    return [s, s]


def shared_deep():
    s = {'k': (1, 2)}
    return ([s], s, {'again': s})


def json_error():
    try:
        json.loads('')
    except json.JSONDecodeError as e:
        return e


TMP = tempfile.mkdtemp()
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
os.chdir(TMP)
for n in ('r.txt', 'rb.bin'):
    open(n, 'w').close()


def fh(name, mode):
    f = open(name, mode, encoding=None if 'b' in mode else 'utf-8')
    KEEP.append(f)
    return f


# ---------------------------------------------------------------------------
# The cases: (name, expression). Names are stable ids for the Go test.

CASES = [
    # singletons and bools
    ('none', 'None'),
    ('ellipsis', '...'),
    ('not_implemented', 'NotImplemented'),
    ('true', 'True'),
    ('false', 'False'),
    # ints
    ('int_zero', '0'),
    ('int_neg', '-42'),
    ('int_max', '2**63 - 1'),
    ('int_min', '-2**63'),
    ('bigint_2_63', '2**63'),
    ('bigint_neg', '-2**63 - 1'),
    ('bigint_googol', '10**100'),
    ('bigint_neg_huge', '-(3**300)'),
    # floats
    ('float_one', '1.0'),
    ('float_tenth', '0.1'),
    ('float_zero', '0.0'),
    ('float_neg_zero', '-0.0'),
    ('float_1e16', '1e16'),
    ('float_1e15', '1e15'),
    ('float_16_digits', '9999999999999998.0'),
    ('float_1e-05', '1e-05'),
    ('float_1e-04', '0.0001'),
    ('float_2_5e-05', '2.5e-05'),
    ('float_1_5e300', '1.5e300'),
    ('float_1e22', '1e22'),
    ('float_inf', "float('inf')"),
    ('float_neg_inf', "float('-inf')"),
    ('float_nan', "float('nan')"),
    ('float_neg_nan', "-float('nan')"),
    ('float_min_subnormal', '5e-324'),
    ('float_max', '1.7976931348623157e308'),
    ('float_big_fixed', '123456789012345678.0'),
    ('float_point3', '0.1 + 0.2'),
    ('float_neg', '-1.5'),
    ('float_plain', '12345.678'),
    ('float_neg_small', '-1.25e-10'),
    # str
    ('str_empty', "''"),
    ('str_plain', "'hello'"),
    ('str_single_quote', '"it\'s"'),
    ('str_double_quote', '\'say "hi"\''),
    ('str_both_quotes', '\'it\\\'s "x"\''),
    ('str_backslash', "'a\\\\b'"),
    ('str_whitespace_escapes', "'a\\nb\\tc\\rd'"),
    ('str_controls', "'\\x00\\x01\\x1f\\x7f'"),
    ('str_c1_controls', "'\\x80\\x9f'"),
    ('str_nbsp', "'\\xa0'"),
    ('str_latin1', "'caf\\xe9 \\xff'"),
    ('str_soft_hyphen', "'\\xad'"),
    ('str_zero_width_space', "'a\\u200bb'"),
    ('str_line_separator', "'\\u2028\\u2029'"),
    ('str_emoji', "'\\U0001f600'"),
    ('str_emoji_zwj', "'\\U0001f469\\u200d\\U0001f4bb'"),
    ('str_tag_char', "'\\U000e0001'"),
    ('str_private_use', "'\\ue000'"),
    ('str_unassigned', "'\\U0010ffff'"),
    ('str_bom', "'\\ufeff'"),
    ('str_cjk', "'\\u4e2d\\u6587'"),
    ('str_combining', "'e\\u0301'"),
    ('str_ideographic_space', "'\\u3000'"),
    ('str_ansi_escape', "'\\x1b[0m'"),
    ('str_quotes_and_backslash', "'a\\'\"\\\\'"),
    ('str_only_single_quote', '"\'"'),
    ('str_greek_math', "'\\u03b1\\u2211\\U0001d400'"),
    # bytes
    ('bytes_empty', "b''"),
    ('bytes_plain', "b'abc'"),
    ('bytes_single_quote', 'b"it\'s"'),
    ('bytes_both_quotes', 'b\'both \\\' and "\''),
    ('bytes_escapes', "b'\\x00\\xff\\x7f\\n\\t\\r\\\\'"),
    ('bytes_all_controls', 'bytes(range(32))'),
    ('bytes_high', 'bytes(range(0x7e, 0x82))'),
    # containers
    ('list_empty', '[]'),
    ('list_ints', '[1, 2]'),
    ('list_mixed', "[None, True, 1.5, 'x', b'y', ...]"),
    ('tuple_empty', '()'),
    ('tuple_one', '(1,)'),
    ('tuple_two', '(1, 2)'),
    ('tuple_nested_one', '((1,),)'),
    ('set_empty', 'set()'),
    ('set_ints', '{1, 2}'),
    ('set_strs', "{'a'}"),
    ('frozenset_empty', 'frozenset()'),
    ('frozenset_one', 'frozenset({1})'),
    ('frozenset_in_set', '{frozenset({2})}'),
    ('dict_empty', '{}'),
    ('dict_one', "{'a': 1}"),
    ('dict_mixed_keys', "{1: 'x', (1, 2): [3], None: {}}"),
    ('dict_nested', "{'a': {'b': {'c': []}}}"),
    ('nested_empty', '[[], [[]], ({},), set()]'),
    ('shared_list', 'shared()'),
    ('shared_deep', 'shared_deep()'),
    ('cycle_list', 'cyclic_list()'),
    ('cycle_dict', 'cyclic_dict()'),
    ('cycle_tuple', 'cyclic_tuple()'),
    ('cycle_nested', 'nested_cycle()'),
    ('cycle_dataclass', 'cyclic_dataclass()'),
    # named tuples
    ('namedtuple_version_info', 'sys.version_info'),
    ('namedtuple_stat_result', 'os.stat_result((33188, 2, 3, 1, 1000, 1000, 42, 1700000000, 1700000001, 1700000002))'),
    ('namedtuple_point', "Point(1, 'y')"),
    ('namedtuple_empty', 'Empty()'),
    ('namedtuple_in_list', '[Point(x=[], y=Point(0, 0))]'),
    # dates and times
    ('date_leap', 'datetime.date(2024, 2, 29)'),
    ('date_min', 'datetime.date(1, 1, 1)'),
    ('date_max', 'datetime.date(9999, 12, 31)'),
    ('time_hm', 'datetime.time(12, 30)'),
    ('time_midnight', 'datetime.time(0, 0)'),
    ('time_hms', 'datetime.time(1, 2, 3)'),
    ('time_us_only', 'datetime.time(0, 0, 0, 5)'),
    ('time_utc', 'datetime.time(1, 2, 3, 4, tzinfo=utc)'),
    ('time_named_tz', "datetime.time(1, 2, tzinfo=tz(7200, 'CEST'))"),
    ('time_fold', 'datetime.time(23, 59, 59, 999999, fold=1)'),
    ('time_neg_tz_fold', 'datetime.time(1, 2, fold=1, tzinfo=tz(-3600))'),
    ('datetime_hm', 'datetime.datetime(2024, 1, 2, 3, 4)'),
    ('datetime_midnight', 'datetime.datetime(2024, 1, 2)'),
    ('datetime_hms', 'datetime.datetime(2024, 1, 2, 3, 4, 5)'),
    ('datetime_us', 'datetime.datetime(2024, 1, 2, 3, 4, 5, 6)'),
    ('datetime_us_no_sec', 'datetime.datetime(2024, 1, 2, 3, 4, 0, 60)'),
    ('datetime_utc', 'datetime.datetime(2024, 1, 2, tzinfo=utc)'),
    ('datetime_cest', "datetime.datetime(2024, 7, 1, 12, 0, tzinfo=tz(7200, 'CEST'))"),
    ('datetime_neg_offset', 'datetime.datetime(2024, 7, 1, 12, 0, 1, tzinfo=tz(-5 * 3600))'),
    ('datetime_named_utc', "datetime.datetime(2024, 7, 1, tzinfo=tz(0, 'UTC'))"),
    ('datetime_odd_offset', 'datetime.datetime(2024, 7, 1, tzinfo=tz(3661))'),
    ('datetime_max', 'datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)'),
    ('datetime_year_5', 'datetime.datetime(5, 6, 7, 8, 9, 10)'),
    # timedeltas
    ('timedelta_zero', 'datetime.timedelta(0)'),
    ('timedelta_neg_us', 'datetime.timedelta(microseconds=-1)'),
    ('timedelta_day', 'datetime.timedelta(days=1)'),
    ('timedelta_two_days', 'datetime.timedelta(days=2, microseconds=5)'),
    ('timedelta_second', 'datetime.timedelta(seconds=1)'),
    ('timedelta_us', 'datetime.timedelta(microseconds=1)'),
    ('timedelta_neg_hour', 'datetime.timedelta(hours=-1)'),
    ('timedelta_min', 'datetime.timedelta.min'),
    ('timedelta_max', 'datetime.timedelta.max'),
    ('timedelta_neg_day', 'datetime.timedelta(days=-1)'),
    # timezones
    ('timezone_utc', 'utc'),
    ('timezone_plus1', 'tz(3600)'),
    ('timezone_minus1', 'tz(-3600)'),
    ('timezone_named', "tz(7200, 'CEST')"),
    ('timezone_named_zero', "tz(0, 'UTC')"),
    ('timezone_max', 'tz(86399)'),
    ('timezone_minus_1s', 'tz(-1)'),
    ('timezone_quote_name', '''tz(60, "it's")'''),
    ('timezone_empty_name', "tz(-1800, '')"),
    # exceptions
    ('exc_value_error', "ValueError('bad')"),
    ('exc_key_error_empty', 'KeyError()'),
    ('exc_key_error_arg', "KeyError('k')"),
    ('exc_quote_arg', '''ValueError("it's")'''),
    ('exc_empty_arg', "Exception('')"),
    ('exc_stop_iteration', 'StopIteration()'),
    ('exc_zero_division', "ZeroDivisionError('division by zero')"),
    ('exc_json_decode', 'json_error()'),
    ('exc_newline_arg', "RuntimeError('a\\nb')"),
    # builtin types
    ('type_int', 'int'),
    ('type_bool', 'bool'),
    ('type_none', 'type(None)'),
    ('type_range', 'range'),
    ('type_date', 'datetime.date'),
    ('type_timezone', 'datetime.timezone'),
    ('type_value_error', 'ValueError'),
    ('type_json_error', 'json.JSONDecodeError'),
    ('type_posix_path', 'pathlib.PosixPath'),
    ('type_frozen_instance_error', 'dataclasses.FrozenInstanceError'),
    ('type_field', 'dataclasses.Field'),
    ('type_buffered_reader', 'io.BufferedReader'),
    ('type_deque', 'collections.deque'),
    ('type_chain', 'itertools.chain'),
    ('type_pattern', 're.Pattern'),
    ('type_ellipsis', 'type(...)'),
    ('type_not_implemented', 'type(NotImplemented)'),
    ('type_function', 'type(P)'),
    ('type_builtin_function', 'type(len)'),
    ('type_module', 'type(os)'),
    ('type_type', 'AsType(type)'),
    # builtin functions
    ('builtin_len', 'len'),
    ('builtin_print', 'print'),
    ('builtin_isinstance', 'isinstance'),
    ('builtin_type', 'type'),
    ('builtin_zip', 'zip'),
    ('builtin_enumerate', 'enumerate'),
    ('builtin_open', 'open'),
    ('builtin_object_setattr', 'object.__setattr__'),
    # paths
    ('path_abs', "P('/a/b')"),
    ('path_rel', "P('rel.txt')"),
    ('path_messy', "P('a//b/')"),
    ('path_empty', "P('')"),
    ('path_dot_parts', "P('a/./b/.')"),
    ('path_two_slashes', "P('//a//b')"),
    ('path_three_slashes', "P('///a')"),
    ('path_dotdot', "P('/../x/..')"),
    ('path_quote', '''P("it's")'''),
    ('path_in_list', "[P('/x'), P('y')]"),
    # file handles
    ('file_r', "fh('r.txt', 'r')"),
    ('file_w', "fh('w.txt', 'w')"),
    ('file_a', "fh('a.txt', 'a')"),
    ('file_rb', "fh('rb.bin', 'rb')"),
    ('file_wb', "fh('wb.bin', 'wb')"),
    ('file_ab', "fh('ab.bin', 'ab')"),
    ('file_quote_name', '''fh("it's.txt", 'w')'''),
    # values sent as repr text
    ('repr_range', 'range(0, 3)'),
    ('repr_slice', 'slice(1, 2, None)'),
    ('repr_in_list', '[range(3), 1]'),
    # dataclass instances
    ('dataclass_simple', "D(1, 'x')"),
    ('dataclass_nested', 'D(D(None, []), {"k": D(2)})'),
    ('dataclass_empty', 'E()'),
    ('dataclass_frozen', 'Frozen(3)'),
    ('dataclass_in_dict', "{'d': D(a=1.5, b=b'z')}"),
    # a bit of everything
    ('kitchen_sink', "[{'when': datetime.datetime(2024, 1, 2, tzinfo=utc), 'dur': datetime.timedelta(seconds=90)}, (P('/p'), KeyError(), int), {b'k': frozenset()}]"),
]

# Places where python3.11 (which runs this script) and CPython 3.14 (the
# target) differ. None of the cases above hit a 3.11-vs-3.14 repr change:
#   - float, str, bytes, container, datetime and exception reprs are the same;
#   - pathlib.PosixPath is <class 'pathlib.PosixPath'> in both (3.13 showed
#     pathlib._local.PosixPath; 3.14 merged _local back into pathlib);
#   - the Unicode database is 14.0 in 3.11 and 16.0 in 3.14, so the str cases
#     use only characters whose category is the same in every version since
#     Unicode 14 (and in Go's 15.0 tables).
# sys.version_info is the running interpreter's; the case checks the shape, so
# 3.11's numbers are fine.
FIXUPS = {}

# ---------------------------------------------------------------------------
# Python value -> graph, as the worker encodes it (protocol 4 style arena:
# post-order nodes, shared sub-objects reuse their node, a reference back to
# an enclosing container becomes a cycle leaf).

SANDBOX_IDS = {}


def class_id(cls):
    if cls not in SANDBOX_IDS:
        SANDBOX_IDS[cls] = '%032x' % (0x5a000000000000000000000000000000 + len(SANDBOX_IDS) + 1)
    return SANDBOX_IDS[cls]


INSTANCE_IDS = {}


def instance_id(obj):
    if id(obj) not in INSTANCE_IDS:
        INSTANCE_IDS[id(obj)] = '%032x' % (0x1d000000000000000000000000000000 + len(INSTANCE_IDS) + 1)
    return INSTANCE_IDS[id(obj)]


def type_name(t):
    # The worker's spellings (see value/names.go): bare names for builtins and
    # for dataclasses' classes, module-qualified names for the rest.
    special = {
        json.JSONDecodeError: 'json.JSONDecodeError',
        pathlib.PosixPath: 'PosixPath',
        dataclasses.FrozenInstanceError: 'FrozenInstanceError',
        dataclasses.Field: 'Field',
    }
    if t in special:
        return special[t]
    if t.__module__ == 'builtins':
        return t.__name__
    if t.__module__ in ('datetime', '_io', 'collections', 'itertools', 're', 'functools', 'typing'):
        return t.__module__ + '.' + t.__name__
    raise ValueError('no worker name for %r' % t)


BUILTIN_FUNCS = {len: 'len', print: 'print', isinstance: 'isinstance', type: 'type', zip: 'zip',
                 enumerate: 'enumerate', open: 'open', object.__setattr__: 'object.__setattr__'}


class Enc:
    def __init__(self):
        self.nodes = []
        self.memo = {}      # id(obj) -> node id, for finished containers
        self.active = set()  # ids of containers being encoded

    def add(self, node):
        self.nodes.append(node)
        return len(self.nodes) - 1

    def enc(self, v):
        if isinstance(v, (list, dict, set, frozenset, tuple)) or dataclasses.is_dataclass(v) and not isinstance(v, type):
            if id(v) in self.active:
                if isinstance(v, list):
                    ph = '[...]'
                elif isinstance(v, dict):
                    ph = '{...}'
                elif isinstance(v, tuple):
                    ph = '(...)'
                else:
                    ph = '...'
                return self.add({'kind': 'cycle', 'text': ph})
            if id(v) in self.memo:
                return self.memo[id(v)]
            self.active.add(id(v))
            n = self.container(v)
            self.active.discard(id(v))
            self.memo[id(v)] = n
            return n
        return self.leaf(v)

    def container(self, v):
        if dataclasses.is_dataclass(v):
            cls = self.add({'kind': 'type', 'type_name': type(v).__name__, 'origin': 'sandbox',
                            'id': class_id(type(v)), 'dataclass': True})
            attrs = []
            for k, x in vars(v).items():
                attrs.append([self.add({'kind': 'str', 'text': k}), self.enc(x)])
            return self.add({'kind': 'class_instance', 'class': cls, 'instance_id': instance_id(v), 'attrs': attrs})
        if isinstance(v, tuple) and hasattr(type(v), 'n_sequence_fields'):  # structseq
            fields = {
                'version_info': ['major', 'minor', 'micro', 'releaselevel', 'serial'],
                'stat_result': ['st_mode', 'st_ino', 'st_dev', 'st_nlink', 'st_uid', 'st_gid',
                                'st_size', 'st_atime', 'st_mtime', 'st_ctime'],
            }[type(v).__name__]
            refs = [self.enc(x) for x in v[:len(fields)]]
            name = {'version_info': 'sys.version_info', 'stat_result': 'os.stat_result'}[type(v).__name__]
            return self.add({'kind': 'named_tuple', 'type_name': name, 'fields': fields, 'refs': refs})
        if isinstance(v, tuple) and hasattr(type(v), '_fields'):
            refs = [self.enc(x) for x in v]
            return self.add({'kind': 'named_tuple', 'type_name': type(v).__name__,
                             'fields': list(type(v)._fields), 'refs': refs})
        if isinstance(v, dict):
            refs = []
            for k, x in v.items():
                refs.append(self.enc(k))
                refs.append(self.enc(x))
            return self.add({'kind': 'dict', 'refs': refs})
        kind = {list: 'list', tuple: 'tuple', set: 'set', frozenset: 'frozenset'}[type(v)]
        refs = [self.enc(x) for x in v]
        return self.add({'kind': kind, 'refs': refs})

    def leaf(self, v):
        if isinstance(v, AsType):
            return self.add({'kind': 'type', 'type_name': type_name(v.t), 'origin': 'builtin'})
        for f, name in BUILTIN_FUNCS.items():
            if v is f:
                return self.add({'kind': 'builtin_function', 'text': name})
        if v is None:
            return self.add({'kind': 'none'})
        if v is ...:
            return self.add({'kind': 'ellipsis'})
        if v is NotImplemented:
            return self.add({'kind': 'not_implemented'})
        if isinstance(v, bool):
            return self.add({'kind': 'bool', 'bool': v})
        if isinstance(v, int):
            big = not (-2**63 <= v < 2**63)
            return self.add({'kind': 'bigint' if big else 'int', 'int': str(v)})
        if isinstance(v, float):
            import struct
            return self.add({'kind': 'float', 'bits': struct.pack('>d', v).hex()})
        if isinstance(v, str):
            return self.add({'kind': 'str', 'text': v})
        if isinstance(v, bytes):
            return self.add({'kind': 'bytes', 'hex': v.hex()})
        if isinstance(v, datetime.datetime):
            n = {'kind': 'datetime', 'date': [v.year, v.month, v.day],
                 'clock': [v.hour, v.minute, v.second, v.microsecond]}
            self.tzinfo(n, v.tzinfo)
            return self.add(n)
        if isinstance(v, datetime.date):
            return self.add({'kind': 'date', 'date': [v.year, v.month, v.day]})
        if isinstance(v, datetime.time):
            n = {'kind': 'time', 'clock': [v.hour, v.minute, v.second, v.microsecond]}
            self.tzinfo(n, v.tzinfo)
            if v.fold:
                n['fold'] = v.fold
            return self.add(n)
        if isinstance(v, datetime.timedelta):
            return self.add({'kind': 'timedelta', 'td': [v.days, v.seconds, v.microseconds]})
        if isinstance(v, datetime.timezone):
            n = {'kind': 'timezone'}
            if v is not utc:
                args = v.__getinitargs__()
                n['offset'] = int(args[0].total_seconds())
                if len(args) > 1:
                    n['tzname'] = args[1]
            return self.add(n)
        if isinstance(v, BaseException):
            n = {'kind': 'exception', 'exc_type': type_name(type(v))}
            if v.args:
                n['arg'] = v.args[0]
            return self.add(n)
        if isinstance(v, type):
            return self.add({'kind': 'type', 'type_name': type_name(v), 'origin': 'builtin'})
        if isinstance(v, pathlib.PurePath):
            return self.add({'kind': 'path', 'text': PATH_RAW.get(id(v), str(v))})
        if hasattr(v, 'mode') and hasattr(v, 'name') and hasattr(v, 'readable'):
            mode = v.mode
            return self.add({'kind': 'file_handle', 'path': v.name, 'mode': mode})
        return self.add({'kind': 'repr', 'text': repr(v)})

    def tzinfo(self, n, tzi):
        if tzi is None:
            return
        if tzi is utc:
            n['offset'] = 0
            return
        args = tzi.__getinitargs__()
        n['offset'] = int(args[0].total_seconds())
        if len(args) > 1:
            n['tzname'] = args[1]


def main():
    ns = dict(globals())
    ns.update(datetime=datetime, json=json, os=os, sys=sys, pathlib=pathlib, dataclasses=dataclasses,
              io=io, itertools=itertools, re=re, collections=collections)
    out = []
    seen = set()
    for name, expr in CASES:
        assert name not in seen, name
        seen.add(name)
        v = eval(expr, ns)
        enc = Enc()
        root = enc.enc(v)
        shown = v.t if isinstance(v, AsType) else v
        case = {'name': name, 'expr': expr, 'repr': repr(shown), 'str': str(shown), 'root': root, 'nodes': enc.nodes}
        case.update(FIXUPS.get(name, {}))
        out.append(case)
    doc = {
        'generator': 'scripts/gen-repr-golden.py',
        'python': sys.version.split()[0],
        'target': 'CPython 3.14 repr()/str()',
        'cases': out,
    }
    json.dump(doc, sys.stdout, ensure_ascii=True, indent=1)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
