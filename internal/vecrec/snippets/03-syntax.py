Syntax errors of many kinds: the worker's text and location.
#### syntax_unclosed_paren_multiline
x = (1,
     2,
#### syntax_unclosed_bracket
[1, 2
#### syntax_unclosed_brace
{'a': 1
#### syntax_unclosed_string
s = 'abc
#### syntax_unclosed_triple_string
s = """abc
def
#### syntax_unexpected_indent_second
x = 1
    y = 2
#### syntax_unindent_mismatch
if True:
        x = 1
    y = 2
#### syntax_expected_indent
if True:
x = 1
#### syntax_assign_literal
1 = x
#### syntax_assign_call
f() = 1
#### syntax_augassign_literal
1 += 1
#### syntax_del_literal
del 1
#### syntax_trailing_operator
x = 1 +
#### syntax_double_operator
x = 1 +* 2
#### syntax_return_outside
return 5
#### syntax_break_outside
break
#### syntax_continue_outside
continue
#### syntax_await_outside_async
def f():
    await g()
#### syntax_yield_outside
yield 1
#### syntax_nonlocal_module
nonlocal x
#### syntax_duplicate_kwarg
f(a=1, a=2)
#### syntax_positional_after_keyword
f(a=1, 2)
#### syntax_default_before_nondefault
def f(a=1, b):
    pass
#### syntax_invalid_character
x = 1 $ 2
#### syntax_invalid_unicode_character
x = 1 → 2
#### syntax_print_statement
print 'hello'
#### syntax_else_without_if
else:
    pass
#### syntax_invalid_decimal_literal
x = 1abc
#### syntax_leading_zero
x = 0777
#### syntax_missing_colon
if True
    pass
#### syntax_def_missing_parens
def f:
    pass
#### syntax_lambda_default_order
lambda a=1, b: a
#### syntax_star_in_index_assign
*a = [1]
#### syntax_walrus_invalid_target
(a.b := 1)
#### syntax_fstring_unclosed_brace
f'{1'
#### syntax_fstring_empty_expression
f'{}'
#### syntax_fstring_single_close
f'}'
#### syntax_bad_escape_bytes
b'é'
#### syntax_unmatched_close
x = 1)
#### syntax_mismatched_brackets
x = (1]
#### syntax_keyword_as_name
class = 1
#### syntax_error_after_unicode
s = '日本語🎉'; x = (
#### syntax_error_on_wide_line
x = '日本語' +
#### syntax_error_tab_indented
if True:
	x = 1 +
#### syntax_error_line_five
a = 1
b = 2
c = 3
d = 4
e = = 5
#### syntax_only_whitespace_and_error
   
)
#### syntax_import_star_in_function
def f():
    from math import *
#### syntax_try_without_except
try:
    pass
x = 1
#### syntax_match_statement
match x:
    case 1:
        pass
#### syntax_global_after_use
def f():
    x = 1
    global x
#### syntax_nul_byte
x = 1 
#### syntax_unsupported_class_inheritance
class A(Exception):
    pass
#### syntax_unsupported_yield
def g():
    yield 1
#### syntax_unsupported_import_module
import os.path as p
#### syntax_assign_to_keyword_none
None = 1
#### syntax_comprehension_target_literal
[x for 1 in y]
#### syntax_dict_missing_value
{'a': }
#### syntax_very_long_line_error
x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40 41]
