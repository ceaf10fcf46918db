package pool

// PickAfterRelease is the redial Pick of s (its resumeTo), as a resume
// racing with s's Close or Destroy may call it once s is released.
func PickAfterRelease(s *Session) string { return s.pool.resumeTo(s.ref) }
