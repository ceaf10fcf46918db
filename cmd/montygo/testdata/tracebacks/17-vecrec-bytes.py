# Sources with unusual bytes: CR-only and mixed line endings, a BOM, form
# feeds, vertical tabs, tabs, invisible characters in the failing line.
#### sourcex_cr_only
x = 1y = x / 0
#### sourcex_cr_only_three_lines
a = 1b = 2c = a / (b - 2)
#### sourcex_crlf_error
x = 1
y = 2
z = x / 0

#### sourcex_crlf_in_function
def f():
    return {}['k']
f()
#### sourcex_mixed_endings
a = 1
b = 2
c = 3d = a / 0
#### sourcex_bom
﻿x = 1
x / 0
#### sourcex_form_feed_indent
x = 1
x.y
#### sourcex_form_feed_mid_line
x = 1
y = x.z
#### sourcex_vertical_tab
x = 1
y = x.z
#### sourcex_tab_caret
if True:
		x = None + 1
#### sourcex_syntax_error_after_cr
x = 1y = (
#### sourcex_syntax_error_crlf
x = 1
y = (

#### sourcex_trailing_whitespace_error
x = 1 / 0   	  
#### sourcex_nbsp_in_string
s = 'a b' + 1
#### sourcex_zero_width_in_string
s = 'a​b‍' + 1
#### sourcex_rtl_in_string
s = '‮abc‬' + 1
