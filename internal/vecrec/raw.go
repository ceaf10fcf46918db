//go:build unix

package main

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/message"
)

// Hand-written protobuf for the raw cases: frames our encoder would not
// write (non-minimal or out-of-range varints, repeated fields, unknown
// fields, bad wire types), to record how the worker reads them.

func fLen(num protowire.Number, b []byte) []byte {
	out := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(out, b)
}

func fStr(num protowire.Number, s string) []byte { return fLen(num, []byte(s)) }

func fVar(num protowire.Number, v uint64) []byte {
	out := protowire.AppendTag(nil, num, protowire.VarintType)
	return protowire.AppendVarint(out, v)
}

// fVarRaw writes a key and the given varint bytes as they are.
func fVarRaw(num protowire.Number, raw ...byte) []byte {
	return append(protowire.AppendTag(nil, num, protowire.VarintType), raw...)
}

func fF64(num protowire.Number, bits uint64) []byte {
	out := protowire.AppendTag(nil, num, protowire.Fixed64Type)
	return binary.LittleEndian.AppendUint64(out, bits)
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// rawFeedObj feeds code with one input v holding the MontyObject body obj.
func rawFeedObj(code string, obj []byte) step {
	return rawFeedBody(cat(fStr(1, code), fLen(2, cat(fStr(1, "v"), fLen(2, obj)))))
}

// rawFeedBody sends a Feed with the given body.
func rawFeedBody(body []byte) step {
	return rawFrame(message.KindFeed, fLen(3, body))
}

// rawFrame sends b as one whole request frame.
func rawFrame(kind message.RequestKind, b []byte) step {
	return func(*message.ChildEvent) *message.ParentRequest {
		return req(&rawRequest{kind: kind, b: b})
	}
}

func rawCases() []kase {
	var out kases
	add := out.add
	const echo = "(v, repr(v))"
	date := func(parts ...[]byte) []byte { return fLen(17, cat(parts...)) }
	ymd := cat(fVar(1, 2024), fVar(2, 2), fVar(3, 29))

	// Varint widths.
	add("widthx_date_year_nonminimal_varint", "Date.year 2024 as a 10-byte varint", echo,
		rawFeedObj(echo, date(fVarRaw(1, 0xe8, 0x8f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), fVar(2, 1), fVar(3, 1))))
	add("widthx_date_month_over_u32", "Date.month 2**32 + 1 (a uint32 read from a wider varint)", echo,
		rawFeedObj(echo, date(fVar(1, 2024), fVar(2, 1<<32+1), fVar(3, 1))))
	add("widthx_date_year_over_i32", "Date.year 2**32 + 2024 (an int32 read from a wider varint)", echo,
		rawFeedObj(echo, date(fVar(1, 1<<32+2024), fVar(2, 1), fVar(3, 1))))
	add("widthx_timezone_offset_unsigned_5byte", "TimeZone.offset_seconds -3600 as a 5-byte varint (not sign-extended)", echo,
		rawFeedObj(echo, fLen(21, fVar(1, uint64(uint32(0xfffff1f0))))))
	add("widthx_timezone_offset_int32_min", "TimeZone.offset_seconds -2**31", echo,
		rawFeedObj(echo, fLen(21, fVar(1, minInt32Varint))))
	add("widthx_timedelta_days_i32_max", "TimeDelta.days 2**31 - 1", echo,
		rawFeedObj(echo, fLen(20, fVar(1, math.MaxInt32))))
	add("widthx_timedelta_negative_seconds", "TimeDelta.seconds -1 (not normalised)", echo,
		rawFeedObj(echo, fLen(20, cat(fVar(1, 1), fVar(2, math.MaxUint64)))))
	add("widthx_timedelta_micros_over", "TimeDelta.microseconds 1000000 (not normalised)", echo,
		rawFeedObj(echo, fLen(20, fVar(3, 1000000))))
	add("widthx_int_sint64_min", "MontyObject.int -2**63 (zigzag all ones)", echo,
		rawFeedObj(echo, fVar(5, math.MaxUint64)))
	add("widthx_int_sint64_max", "MontyObject.int 2**63 - 1", echo,
		rawFeedObj(echo, fVar(5, math.MaxUint64-1)))
	add("widthx_int_varint_11_bytes", "MontyObject.int as an 11-byte varint", echo,
		rawFeedObj(echo, fVarRaw(5, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00)))
	add("widthx_int_varint_10th_byte_high", "MontyObject.int as a 10-byte varint whose last byte is 0x02", echo,
		rawFeedObj(echo, fVarRaw(5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02)))
	add("widthx_bool_two", "MontyObject.boolean with the varint 2", echo, rawFeedObj(echo, fVar(4, 2)))
	add("widthx_bool_huge", "MontyObject.boolean with the varint 2**63", echo, rawFeedObj(echo, fVar(4, 1<<63)))
	add("widthx_bool_zero_explicit", "MontyObject.boolean false written explicitly", echo, rawFeedObj(echo, fVar(4, 0)))
	add("widthx_float_nan_payload", "MontyObject.float a NaN with a payload and the sign bit", echo,
		rawFeedObj(echo, fF64(7, 0xfff0000000000123)))
	add("widthx_float_signalling_nan", "MontyObject.float a signalling NaN", echo,
		rawFeedObj(echo, fF64(7, 0x7ff0000000000001)))
	add("widthx_float_as_varint", "MontyObject.float sent with the varint wire type", echo,
		rawFeedObj(echo, fVar(7, 1)))
	add("widthx_time_fold_two", "Time.fold 2", echo, rawFeedObj(echo, fLen(18, cat(fVar(1, 1), fVar(7, 2)))))
	add("widthx_time_second_60", "Time.second 60", echo, rawFeedObj(echo, fLen(18, fVar(3, 60))))
	add("widthx_datetime_feb_30", "DateTime 2023-02-30", echo,
		rawFeedObj(echo, fLen(19, cat(fVar(1, 2023), fVar(2, 2), fVar(3, 30)))))
	add("widthx_datetime_micro_1e6", "DateTime.microsecond 1000000", echo,
		rawFeedObj(echo, fLen(19, cat(fVar(1, 2023), fVar(2, 1), fVar(3, 1), fVar(7, 1000000)))))
	add("widthx_date_month_zero", "Date.month 0", echo, rawFeedObj(echo, date(fVar(1, 2024), fVar(3, 1))))
	add("widthx_date_year_10000", "Date.year 10000", echo, rawFeedObj(echo, date(fVar(1, 10000), fVar(2, 1), fVar(3, 1))))
	add("widthx_bigint_leading_zero_bytes", "BigInt.magnitude with zero bytes at its high end", echo,
		rawFeedObj(echo, fLen(6, fLen(2, []byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0}))))
	add("widthx_bigint_fits_i64_negative", "BigInt -5 (fits an int)", echo,
		rawFeedObj(echo, fLen(6, cat(fVar(1, 1), fLen(2, []byte{5})))))
	add("widthx_bigint_min_i64", "BigInt -2**63 (fits an int exactly)", echo,
		rawFeedObj(echo, fLen(6, cat(fVar(1, 1), fLen(2, []byte{0, 0, 0, 0, 0, 0, 0, 0x80})))))
	add("widthx_bigint_2_63", "BigInt 2**63 (just past an int)", echo,
		rawFeedObj(echo, fLen(6, fLen(2, []byte{0, 0, 0, 0, 0, 0, 0, 0x80}))))
	add("widthx_filehandle_position_huge", "FileHandle.position 2**64 - 1", echo,
		rawFeedObj(echo, fLen(28, cat(fStr(1, "/x"), fStr(2, "r"), fVar(3, math.MaxUint64)))))
	add("widthx_type_origin_unknown_enum", "Type.origin 7 (no such origin)", echo,
		rawFeedObj(echo, fLen(23, cat(fStr(1, "int"), fVar(3, 7)))))
	add("widthx_type_origin_negative_enum", "Type.origin -1", echo,
		rawFeedObj(echo, fLen(23, cat(fStr(1, "int"), fVar(3, math.MaxUint64)))))

	// Repeated and merged fields.
	add("presencex_date_year_twice", "Date.year written twice: the last wins", echo,
		rawFeedObj(echo, date(fVar(1, 1999), ymd)))
	add("presencex_object_two_arms", "A MontyObject with an int then a str arm", echo,
		rawFeedObj(echo, cat(fVar(5, 2), fStr(8, "s"))))
	add("presencex_object_date_twice_merge", "A MontyObject whose date arm comes twice, merged", echo,
		rawFeedObj(echo, cat(date(fVar(1, 2024)), date(fVar(2, 3), fVar(3, 4)))))
	add("presencex_list_arm_twice", "A MontyObject whose list arm comes twice", echo,
		rawFeedObj(echo, cat(fLen(11, fLen(1, fVar(5, 2))), fLen(11, fLen(1, fVar(5, 4))))))
	add("presencex_feed_code_twice", "Feed.code written twice", "",
		rawFeedBody(cat(fStr(1, "1 + 1"), fStr(1, "2 + 2"))))
	add("presencex_timezone_name_empty", "TimeZone.name present and empty", echo,
		rawFeedObj(echo, fLen(21, cat(fVar(1, 3600), fStr(2, "")))))
	add("presencex_exception_type_empty", "Exception.exc_type empty", echo,
		rawFeedObj(echo, fLen(22, fStr(2, "x"))))
	add("presencex_exception_arg_empty", "Exception.arg present and empty", echo,
		rawFeedObj(echo, fLen(22, cat(fStr(1, "ValueError"), fStr(2, "")))))
	add("presencex_none_with_unknown_field", "MontyObject.none with an unknown field inside", echo,
		rawFeedObj(echo, fLen(2, fVar(9, 1))))
	add("presencex_dict_pair_no_key", "A Dict pair with no key", echo,
		rawFeedObj(echo, fLen(14, fLen(1, fLen(2, fVar(5, 2))))))
	add("presencex_dict_pair_no_value", "A Dict pair with no value", echo,
		rawFeedObj(echo, fLen(14, fLen(1, fLen(1, fVar(5, 2))))))
	add("presencex_list_empty_item", "A list whose item is an empty MontyObject", echo,
		rawFeedObj(echo, fLen(11, fLen(1, nil))))
	add("presencex_namedtuple_fields_packed_twice", "NamedTuple field names and values interleaved", echo,
		rawFeedObj(echo, fLen(13, cat(fStr(1, "P"), fStr(2, "a"), fLen(3, fVar(5, 2)), fStr(2, "b"), fLen(3, fVar(5, 4))))))
	add("presencex_path_with_nul", "A Path holding a NUL", echo, rawFeedObj(echo, fStr(27, "/a\x00b")))
	add("presencex_filehandle_mode_bad", "FileHandle.mode 'rw'", echo,
		rawFeedObj(echo, fLen(28, cat(fStr(1, "/x"), fStr(2, "rw")))))
	add("presencex_function_no_name", "A Function with no name", "v",
		rawFeedObj("v", fLen(25, nil)))

	// Wire-level damage inside a valid frame.
	add("malformedx_invalid_utf8_code", "Feed.code with an invalid UTF-8 byte", "",
		rawFeedBody(fStr(1, "x = '\xff'")))
	add("malformedx_invalid_utf8_input_str", "A str input with an invalid UTF-8 byte", echo,
		rawFeedObj(echo, fStr(8, "a\xc3")))
	add("malformedx_invalid_utf8_input_name", "An input name with an invalid UTF-8 byte", "1",
		rawFeedBody(cat(fStr(1, "1"), fLen(2, cat(fStr(1, "v\xff"), fLen(2, fVar(5, 2)))))))
	add("malformedx_surrogate_utf8_str", "A str input holding a UTF-8-encoded surrogate (ED A0 80)", echo,
		rawFeedObj(echo, fStr(8, "\xed\xa0\x80")))
	add("malformedx_field_number_zero", "A Feed field with number 0", "",
		rawFeedBody(cat(fStr(1, "1"), []byte{0x00, 0x01})))
	add("malformedx_wire_type_6", "A Feed field with wire type 6", "",
		rawFeedBody(cat(fStr(1, "1"), []byte{0x46, 0x01})))
	add("malformedx_group_skipped", "An unknown group field in a Feed, skipped", "",
		rawFeedBody(cat(fStr(1, "1 + 2"), []byte{0x7b, 0x08, 0x01, 0x7c})))
	add("malformedx_group_unterminated", "An unknown group field with no end", "",
		rawFeedBody(cat(fStr(1, "1"), []byte{0x7b, 0x08, 0x01})))
	add("malformedx_end_group_alone", "An end-group tag with no group", "",
		rawFeedBody(cat(fStr(1, "1"), []byte{0x7c})))
	add("malformedx_fixed32_truncated", "An unknown fixed32 field cut short", "",
		rawFeedBody(cat(fStr(1, "1"), []byte{0x7d, 0x01, 0x02})))
	add("malformedx_unknown_fixed64_skipped", "An unknown fixed64 field in a MontyObject, skipped", echo,
		rawFeedObj(echo, cat([]byte{0xf9, 0x01}, make([]byte, 8), fVar(5, 6))))
	add("malformedx_key_varint_overlong", "A key written as a 6-byte varint", "",
		rawFeedBody([]byte{0x8a, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01, 0x31}))
	add("malformedx_length_overflows", "A length that runs past the frame inside an input", echo,
		rawFeedBody(cat(fStr(1, echo), []byte{0x12, 0x7f, 0x0a, 0x01, 'v'})))
	add("malformedx_nested_list_depth_120", "An input list nested 120 deep", "len(repr(v))",
		rawFeedObj("len(repr(v))", nestedList(120)))
	add("malformedx_nested_list_depth_101", "An input list nested 101 deep", "len(repr(v))",
		rawFeedObj("len(repr(v))", nestedList(101)))
	add("malformedx_nested_list_depth_99", "An input list nested 99 deep", "len(repr(v))",
		rawFeedObj("len(repr(v))", nestedList(99)))
	return out
}

// nestedList is a MontyObject of lists n deep around an int.
func nestedList(n int) []byte {
	b := fVar(5, 2)
	for range n {
		b = fLen(11, fLen(1, b))
	}
	return b
}

// minInt32Varint is -2**31 as protobuf writes an int32: sign-extended to
// 64 bits.
var minInt32Varint = func() uint64 { v := int64(math.MinInt32); return uint64(v) }()
