Each snippet ends with (x, str(x)): value's Str checked against the sandbox's str.
#### str_float_various
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = [0.1, 1e16, 1e-05, -0.0, float('inf'), float('nan'), 1.5e300, 123.0]
(x, str(x))
#### str_int_big
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = -(2 ** 200)
(x, str(x))
#### str_bytes_quotes
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = b'it\'s "q" \x00\xff'
(x, str(x))
#### str_datetime_naive
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = datetime(2024, 1, 2, 3, 4, 5)
(x, str(x))
#### str_datetime_micro_aware
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=timezone(timedelta(hours=-5, minutes=-30)))
(x, str(x))
#### str_datetime_utc
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = datetime(1, 1, 1, tzinfo=timezone.utc)
(x, str(x))
#### str_date
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = date(5, 6, 7)
(x, str(x))
#### str_time_micro
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = time(1, 2, 3, 40)
(x, str(x))
#### str_time_aware
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = time(23, 0, tzinfo=timezone(timedelta(hours=2)))
(x, str(x))
#### str_timedelta_neg
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = timedelta(days=-3, seconds=5, microseconds=7)
(x, str(x))
#### str_timedelta_big
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = timedelta(days=999999, hours=23, microseconds=1)
(x, str(x))
#### str_timedelta_plural
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = [timedelta(days=1), timedelta(days=2), timedelta(days=-1)]
(x, str(x))
#### str_timezone_utc
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = timezone.utc
(x, str(x))
#### str_timezone_offset
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = timezone(timedelta(hours=-3, minutes=-15))
(x, str(x))
#### str_timezone_named
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = timezone(timedelta(hours=1), 'CET')
(x, str(x))
#### str_timezone_seconds
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = timezone(timedelta(seconds=3661))
(x, str(x))
#### str_exception_msg
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = ValueError('bad \n thing')
(x, str(x))
#### str_exception_empty
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = KeyError()
(x, str(x))
#### str_keyerror_msg
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = KeyError('k')
(x, str(x))
#### str_path
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = Path('/a/b/../é')
(x, str(x))
#### str_none_bool
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = [None, True, ...]
(x, str(x))
#### str_tuple_nested
from datetime import datetime, date, time, timedelta, timezone
from pathlib import Path
x = (1, 'a', (b'x',), {'k': 1.0})
(x, str(x))
