package mongostore

// Reads is how many pictures s has downloaded.
func Reads(s *Store) int64 { return s.reads.Load() }
