package pool

// PickAfterRelease is the redial choice of s (its resumeTo: the URL, its
// dial options left out), as a resume racing with s's Close or Destroy
// may make it once s is released.
func PickAfterRelease(s *Session) string {
	url, _ := s.pool.resumeTo(s.ref)
	return url
}
