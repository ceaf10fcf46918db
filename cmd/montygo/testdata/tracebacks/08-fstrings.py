# f-strings and formatting.
#### fstring-div
s = f'{1 / 0}'
#### fstring-attr
x = 1
s = f'{x.nope}'
#### fstring-subscript
d = {}
s = f'value: {d["k"]}'
#### fstring-format-spec-int-on-str
s = f'{"a":d}'
#### fstring-format-spec-bad
s = f'{1:zz}'
#### fstring-nested
x = 0
s = f'{f"{1 / x}"}'
#### fstring-conversion
class C:
    def __repr__(self):
        return 1 / 0
s = f'{C()!r}'
#### fstring-in-call
print(f'{int("x")}')
#### fstring-multiple-fields-second
a = 1
s = f'{a} and {a / 0}'
#### fstring-width-from-var
w = 'x'
s = f'{1:{w}}'
#### fstring-multiline-triple
s = f"""
line {1 / 0}
"""
#### fstring-in-function
def fmt(v):
    return f'<{v + 1}>'
fmt('a')
#### fstring-long-line
value = 0
message = f'the computed ratio of the first to the second is {100 / value:.2f} percent'
#### format-method-missing-key
'{a}'.format(b=1)
#### format-method-index
'{0} {1}'.format(1)
#### percent-format-missing
'%s %s' % (1,)
#### percent-format-type
'%d' % 'x'
#### format-builtin-bad-spec
format(1, 'q')
#### str-of-failing-repr-print
class C:
    def __str__(self):
        return {}['k']
print(C())
#### fstring-debug-equals
x = 0
s = f'{1 / x=}'
#### fstring-unicode
x = 'é'
s = f'ünïcödé {x + 1}'
