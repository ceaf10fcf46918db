package session

import "testing"

// Every error type of the package describes itself as a zero value (a
// caller's own errors.As target, printed before it was filled, or a test
// double): before, a zero *InvalidRequestError panicked in Error.
func TestZeroErrorsDescribeThemselves(t *testing.T) {
	for _, e := range []error{
		&PythonError{}, &TypeCheckError{}, &SuspensionLimitError{}, &RequestTooLargeError{},
		&InvalidRequestError{}, &VersionMismatchError{}, &UnknownVersionError{}, &TimeoutError{},
		&StartTimeoutError{}, &CanceledError{}, &ProtocolError{}, &HostObjectLimitError{},
		&DisconnectedError{}, &RemoteCrashError{}, &ShutdownError{},
	} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("zero %T: Error panicked: %v", e, p)
				}
			}()
			_ = e.Error()
			_ = Survives(e)
		}()
	}
	if got := (&InvalidRequestError{}).Error(); got != "invalid request" {
		t.Errorf("zero InvalidRequestError says %q", got)
	}
}
