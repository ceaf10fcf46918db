# Control characters and terminal escape sequences in exception messages and
# source lines: the worker CLI's output stream drops them (message/strip.go).
# (Not here: an escape sequence left open at the end, which swallows the
# CLI's final newline where the renderer keeps it.)
#### ctl_c0_all
raise ValueError(''.join(chr(c) for c in range(1, 32)) + '|')
#### ctl_del
raise ValueError('a' + chr(127) + 'b')
#### ctl_csi_color
raise ValueError('a' + chr(27) + '[1;31mred' + chr(27) + '[0m b')
#### ctl_csi_private
raise ValueError('a' + chr(27) + '[?25l' + 'b' + chr(27) + '[?25h')
#### ctl_csi_colon_param
raise ValueError('a' + chr(27) + '[38:5:196mX' + chr(27) + '[:1mY')
#### ctl_csi_intermediate
raise ValueError('a' + chr(27) + '[1 qb' + chr(27) + '[1 ;2mc')
#### ctl_csi_newline_inside
raise ValueError('a' + chr(27) + '[1' + chr(10) + '2mb')
#### ctl_csi_cancelled
raise ValueError('a' + chr(27) + '[12' + chr(24) + 'b' + chr(27) + '[3' + chr(26) + 'c')
#### ctl_osc_bel
raise ValueError('a' + chr(27) + ']0;title' + chr(7) + 'b')
#### ctl_osc_st
raise ValueError('a' + chr(27) + ']8;;http://x' + chr(27) + '\\link' + chr(27) + ']8;;' + chr(27) + '\\b')
#### ctl_osc_newline_inside
raise ValueError('a' + chr(27) + ']0;t' + chr(10) + 'x' + chr(7) + 'b')
#### ctl_dcs
raise ValueError('a' + chr(27) + 'Pq#0;2;0;0;0' + chr(27) + '\\b')
#### ctl_dcs_colon
raise ValueError('a' + chr(27) + 'P1:2qzz' + chr(27) + '\\b')
#### ctl_apc_pm_sos
raise ValueError('a' + chr(27) + '_apc' + chr(27) + '\\b' + chr(27) + '^pm' + chr(27) + '\\c' + chr(27) + 'Xsos' + chr(27) + '\\d')
#### ctl_esc_simple
raise ValueError('a' + chr(27) + '7b' + chr(27) + '8c' + chr(27) + 'Md' + chr(27) + '=e')
#### ctl_esc_intermediate
raise ValueError('a' + chr(27) + '(Bb' + chr(27) + '#8c' + chr(27) + ' !!d')
#### ctl_esc_at_end
raise ValueError('abc' + chr(27))
#### ctl_esc_then_newline
raise ValueError('a' + chr(27) + chr(10) + 'b')
#### ctl_esc_then_tab_in_csi
raise ValueError('a' + chr(27) + '[' + chr(9) + '1mb')
#### ctl_esc_then_unicode
raise ValueError('a' + chr(27) + 'é' + 'b' + chr(27) + '[é' + 'mc')
#### ctl_esc_esc
raise ValueError('a' + chr(27) + chr(27) + '[31mb')
#### ctl_csi_del_inside
raise ValueError('a' + chr(27) + '[1' + chr(127) + 'mb')
#### ctl_c1_chars
raise ValueError('a' + chr(0x9b) + '31m' + chr(0x9d) + 'x' + chr(0x85) + 'b')
#### ctl_bel_bs
raise ValueError('ring' + chr(7) + ' back' + chr(8) + chr(8) + 'x')
#### ctl_ff_vt_cr
raise ValueError('a' + chr(12) + 'b' + chr(11) + 'c' + chr(13) + 'd')
#### ctl_raw_in_string_literal
x = 'ab[31mc' + 1
#### ctl_raw_vt_in_source
x = 1
y = x.z
#### ctl_raw_control_token
x = 1
y = 
#### ctl_raw_esc_in_comment
x = 1 / 0  # [31mred[0m
#### ctl_raw_del_in_string
s = 'ab'
s.nope()
#### ctl_raw_bel_in_function
def f():
    return {}['']
f()
