package value

import (
	"cmp"
	"reflect"
	"time"
)

// KeyConverts reports whether a Go map whose keys are of type t converts
// to a Python dict and back with its keys: an interface (each key decided
// by its dynamic type, as below), a bool, integer, float or string kind,
// a UUID or a type whose text is its key (encoding.TextMarshaler; a str),
// an array of bytes (bytes) or of key types (a tuple), and the date and
// time types Python hashes: time.Time, Date, DateTime, Time (datetime,
// date, time), TimeDelta (timedelta; time.Duration is an integer kind)
// and TimeZone (timezone). Any other key type (a pointer, a struct, a
// channel, a *time.Location) is refused with a *ConversionError by
// [FromGo] unless the map is empty: Python cannot hash the dict a struct
// becomes, and a pointer's identity, which is what makes a Go key, would
// not survive the trip. [ToGo] refuses those that are or hold a pointer
// or a channel alike, for the same reason, but decodes a named tuple or
// an instance key (both hashable in Python) into a struct key type, as
// into any struct.
func KeyConverts(t reflect.Type) bool {
	switch {
	case t == nil:
		return false
	case t.Kind() == reflect.Interface:
		return true
	case t == uuidType, textKey(t), bytesKey(t), dateKey(t):
		return true
	case tupleKey(t):
		return KeyConverts(t.Elem())
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// dateKey reports whether t is one of the date and time types that are
// map keys (see KeyConverts).
func dateKey(t reflect.Type) bool {
	return dateClass(t) >= 0
}

// dateClass numbers the Python class of a date or time key type, the
// first thing such keys are ordered by: datetime (time.Time and
// DateTime), date, time, timedelta, timezone; -1 for other types.
func dateClass(t reflect.Type) int {
	if t == timeType {
		return 0
	}
	switch specialTypes[t] {
	case spDateTime:
		return 0
	case spDate:
		return 1
	case spTime_:
		return 2
	case spTimeDelta:
		return 3
	case spTimeZone:
		return 4
	}
	return -1
}

// compareDateKeys orders two date or time keys: by class, then naive
// before aware, then in time (instants for aware values), then field by
// field, so that two keys compare equal only when they convert to the
// same node. The caller orders equal keys of different Go types by type
// name.
func compareDateKeys(a, b reflect.Value) int {
	ca, cb := dateClass(a.Type()), dateClass(b.Type())
	if ca != cb {
		return cmp.Compare(ca, cb)
	}
	switch ca {
	case 0:
		return compareDateTimes(asDateTime(a), asDateTime(b))
	case 1:
		x, y := a.Interface().(Date), b.Interface().(Date)
		return cmpAll(cmp.Compare(x.Year, y.Year), cmp.Compare(x.Month, y.Month), cmp.Compare(x.Day, y.Day))
	case 2:
		x, y := a.Interface().(Time), b.Interface().(Time)
		c := cmpAware(x.Offset, y.Offset)
		if c == 0 && x.Offset != nil {
			c = cmp.Compare(timeOfDayMicros(x)-int64(*x.Offset)*1_000_000, timeOfDayMicros(y)-int64(*y.Offset)*1_000_000)
		}
		return cmpAll(c, cmp.Compare(x.Hour, y.Hour), cmp.Compare(x.Minute, y.Minute), cmp.Compare(x.Second, y.Second),
			cmp.Compare(x.Microsecond, y.Microsecond), cmpPtr(x.Offset, y.Offset), cmpPtr(x.TZName, y.TZName),
			cmp.Compare(x.Fold, y.Fold))
	case 3:
		x, y := a.Interface().(TimeDelta), b.Interface().(TimeDelta)
		xd, xs, xu := normTimeDelta(int64(x.Days), int64(x.Seconds), int64(x.Microseconds))
		yd, ys, yu := normTimeDelta(int64(y.Days), int64(y.Seconds), int64(y.Microseconds))
		return cmpAll(cmp.Compare(xd, yd), cmp.Compare(xs, ys), cmp.Compare(xu, yu),
			cmp.Compare(x.Days, y.Days), cmp.Compare(x.Seconds, y.Seconds))
	}
	x, y := a.Interface().(TimeZone), b.Interface().(TimeZone)
	return cmpAll(cmp.Compare(x.Offset, y.Offset), cmpPtr(x.Name, y.Name))
}

// asDateTime returns the DateTime a datetime key converts to.
func asDateTime(v reflect.Value) DateTime {
	if tm, ok := v.Interface().(time.Time); ok {
		return timeDateTime(tm)
	}
	return v.Interface().(DateTime)
}

// compareDateTimes orders datetimes: naive before aware, aware ones by
// instant, then field by field.
func compareDateTimes(x, y DateTime) int {
	c := cmpAware(x.Offset, y.Offset)
	if c == 0 && x.Offset != nil {
		c = dateTimeInstant(x).Compare(dateTimeInstant(y))
	}
	return cmpAll(c, cmp.Compare(x.Year, y.Year), cmp.Compare(x.Month, y.Month), cmp.Compare(x.Day, y.Day),
		cmp.Compare(x.Hour, y.Hour), cmp.Compare(x.Minute, y.Minute), cmp.Compare(x.Second, y.Second),
		cmp.Compare(x.Microsecond, y.Microsecond), cmpPtr(x.Offset, y.Offset), cmpPtr(x.TZName, y.TZName))
}

// dateTimeInstant returns the instant of an aware datetime (out of range
// fields normalized as time.Date does: only an order is wanted).
func dateTimeInstant(d DateTime) time.Time {
	t := time.Date(int(d.Year), time.Month(d.Month), int(d.Day), int(d.Hour), int(d.Minute), int(d.Second),
		int(d.Microsecond)*1000, time.UTC)
	return t.Add(-time.Duration(*d.Offset) * time.Second)
}

func timeOfDayMicros(t Time) int64 {
	return ((int64(t.Hour)*60+int64(t.Minute))*60+int64(t.Second))*1_000_000 + int64(t.Microsecond)
}

// cmpAware orders naive (nil offset) before aware.
func cmpAware(x, y *int32) int {
	return cmp.Compare(boolInt(x != nil), boolInt(y != nil))
}

// cmpPtr orders nil first, then by the values pointed to.
func cmpPtr[T cmp.Ordered](x, y *T) int {
	switch {
	case x == nil || y == nil:
		return cmp.Compare(boolInt(x != nil), boolInt(y != nil))
	}
	return cmp.Compare(*x, *y)
}

// cmpAll returns the first of cs that is not 0.
func cmpAll(cs ...int) int {
	for _, c := range cs {
		if c != 0 {
			return c
		}
	}
	return 0
}
