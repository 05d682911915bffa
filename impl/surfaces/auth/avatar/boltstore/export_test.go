package boltstore

// Reads is how many pictures s has read out of its file.
func Reads(s *Store) int64 { return s.reads.Load() }
